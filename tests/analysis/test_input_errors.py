"""Every bad input: exit 2, one stderr line naming the file and the problem,
and no output file (or temporary file) left behind."""
import json
import os
import pathlib
import shutil
import struct
import subprocess
import tempfile

import numpy as np
import pytest

from clean_failure import assert_clean_failure


def npy_bytes(array, version=(1, 0)):
    import io
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def npy_with_header(header, data=b""):
    """A .npy file with this header text, padded as numpy pads it (version 2 when the header needs it)."""
    text = header.encode()
    if len(text) < 65000:
        text += b" " * (63 - (10 + len(text)) % 64) + b"\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data
    text += b" " * (63 - (12 + len(text)) % 64) + b"\n"
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(text)) + text + data


def safetensors_bytes(header, data=b""):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


GOOD = np.arange(8, dtype=np.float32)
GOOD_NPY = npy_bytes(GOOD)
GOOD_ST = safetensors_bytes({"w": {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}}, GOOD.tobytes())

CASES = {
    "npy_truncated": ("x.npy", GOOD_NPY[:-4], [], "shape and size disagree"),
    "npy_header_truncated": ("x.npy", GOOD_NPY[:40], [], "truncated"),
    "npy_bad_magic": ("x.npy", b"\x93NUMPX" + GOOD_NPY[6:], [], "bad magic"),
    "npy_bad_version": ("x.npy", GOOD_NPY[:6] + b"\x07" + GOOD_NPY[7:], [], "version"),
    "npy_no_shape": ("x.npy", GOOD_NPY.replace(b"'shape'", b"'shapf'"), [], "no 'shape'"),
    "npy_int_dtype": ("x.npy", npy_bytes(np.arange(4, dtype=np.int32)), [], "unsupported dtype '<i4'"),
    "npy_v1_no_dtype": ("x.npy", npy_bytes(np.zeros(4, dtype=np.uint8)).replace(b"|u1", b"|V1"), [], "pass --dtype"),
    "npy_extra_bytes": ("x.npy", GOOD_NPY + b"\0\0\0\0", [], "shape and size disagree"),
    "st_truncated": ("x.safetensors", GOOD_ST[:-8], [], "outside"),
    "st_header_past_end": ("x.safetensors", struct.pack("<Q", 1000) + b"{}", [], "header runs past"),
    "st_bad_json": ("x.safetensors", struct.pack("<Q", 7) + b'{"w": 1' , [], "malformed safetensors header"),
    "st_unknown_dtype": ("x.safetensors", safetensors_bytes({"w": {"dtype": "F12", "shape": [8], "data_offsets": [0, 32]}}, GOOD.tobytes()), [], "unknown dtype 'F12'"),
    "st_shape_size": ("x.safetensors", safetensors_bytes({"w": {"dtype": "F32", "shape": [9], "data_offsets": [0, 32]}}, GOOD.tobytes()), [], "shape and size disagree"),
    "st_overlap": ("x.safetensors", safetensors_bytes({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                                      "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}, GOOD.tobytes()), [], "overlap"),
    "csv_not_number": ("x.csv", b"g\n1.5\nabc\n", [], "line 3: 'abc' is not a number"),
    "csv_empty_cell": ("x.csv", b"a,g\n1,2\n3,\n", ["--column", "g"], "line 3: empty cell"),
    "csv_no_column": ("x.csv", b"a,g\n1,2\n", ["--column", "h"], "no column 'h'"),
    "csv_empty": ("x.csv", b"", [], "empty CSV"),
    "raw_no_dtype": ("x.bin", GOOD.tobytes(), [], "pass --dtype"),
    "raw_unknown_dtype": ("x.bin", GOOD.tobytes(), ["--dtype", "float7"], "float7"),
    "raw_shape_size": ("x.bin", GOOD.tobytes(), ["--dtype", "fp32", "--shape", "3,3"], "shape and size disagree"),
    "raw_size": ("x.bin", GOOD.tobytes()[:-1], ["--dtype", "fp32"], "not a multiple"),
    # Empty files, huge or negative shapes, reversed offsets, bytes that are not UTF-8 (docs/bad-input.md).
    "npy_empty": ("x.npy", b"", [], "too short for a .npy header"),
    # 200000 bytes of dtype overflowed the stack of the header's regular expressions.
    "npy_huge_header": ("x.npy", npy_with_header("{'descr': '<" + "f" * 200000 + "', 'fortran_order': False, 'shape': (1,), }"),
                        [], "longer than numpy reads (10000)"),
    "npy_negative_shape": ("x.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-8,), }", GOOD.tobytes()),
                           [], "malformed shape '(-8,)'"),
    "npy_huge_dimension": ("x.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
                           [], "does not fit in 64 bits"),
    "npy_shape_wraps": ("x.npy", npy_with_header(f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({2**63}, 2), }}"),
                        [], "has more than 2^64 elements"),
    "st_empty": ("x.safetensors", b"", [], "too short for a safetensors header"),
    "st_negative_shape": ("x.safetensors", safetensors_bytes({"w": {"dtype": "F32", "shape": [-8], "data_offsets": [0, 32]}},
                                                             GOOD.tobytes()), [], "non-integer dimension"),
    "st_shape_wraps": ("x.safetensors", safetensors_bytes({"w": {"dtype": "F32", "shape": [2**63, 2], "data_offsets": [0, 0]}}),
                       [], "has more than 2^64 elements"),
    "st_offsets_reversed": ("x.safetensors", safetensors_bytes({"w": {"dtype": "F32", "shape": [2], "data_offsets": [16, 8]}},
                                                               GOOD.tobytes()), [], "lie outside"),
    "st_non_utf8": ("x.safetensors", GOOD_ST.replace(b'"w"', b'"\xff"'), [], "malformed safetensors header"),
    "csv_huge_column": ("x.csv", b"g\n1.5\n", ["--column", "99999999999999999999"], "no column '99999999999999999999'"),
    "raw_negative_shape": ("x.bin", GOOD.tobytes(), ["--dtype", "fp32", "--shape=-1,8"], "bad --shape"),
    "raw_huge_shape": ("x.bin", GOOD.tobytes(), ["--dtype", "fp32", "--shape", "99999999999999999999"], "does not fit in 64 bits"),
    "raw_shape_wraps": ("x.bin", b"", ["--dtype", "fp32", "--shape", "4294967296,4294967296"], "has more than 2^64 elements"),
    "raw_int_dtype": ("x.bin", GOOD.tobytes(), ["--dtype", "int8"], "int8"),
    "index_bad_json": ("x.safetensors.index.json", b'{"weight_map": {"w": ', [], "malformed checkpoint index"),
    "index_non_utf8": ("x.safetensors.index.json", b'{"weight_map": {"\xff": "a.safetensors"}}', [], "malformed checkpoint index"),
    "index_empty": ("x.safetensors.index.json", b"", [], "malformed checkpoint index"),
    "index_shard_in_folder": ("x.safetensors.index.json", b'{"weight_map": {"w": "../a.safetensors"}}', [], "is not a file name"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file(fmtcheck, tmp_path, case):
    name, content, args, message = CASES[case]
    (tmp_path / name).write_bytes(content)
    # A good file first: its results must not be written either.
    (tmp_path / "good.npy").write_bytes(GOOD_NPY)
    r = fmtcheck("analyze", tmp_path / "good.npy", tmp_path / name, *args, "--csv", tmp_path / "out.csv",
                 "--histogram-csv", tmp_path / "out_hist.csv", "--json", tmp_path / "out.json")
    assert_clean_failure(r, tmp_path, [] if case in ("raw_unknown_dtype", "raw_int_dtype", "raw_negative_shape", "raw_huge_shape") else [name], message)


def test_missing_path(fmtcheck, tmp_path):
    r = fmtcheck("analyze", tmp_path / "nope.npy", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["nope.npy"], "no such file")


def test_unreadable_path(fmtcheck, tmp_path):
    r = fmtcheck("analyze", tmp_path, "--dtype", "fp32", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, [str(tmp_path)], "not a regular file")


@pytest.mark.parametrize("args,message", [
    (["--scale", "pow2:x"], "bad --scale"), (["--scale", "amax:"], "bad --scale"), (["--scale-rule", "up"], "bad --scale-rule"),
    (["--block", "32", "--scale", "auto"], "cannot be combined"), (["--tensors", "("], "bad --tensors"),
    (["--tensors", "nomatch"], "no tensors"), (["--formats", "fp16,float7"], "float7"), (["--round", "up"], "bad --round")])
def test_bad_options(fmtcheck, tmp_path, args, message):
    (tmp_path / "good.npy").write_bytes(GOOD_NPY)
    r = fmtcheck("analyze", tmp_path / "good.npy", *args, "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, [], message)


def write_steps(folder, steps):
    folder.mkdir()
    for i in steps:
        np.save(folder / f"step_{i:04d}.npy", GOOD)


def test_trace_missing_step(fmtcheck, tmp_path):
    write_steps(tmp_path / "trace", [0, 1, 3])
    r = fmtcheck("scale", tmp_path / "trace", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["trace"], "step 2 is missing")


def test_trace_empty_folder_and_bad_manifest(fmtcheck, tmp_path):
    (tmp_path / "empty").mkdir()
    r = fmtcheck("scale", tmp_path / "empty", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["empty"], "no step files")
    (tmp_path / "m.txt").write_text("step_0000.npy\n")
    r = fmtcheck("scale", tmp_path / "m.txt", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["m.txt", "step_0000.npy"], "does not exist")
    r = fmtcheck("scale", tmp_path / "nothing", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["nothing"], "no such file")


def test_trace_bad_step_file(fmtcheck, tmp_path):
    write_steps(tmp_path / "trace", [0, 1])
    (tmp_path / "trace" / "step_0001.npy").write_bytes(GOOD_NPY[:-3])
    r = fmtcheck("scale", tmp_path / "trace", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["step_0001.npy"], "shape and size disagree")


@pytest.mark.parametrize("args,message", [(["--recipe", "fast"], "bad --recipe"), (["--format", "hybrid"], "hybrid applies"),
                                          (["--recipe", "delayed", "--history", "0"], "--history"),
                                          (["--amax-compute", "mean"], "bad --amax-compute"), (["--hysteresis", "0"], "--hysteresis")])
def test_scale_bad_options(fmtcheck, tmp_path, args, message):
    write_steps(tmp_path / "trace", [0])
    r = fmtcheck("scale", tmp_path / "trace", *args, "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, [], message)


# A folder where a file is expected, files that cannot be read, outputs that
# cannot be written, for every reader (docs/bad-input.md).

@pytest.mark.parametrize("name,message", [("x.npy", "not a regular file"), ("x.safetensors", "not a regular file"),
                                          ("x.csv", "not a regular file"), ("x.bin", "not a regular file")])
def test_folder_instead_of_file(fmtcheck, tmp_path, name, message):
    (tmp_path / name).mkdir()
    r = fmtcheck("analyze", tmp_path / name, "--dtype", "fp32", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, [name], message)


@pytest.fixture
def as_user(tmp_path):
    """A folder for unreadable files and unwritable folders, and a runner of
    the CLI as a user whom their modes stop: as root, whom file modes do not
    stop, the CLI runs as nobody (setpriv, util-linux) in a folder nobody can
    reach (pytest's own is private to root)."""
    if os.geteuid() != 0:
        yield tmp_path, []
        return
    if shutil.which("setpriv") is None:
        pytest.skip("running as root, whom chmod 000 does not stop, and setpriv (util-linux) is missing to run as nobody")
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    if run_as(prefix, "--version").returncode != 0:
        pytest.skip(f"running as root, whom chmod 000 does not stop, and nobody cannot run {os.environ['FMTCHECK_CLI']} "
                    "(a folder above it is private)")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="fmtcheck-as-nobody-"))
    folder.chmod(0o777)
    yield folder, prefix
    shutil.rmtree(folder)


def run_as(prefix, *args):
    return subprocess.run([*prefix, os.environ["FMTCHECK_CLI"], *map(str, args)], capture_output=True, text=True, timeout=300)


def good_partial(fmtcheck, folder):
    (folder / "good.npy").write_bytes(GOOD_NPY)
    assert fmtcheck("analyze", folder / "good.npy", "--partial", folder / "good.partial").returncode == 0
    (folder / "good.partial").chmod(0o644)
    return folder / "good.partial"


@pytest.mark.parametrize("name,content,message", [
    ("x.npy", GOOD_NPY, "Permission denied"), ("x.safetensors", GOOD_ST, "Permission denied"),
    ("x.csv", b"g\n1.5\n", "cannot open for reading"), ("x.bin", GOOD.tobytes(), "Permission denied"),
    ("x.safetensors.index.json", b'{"weight_map": {"w": "a.safetensors"}}', "cannot open the checkpoint index")])
def test_unreadable_file(as_user, name, content, message):
    folder, prefix = as_user
    (folder / name).write_bytes(content)
    (folder / name).chmod(0)
    r = run_as(prefix, "analyze", folder / name, "--dtype", "fp32", "--csv", folder / "out.csv")
    assert_clean_failure(r, folder, [name], message)


def test_unreadable_partial_trace_and_mma_files(fmtcheck, as_user):
    folder, prefix = as_user
    partial = good_partial(fmtcheck, folder)
    partial.chmod(0)
    assert_clean_failure(run_as(prefix, "merge", partial, "--csv", folder / "out.csv"), folder, ["good.partial"],
                         "cannot open the partial result")
    (folder / "m.txt").write_text("good.npy\n")
    (folder / "m.txt").chmod(0)
    assert_clean_failure(run_as(prefix, "scale", folder / "m.txt", "--csv", folder / "out.csv"), folder, ["m.txt"],
                         "cannot open for reading")
    cases = write_mma_cases(folder / "mma")
    (cases / "a_x_fp16.txt").chmod(0)
    assert_clean_failure(run_as(prefix, "mma", "--check", folder / "mma", "--model", "ampere"), folder, ["a_x_fp16.txt"],
                         "cannot read")
    # A case folder that cannot be listed: the command's own line, not a raw filesystem_error.
    cases.chmod(0)
    assert_clean_failure(run_as(prefix, "mma", "--check", folder / "mma", "--model", "ampere"), folder, ["fp16"],
                         "cannot read the folder")


@pytest.mark.parametrize("command", ["analyze", "analyze-partial", "merge", "scale"])
def test_unwritable_output_folder(fmtcheck, as_user, command):
    folder, prefix = as_user
    partial = good_partial(fmtcheck, folder)
    write_steps(folder / "trace", [0])
    (folder / "trace").chmod(0o755)
    (folder / "ro").mkdir()
    (folder / "ro").chmod(0o555)
    (folder / "file").write_text("")
    for out in [folder / "ro" / "out.csv", folder / "file" / "out.csv", folder / "missing" / "out.csv"]:
        args = {"analyze": ["analyze", folder / "good.npy", "--csv", out],
                "analyze-partial": ["analyze", folder / "good.npy", "--partial", out],
                "merge": ["merge", partial, "--json", out],
                "scale": ["scale", folder / "trace", "--csv", out]}[command]
        assert_clean_failure(run_as(prefix, *args), folder, [str(out)], "cannot write")
        assert not out.parent.is_dir() or list(out.parent.iterdir()) == []


# Partial result files (merge), scale traces and the tensor-core data files of mma --check.

@pytest.mark.parametrize("damage,message", [
    ("empty", "damaged partial result"), ("non_utf8", "damaged partial result"),
    ("float_position", "is not a count"), ("negative_count", "is not a count"), ("huge_best", "is not an int")])
def test_damaged_partial(fmtcheck, tmp_path, damage, message):
    partial = good_partial(fmtcheck, tmp_path)
    j = json.loads(partial.read_text())
    if damage == "float_position":
        j["histograms"][0]["position"] = 1e300
    elif damage == "negative_count":
        j["results"][0]["stats"][0] = -1
    elif damage == "huge_best":
        j["results"][0]["best"] = 1e300
    text = {"empty": b"", "non_utf8": json.dumps(j).replace('"good', '"\udcff', 1).encode("utf-8", "surrogateescape")}.get(
        damage, json.dumps(j).encode())
    partial.write_bytes(text)
    r = fmtcheck("merge", partial, "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["good.partial"], message)


def test_partial_folder(fmtcheck, tmp_path):
    (tmp_path / "x.partial").mkdir()
    r = fmtcheck("merge", tmp_path / "x.partial", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["x.partial"], "not a regular file")


def test_trace_step_number_too_large(fmtcheck, tmp_path):
    write_steps(tmp_path / "trace", [0])
    (tmp_path / "trace" / "step_99999999999999999999.npy").write_bytes(GOOD_NPY)
    r = fmtcheck("scale", tmp_path / "trace", "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["step_99999999999999999999.npy"], "does not fit in 64 bits")


def test_trace_manifest_name_too_long(fmtcheck, tmp_path):
    # A manifest entry longer than a file name may be (NAME_MAX, 255 bytes on
    # Linux): the system refuses to look it up; found by fuzz-trace.
    manifest = tmp_path / "trace.txt"
    manifest.write_text("l" * 300 + "\n")
    r = fmtcheck("scale", manifest, "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["trace.txt"], "File name too long")


def write_mma_cases(folder, a=None, b=None, c=None, d=None, instruction=None):
    """One fp16 case of K = 8 in mma --check's layout: the operands as
    float32 hex words, C and D as 32-digit binary lines; with `instruction`,
    the folder's instruction.txt."""
    one = "3f800000 " * 8 + "\n"
    zero = "0" * 32 + "\n"
    cases = folder / "fp16"
    cases.mkdir(parents=True)
    for name, text in [("a_x_fp16.txt", a), ("b_x_fp16.txt", b), ("c_x_fp32.txt", c), ("d_x_fp32.txt", d)]:
        (cases / name).write_text(text if text is not None else one if name[0] in "ab" else zero)
    if instruction is not None:
        (cases / "instruction.txt").write_text(instruction)
    return cases


@pytest.mark.parametrize("how,message", [
    ("truncated", "holds 8 values but"), ("malformed", "expected 8 base-16 digits, found '3f80zz00'"),
    ("empty", "holds no cases"), ("lying", "holds 2 results for 1 cases"), ("file_not_folder", "is not a folder"),
    ("name_too_long", "is not a folder: File name too long"),
    ("instruction_unknown", "d_x_fp32.txt names 'hmma.m8n8k4', an instruction fmtcheck has no model of"),
    ("instruction_malformed", "line 2: expected a D file and its instruction"),
    ("instruction_twice", "line 2: names d_x_fp32.txt twice"),
    ("instruction_no_such_d", "names d_y_fp32.txt, which is not in the folder"),
    ("instruction_mismatch", "d_x_fp32.txt was computed by wgmma, which ampere does not have: use --model hopper")])
def test_bad_mma_check_files(fmtcheck, tmp_path, how, message):
    mma = "d_x_fp32.txt mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32\n"
    files = {"truncated": {"b": "3f800000 " * 7}, "malformed": {"a": "3f80zz00 " + "3f800000 " * 7},
             "empty": {"c": ""}, "lying": {"d": "0" * 32 + "\n" + "0" * 32 + "\n"}, "file_not_folder": {},
             "name_too_long": {}, "instruction_unknown": {"instruction": "# comment\nd_x_fp32.txt hmma.m8n8k4\n"},
             "instruction_malformed": {"instruction": "# comment\nd_x_fp32.txt\n"},
             "instruction_twice": {"instruction": mma + mma},
             "instruction_no_such_d": {"instruction": mma.replace("d_x", "d_y")},
             "instruction_mismatch": {"instruction": "d_x_fp32.txt wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16\n"}}[how]
    write_mma_cases(tmp_path / "cases", **files)
    target = {"file_not_folder": tmp_path / "cases" / "fp16" / "a_x_fp16.txt",
              "name_too_long": tmp_path / ("c" * 300)}.get(how, tmp_path / "cases")
    r = fmtcheck("mma", "--check", target, "--model", "ampere")
    assert_clean_failure(r, tmp_path, [], message)
