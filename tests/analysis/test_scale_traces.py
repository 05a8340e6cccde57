"""fmtcheck scale replays against hand-computed traces: every expected
scale below was worked out by hand from the recipes' rules (torch
GradScaler.update, Megatron/DeepSpeed hysteresis, Transformer Engine
DelayedScaling), not by running fmtcheck."""
import numpy as np
import pandas as pd
import pytest


def write_trace(folder, steps):
    folder.mkdir()
    for i, values in enumerate(steps):
        np.save(folder / f"step_{i:04d}.npy", np.array(values, dtype=np.float32))
    return folder


def replay(fmtcheck, tmp_path, trace, *args):
    out = tmp_path / "steps.csv"
    r = fmtcheck("scale", trace, "--csv", out, *args)
    assert r.returncode == 0, r.stderr
    return pd.read_csv(out, float_precision="round_trip")


# fp16 overflows from 65520 up: a gradient of 4 overflows at scales 2^16, 2^15 and 2^14
# (65536), one of 0.5 overflows at none of them.
BIG, OK = [4.0, 2**-30], [0.5, 2**-30]


def test_gradscaler_growth_backoff_skip(fmtcheck, tmp_path):
    trace = write_trace(tmp_path / "t", [BIG, OK, OK, OK, BIG, OK, OK])
    df = replay(fmtcheck, tmp_path, trace, "--growth-interval", "2")
    # step 0 at 2^16 overflows: skip, back off to 2^15; steps 1, 2 finite: grow to 2^16 after
    # step 2; step 3 finite (tracker 1); step 4 at 2^16 overflows: skip, 2^15; 5, 6 finite: 2^16.
    assert df.scale.tolist() == [65536, 32768, 32768, 65536, 65536, 32768, 32768]
    assert df.skipped.tolist() == [1, 0, 0, 0, 1, 0, 0]
    assert df.overflow.tolist() == [1, 0, 0, 0, 1, 0, 0]
    # 2^-30 * 2^15 = 2^-15 is an fp16 subnormal; * 2^16 = 2^-14 is normal.
    assert df.subnormal.tolist() == [0, 1, 1, 0, 0, 1, 1]


def test_gradscaler_hysteresis_and_min_scale(fmtcheck, tmp_path):
    trace = write_trace(tmp_path / "t", [BIG, BIG, BIG, BIG, OK])
    # hysteresis 2: the first overflow only spends the budget; the second backs off
    # (2^16 -> 2^15); the budget stays spent, so the third backs off again but the
    # floor 2^15 holds; the fourth likewise.
    df = replay(fmtcheck, tmp_path, trace, "--hysteresis", "2", "--min-scale", "32768")
    assert df.scale.tolist() == [65536, 65536, 32768, 32768, 32768]
    assert df.skipped.tolist() == [1, 1, 1, 1, 0]


def test_gradscaler_consecutive_hysteresis(fmtcheck, tmp_path):
    # DeepSpeed consecutive_hysteresis: a finite step restores the budget, so
    # overflows separated by finite steps never back off with hysteresis 2.
    trace = write_trace(tmp_path / "t", [BIG, OK, BIG, OK, BIG, BIG])
    df = replay(fmtcheck, tmp_path, trace, "--hysteresis", "2", "--consecutive-hysteresis")
    assert df.scale.tolist() == [65536] * 6
    assert df.skipped.tolist() == [1, 0, 1, 0, 1, 1]
    df = replay(fmtcheck, tmp_path, trace, "--hysteresis", "2")
    # without it the budget is spent at step 0 and step 2 backs off.
    assert df.scale.tolist() == [65536, 65536, 65536, 32768, 32768, 16384]


AMAXES = [1.0, 2.0, 0.5, 0.5, 4.0]


def test_delayed_scaling_window(fmtcheck, tmp_path):
    trace = write_trace(tmp_path / "t", [[a, -a / 4] for a in AMAXES])
    df = replay(fmtcheck, tmp_path, trace, "--recipe", "delayed", "--format", "e4m3", "--history", "2")
    # e4m3 max 448. Step 0: empty history, scale 1. Then max over the last two amaxes:
    # [1] -> 448, [1,2] -> 224, [2,0.5] -> 224, [0.5,0.5] -> 896.
    assert df.scale.tolist() == [1, 448, 224, 224, 896]
    # step 1: 2 * 448 = 896 saturates (0.5 * 448 does not); step 4: 4 * 896 and 1 * 896 both do.
    assert df.saturated.tolist() == [0, 1, 0, 0, 2]
    assert df.amax.tolist() == AMAXES


def test_delayed_scaling_most_recent_and_margin(fmtcheck, tmp_path):
    trace = write_trace(tmp_path / "t", [[a] for a in AMAXES])
    df = replay(fmtcheck, tmp_path, trace, "--recipe", "delayed", "--format", "e4m3", "--amax-compute", "most_recent",
                "--margin", "1")
    # (448 / amax_prev) / 2: 1, 224, 112, 448, 448
    assert df.scale.tolist() == [1, 224, 112, 448, 448]


def test_current_scaling(fmtcheck, tmp_path):
    trace = write_trace(tmp_path / "t", [[a, 3.0] if a > 3 else [a] for a in AMAXES])
    df = replay(fmtcheck, tmp_path, trace, "--recipe", "current")
    # hybrid -> e5m2 (max 57344): 57344 / amax of the same step.
    assert df.scale.tolist() == [57344, 28672, 114688, 114688, 14336]
    assert df.saturated.sum() == 0 and df.overflow.sum() == 0


def test_manifest_and_real_trace(fmtcheck, tmp_path, repo_root):
    trace = repo_root / "data" / "digits_mlp_trace"
    manifest = tmp_path / "trace.txt"
    manifest.write_text("# two steps of the real trace\n" + "\n".join(str(trace / f"step_{i:04d}.safetensors") for i in range(2)) + "\n")
    df = replay(fmtcheck, tmp_path, manifest, "--tensors", "weight")
    assert sorted(set(df.tensor)) == ["fc1.weight", "fc2.weight"]
    assert df.step.tolist() == [0, 0, 1, 1]
    full = replay(fmtcheck, tmp_path, trace)
    assert full.step.nunique() == 300
