"""fmtcheck scale replays against hand-computed traces: every expected
scale below was worked out by hand from the recipes' rules (torch
GradScaler.update, Megatron's hysteresis, DeepSpeed's
DynamicLossScaler.update_scale in deepspeed/runtime/fp16/loss_scaler.py,
Transformer Engine DelayedScaling), not by running fmtcheck."""
import json

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


def test_gradscaler_json_summary(fmtcheck, tmp_path):
    trace = write_trace(tmp_path / "t", [BIG, OK, OK, OK, BIG, OK, OK])
    out = tmp_path / "summary.json"
    df = replay(fmtcheck, tmp_path, trace, "--growth-interval", "2", "--json", out)
    j = json.loads(out.read_text())
    # the trace of test_gradscaler_growth_backoff_skip: two skipped steps, last step at 2^15.
    assert (j["recipe"], j["format"], j["steps"], j["skipped_steps"], j["final_scale"]) == ("gradscaler", "fp16", 7, 2, 32768)
    [t] = j["tensors"]
    assert (t["tensor"], t["format"], t["values"], t["overflow"], t["subnormal"]) == ("gradient", "fp16", 14, 2, 4)
    assert (t["min_scale"], t["max_scale"]) == (32768, 65536)
    assert t["underflow_to_zero"] == df.underflow_to_zero.sum()


def test_deepspeed_window_hysteresis_and_min_scale(fmtcheck, tmp_path):
    steps = [OK, OK, OK, BIG, BIG, BIG, OK, OK, OK, OK, BIG]
    df = replay(fmtcheck, tmp_path, write_trace(tmp_path / "t", steps), "--recipe", "deepspeed", "--scale-window", "2",
                "--min-scale", "16384")
    # DeepSpeed grows when stable = iter - last_overflow - 1 is a positive multiple of the window:
    # iter 2 (stable 2; torch would grow at iter 1) -> 2^17. Hysteresis 2 (DeepSpeed's default):
    # iter 3 overflows and only spends the budget (2 -> 1); iter 4 halves to 2^16 and the budget
    # stays 1, so iter 5 halves again to 2^15. iters 6, 7, 8 are stable 0, 1, 2: grow after iter 8
    # to 2^16 and restore the budget, which iter 10's overflow spends without backing off.
    assert df.scale.tolist() == [65536, 65536, 65536, 131072, 131072, 65536, 32768, 32768, 32768, 65536, 65536]
    assert df.skipped.tolist() == [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1]


def test_deepspeed_stops_at_min_scale(fmtcheck, tmp_path):
    out = tmp_path / "summary.json"
    replay(fmtcheck, tmp_path, write_trace(tmp_path / "t", [BIG, BIG, BIG]), "--recipe", "deepspeed", "--hysteresis", "1",
           "--init-scale", "32768", "--min-scale", "16384", "--json", out)
    # 4 * 2^15 overflows: halve to the floor 2^14; 4 * 2^14 = 65536 overflows twice more at the
    # floor, where DeepSpeed raises "Current loss scale already at minimum".
    j = json.loads(out.read_text())
    assert (j["skipped_steps"], j["final_scale"], j["overflows_at_min_scale"]) == (3, 16384, 2)


def test_deepspeed_consecutive_hysteresis(fmtcheck, tmp_path):
    # consecutive_hysteresis: a finite step restores the budget, so overflows separated by
    # finite steps never back off with hysteresis 2; two in a row do (iter 5).
    trace = write_trace(tmp_path / "t", [BIG, OK, BIG, OK, BIG, BIG, OK])
    df = replay(fmtcheck, tmp_path, trace, "--recipe", "deepspeed", "--consecutive-hysteresis")
    assert df.scale.tolist() == [65536] * 6 + [32768]
    assert df.skipped.tolist() == [1, 0, 1, 0, 1, 1, 0]
    # without it the budget, spent at iter 0, comes back only with growth: every later
    # overflow halves (min_loss_scale 1 is far away).
    df = replay(fmtcheck, tmp_path, trace, "--recipe", "deepspeed")
    assert df.scale.tolist() == [65536, 65536, 65536, 32768, 32768, 16384, 8192]


def test_consecutive_hysteresis_is_deepspeed_only(fmtcheck, tmp_path):
    r = fmtcheck("scale", write_trace(tmp_path / "t", [OK]), "--consecutive-hysteresis")
    assert r.returncode == 2 and "deepspeed" in r.stderr


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


def test_hybrid_forward_e4m3_gradients_e5m2(fmtcheck, tmp_path):
    trace = tmp_path / "t"
    trace.mkdir()
    for i, a in enumerate([1.0, 2.0]):
        np.save(trace / f"step_{i:04d}_act.npy", np.array([a], dtype=np.float32))
        np.save(trace / f"step_{i:04d}_grad.npy", np.array([a], dtype=np.float32))
    df = replay(fmtcheck, tmp_path, trace, "--recipe", "delayed", "--forward", "^act$")
    # Format.HYBRID: the forward tensor in e4m3 (max 448), the gradient in e5m2 (max 57344);
    # step 1's scale is fp8_max / step 0's amax of 1.
    assert df.tensor.tolist() == ["act", "grad", "act", "grad"]
    assert df.format.tolist() == ["e4m3", "e5m2", "e4m3", "e5m2"]
    assert df.scale.tolist() == [1, 1, 448, 57344]
    # a trace of gradients alone: everything e5m2
    df = replay(fmtcheck, tmp_path, trace, "--recipe", "delayed")
    assert set(df.format) == {"e5m2"}
    r = fmtcheck("scale", trace, "--recipe", "delayed", "--format", "e4m3", "--forward", "act")
    assert r.returncode == 2 and "hybrid" in r.stderr


def test_manifest_and_real_trace(fmtcheck, tmp_path, repo_root):
    trace = repo_root / "data" / "digits_mlp_trace"
    manifest = tmp_path / "trace.txt"
    manifest.write_text("# two steps of the real trace\n" + "\n".join(str(trace / f"step_{i:04d}.safetensors") for i in range(2)) + "\n")
    df = replay(fmtcheck, tmp_path, manifest, "--tensors", "weight")
    assert sorted(set(df.tensor)) == ["fc1.weight", "fc2.weight"]
    assert df.step.tolist() == [0, 0, 1, 1]
    full = replay(fmtcheck, tmp_path, trace)
    assert full.step.nunique() == 300
