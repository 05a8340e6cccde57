"""mma --check picks the model of the instruction the data names: the H100
run's case folders (docs/hardware/) carry an instruction.txt per type
folder, so `--model hopper` replays mma.sync cases through hopper and wgmma
cases through hopper-wgmma; a preset that models another instruction is one
line of bad input, not a FAIL; --preset still compares anyway; and folders
without the file (the published data, older runs) behave as before it."""
import pathlib
import shutil

import pytest

from usage_error import assert_usage_error

ROOT = pathlib.Path(__file__).resolve().parents[2]
H100 = ROOT / "docs" / "hardware" / "NVIDIA-H100-80GB-HBM3"


@pytest.mark.parametrize("folder,cases,preset", [
    ("cases/mma-fp32", 9728, "hopper"), ("cases/mma-fp16", 6656, "hopper"),
    ("cases/wgmma-fp32", 7680, "hopper-wgmma"), ("cases/wgmma-fp16", 4608, "hopper-wgmma"),
    ("cases-seed2/mma-fp32", 5120, "hopper"), ("cases-seed2/mma-fp16", 5120, "hopper")])
def test_architecture_picks_the_instruction_the_files_name(fmtcheck, folder, cases, preset):
    # Before instruction files, "hopper" meant the published data's
    # instruction (wgmma for FP8 into fp32, C = 0): mma-fp32 gave FAIL 5637/9728.
    r = fmtcheck("mma", "--check", H100 / folder, "--model", "hopper", "--show", 0)
    out = r.stdout.decode()
    assert r.returncode == 0, out + r.stderr.decode()
    assert out.endswith(f"PASS: {cases}/{cases} bit matches over {out.count('bit matches  [')} files\n")
    assert out.count(f"bit matches  [{preset} ") == out.count("bit matches  [")
    assert "C = 0" not in out


@pytest.mark.parametrize("folder,model,words", [
    ("cases/mma-fp32", "hopper-wgmma", ["bf16/instruction.txt", "computed by mma.sync", "--model hopper-wgmma models wgmma",
                                        "use --model hopper,", "--preset"]),
    ("cases/wgmma-fp32", "ampere", ["computed by wgmma", "which ampere does not have: use --model hopper"]),
    ("cases/mma-fp16", "blackwell-tcgen05", ["computed by mma.sync", "models tcgen05.mma", "use --model blackwell,"]),
])
def test_a_model_of_another_instruction_is_one_line(fmtcheck, folder, model, words):
    assert_usage_error(fmtcheck("mma", "--check", H100 / folder, "--model", model, "--show", 0), *words)


def test_preset_compares_another_instructions_model_anyway(fmtcheck):
    r = fmtcheck("mma", "--check", H100 / "cases/mma-fp32", "--model", "hopper-wgmma", "--preset", "--show", 0)
    out = r.stdout.decode()
    assert r.returncode == 1, out + r.stderr.decode()
    assert out.count("bit matches  [hopper-wgmma ") == 5 and out.startswith("  bf16") and "\nFAIL: " in out


def test_folders_without_the_file_behave_as_before(fmtcheck, tmp_path):
    # The e4m3 mma.sync cases without their instruction.txt: "hopper" takes
    # them for the published data's wgmma (zero C) again, and --preset is
    # how such a folder names its preset, as before.
    shutil.copytree(H100 / "cases/mma-fp32/e4m3", tmp_path / "cases" / "e4m3",
                    ignore=shutil.ignore_patterns("instruction.txt"))
    r = fmtcheck("mma", "--check", tmp_path / "cases", "--model", "hopper", "--show", 0)
    out = r.stdout.decode()
    assert r.returncode == 1 and "[hopper-wgmma " in out and ", C = 0]" in out, out
    r = fmtcheck("mma", "--check", tmp_path / "cases", "--model", "hopper", "--preset", "--show", 0)
    assert r.returncode == 0 and r.stdout.decode().endswith("PASS: 2560/2560 bit matches over 1 files\n")


def test_committed_instruction_files_name_their_d_files(fmtcheck):
    # Every type folder of the H100 run has one, naming its one D file and
    # the instruction of the folder's family (mma-ACC: mma.sync, wgmma-ACC: wgmma).
    folders = [d for d in H100.glob("cases*/*mma-*/*") if d.is_dir()]
    assert len(folders) == 20
    for d in folders:
        lines = [l for l in (d / "instruction.txt").read_text().splitlines() if not l.startswith("#")]
        (d_file, mnemonic), = [l.split() for l in lines]
        family, out = d.parent.name.split("-")
        assert d_file == f"d_H100_{out}.txt" and (d / d_file).is_file()
        ptx_type = {"fp16": "f16"}.get(d.name, d.name)
        assert mnemonic.startswith({"mma": "mma.sync.", "wgmma": "wgmma."}[family]) and f".{ptx_type}." in mnemonic
