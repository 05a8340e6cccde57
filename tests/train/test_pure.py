"""Pure low-precision training (no float32 master copy) on `fmtcheck
train`'s own output, outcomes worked out beforehand:

- bf16 weights stall when the updates fall below half a bf16 ulp of the
  weights: Adam at lr 1e-4 moves each weight by about 1e-4 per step, while
  the MLP's weights (|w| up to 1/8) have bf16 half-ulps up to 2^-12 ≈ 2.4e-4.
  Rounding to nearest loses most updates and the loss stays put; stochastic
  rounding keeps each update in expectation and Kahan's compensation
  accumulates them, so both follow float32. Optimizer states in float32 do
  not help there: the weights' rounding loses the updates, not the states.
- fp16 optimizer states break Adam: v = (1 - beta2)·g² lies below fp16's
  smallest subnormal 2^-24 for |g| below about 5e-3, rounds to 0, and the
  update m / (0 + eps) overflows the weights, whose inf and NaN gradients
  GradScaler then skips step after step. Float32 states (fp16 weights kept)
  train like float32."""
import json

import pytest


def run(fmtcheck, digits, tmp_path, recipes, steps, *extra):
    js = tmp_path / "summary.json"
    r = fmtcheck("train", "--data", digits, "--recipe", ",".join(recipes), "--gpu", "exact", "--steps", steps,
                 "--batch", 16, "--optimizer", "adam", "--infer", "", "--json", js, *extra)
    assert r.returncode == 0, r.stderr.decode()
    return {s["recipe"]: s for s in json.loads(js.read_text())["recipes"]}


@pytest.fixture(scope="module")
def untrained_loss(fmtcheck, digits, tmp_path_factory):
    # At lr 1e-30 float32 loses every update: the weights stay the initial ones.
    fp32 = run(fmtcheck, digits, tmp_path_factory.mktemp("untrained"), ["fp32"], 1, "--lr", 1e-30)["fp32"]
    assert fp32["lost_fraction"] == 1 and fp32["nonzero_updates"] > 0
    return fp32["eval_loss"]


@pytest.fixture(scope="module")
def stall(fmtcheck, digits, tmp_path_factory, untrained_loss):
    runs = run(fmtcheck, digits, tmp_path_factory.mktemp("stall"),
               ["fp32", "bf16-pure", "bf16-pure-sr", "bf16-pure-kahan", "bf16-pure-fp32-states"], 200, "--lr", 1e-4)
    for r in runs.values():
        r["progress"] = untrained_loss - r["eval_loss"]
    return runs


def progress(run):
    return run["progress"]


def test_pure_bf16_stalls_where_float32_trains(stall):
    assert progress(stall["fp32"]) > 0.04
    assert progress(stall["bf16-pure"]) < 0.2 * progress(stall["fp32"])
    assert stall["bf16-pure"]["lost_fraction"] > 0.85
    assert stall["fp32"]["lost_fraction"] < 0.01


@pytest.mark.parametrize("remedy", ["bf16-pure-sr", "bf16-pure-kahan"])
def test_stochastic_rounding_and_kahan_recover_it(stall, remedy):
    assert progress(stall[remedy]) > 0.95 * progress(stall["fp32"])
    assert stall[remedy]["accuracy"] > stall["bf16-pure"]["accuracy"] + 0.05


def test_float32_states_do_not_recover_lost_weight_updates(stall):
    assert progress(stall["bf16-pure-fp32-states"]) < 0.2 * progress(stall["fp32"])
    assert stall["bf16-pure-fp32-states"]["lost_fraction"] > 0.85


def test_fp16_states_break_adam_and_float32_states_recover_it(fmtcheck, digits, tmp_path, untrained_loss):
    runs = run(fmtcheck, digits, tmp_path, ["fp32", "fp16-pure", "fp16-pure-fp32-states"], 60, "--lr", 1e-3)
    assert runs["fp16-pure"]["skipped_steps"] > 50
    assert not runs["fp16-pure"]["eval_loss"] < untrained_loss
    assert runs["fp16-pure-fp32-states"]["skipped_steps"] == 0
    assert runs["fp16-pure-fp32-states"]["eval_loss"] == pytest.approx(runs["fp32"]["eval_loss"], abs=0.01)
    assert untrained_loss - runs["fp32"]["eval_loss"] > 0.2
