"""analyze over arrays and the scaling replay over gradient dicts: every
measure against the independent numpy + ml_dtypes reference of
tests/analysis/oracle.py, and the same numbers as the CLI reading the same
data from files (one library routine serves both: these tests show the
arrays are read and labelled as the files are)."""
import json
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import fmtcheck
from conftest import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "analysis"))
import oracle  # noqa: E402  (tests/analysis/oracle.py: numpy + ml_dtypes, never fmtcheck)

FORMATS = ["fp16", "bf16", "e4m3", "e5m2"]
DATA = Path(__file__).resolve().parents[2] / "data"


def sample(n=20000, seed=7):
    rng = np.random.default_rng(seed)
    mag = np.exp2(rng.uniform(-30, 20, n)).astype(np.float32)
    sign = np.where(rng.random(n) < 0.5, -1, 1).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 465, 57344, 61440, 65504, 65520, 2.0**-24,
                        2.0**-25, 2.0**-9, 2.0**-10], np.float32)
    return np.concatenate([special, mag * sign])


def test_measures_match_numpy_and_ml_dtypes():
    x = sample()
    a = fmtcheck.analyze({"x": x}, FORMATS)
    for fmt in FORMATS:
        want = oracle.analyze(x, fmt)
        for name, value in want.items():
            got = a.measure("x", fmt, name)
            if name in ("mean_rel_error", "rms_rel_error"):
                assert got == pytest.approx(value, rel=1e-12, abs=0), (fmt, name)
            else:
                assert got == value, (fmt, name)
    assert a.histograms[0]["binades"] == {str(k): v for k, v in oracle.binades(x).items()} | {
        k: a.histograms[0]["binades"][k] for k in ("zero", "infinite", "not_a_number")}
    assert a.histograms[0]["binades"]["not_a_number"] == 1 and a.histograms[0]["binades"]["infinite"] == 2


@pytest.mark.parametrize("options", [dict(), dict(scale="auto"), dict(scale="amax:1", overflow="sat"),
                                     dict(block=32, scale_rule="ceil"), dict(round="sr", sr_bits=8, seed=5)],
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_same_results_as_the_cli(cli, tmp_path, options):
    with np.errstate(over="ignore"):
        h, b = sample(3000, 2).astype(np.float16), sample(3000, 3).astype(ml_dtypes.bfloat16)
    x = {"w": sample(), "g": (np.random.default_rng(1).standard_normal(70_000) * 1e-3).astype(np.float32), "h": h, "b": b,
         "d": np.random.default_rng(4).standard_normal(5000)}
    a = fmtcheck.analyze(x, FORMATS, **options)
    save_file({k: v for k, v in x.items() if k != "b"}, tmp_path / "t.safetensors")
    np.save(tmp_path / "b.npy", x["b"])
    args = []
    for key, value in options.items():
        args += ["--" + key.replace("_", "-"), value]
    if "block" in options:
        args += ["--block-csv", tmp_path / "blocks.csv"]
        a = fmtcheck.analyze(x, FORMATS, blocks=True, **options)
    run_cli(cli, "analyze", tmp_path / "t.safetensors", tmp_path / "b.npy", "--formats", ",".join(FORMATS), *args,
            "--json", tmp_path / "a.json")
    if "block" in options:
        import csv

        with open(tmp_path / "blocks.csv") as f:
            want_blocks = {(r["tensor"], r["format"], int(r["block"])): r for r in csv.DictReader(f)}
        assert len(want_blocks) == len(a.blocks)
        for b in a.blocks:
            want = want_blocks[(b["tensor"], b["format"], b["block"])]
            assert [str(v) for k, v in b.items() if k in ("start", "scale_log2", "values", "exact", "overflow")] == \
                [want[k] for k in ("start", "scale_log2", "values", "exact", "overflow")]
            assert (b["amax"], b["max_rel_error"]) == (float(want["amax"]), float(want["max_rel_error"]))
    want = json.loads((tmp_path / "a.json").read_text())
    assert a.policy == want["policy"]
    got_results = {(r["tensor"], r["format"]): (r["scale"], r["measures"]) for r in a.results}
    want_results = {(r["tensor"], r["format"]): (r["scale"], r["measures"]) for r in want["results"]}
    assert got_results == want_results
    assert {h["tensor"]: h["binades"] for h in a.histograms} == {h["tensor"]: h["binades"] for h in want["histograms"]}


def test_blocks_and_tables():
    x = sample(4096)
    a = fmtcheck.analyze(x, "e4m3", block=32, blocks=True)
    assert len(a.blocks) == -(-x.size // 32) and a.blocks[0]["start"] == 0 and a.blocks[1]["start"] == 32
    assert sum(b["values"] for b in a.blocks) == x.size
    assert a.measure("tensor", "e4m3", "blocks") == len(a.blocks)
    pd = pytest.importorskip("pandas", reason="the DataFrame methods need pandas")
    table = a.table()
    assert list(table.columns) == ["tensor", "format", "scale", "measure", "value"]
    assert isinstance(a.block_table(), pd.DataFrame) and len(a.block_table()) == len(a.blocks)
    assert set(a.histogram_table().columns) == {"tensor", "binade", "count"}


def load_trace():
    steps = sorted((DATA / "digits_mlp_trace").glob("step_*.safetensors"))
    return [load_file(p) for p in steps]


@pytest.mark.parametrize("recipe,options", [
    ("gradscaler", ["--growth-interval", "50"]),
    ("deepspeed", ["--scale-window", "40", "--hysteresis", "1"]),
    ("delayed", ["--history", "16", "--margin", "1"]),
    ("current", ["--format", "e4m3"]),
])
def test_scaling_replay_matches_the_cli_on_the_digits_trace(cli, tmp_path, recipe, options):
    steps = load_trace()
    kwargs = {o[2:].replace("-", "_"): (int(v) if v.lstrip("-").isdigit() else v) for o, v in zip(options[::2], options[1::2])}
    replay = fmtcheck.scale(steps, recipe, **kwargs)
    run_cli(cli, "scale", DATA / "digits_mlp_trace", "--recipe", recipe, *options, "--json", tmp_path / "s.json",
            "--csv", tmp_path / "s.csv")
    want = json.loads((tmp_path / "s.json").read_text())
    assert replay.summary() == want
    pd = pytest.importorskip("pandas", reason="the per-step comparison reads the CSV with pandas")
    csv = pd.read_csv(tmp_path / "s.csv", float_precision="round_trip")
    rows = replay.table()
    assert list(rows.columns) == list(csv.columns)
    rows["skipped"] = rows["skipped"].astype(int)
    pd.testing.assert_frame_equal(rows, csv, check_dtype=False, check_exact=True)


def test_gradscaler_skips_an_overflowing_step_and_backs_off():
    # Hand-worked: 65536 * 2 = 131072 overflows fp16 (max 65504): the step is
    # skipped and the scale halves; the next step at 32768 fits.
    replay = fmtcheck.ScalingReplay("gradscaler", growth_interval=2)
    for g in ([1.0, 2.0], [0.5, 1.0], [0.25], [0.25]):
        replay.step({"w": np.array(g, np.float32)})
    rows = replay.rows
    assert [r["scale"] for r in rows] == [65536.0, 32768.0, 32768.0, 65536.0]
    assert [r["skipped"] for r in rows] == [True, False, False, False]
