"""fmtcheck train against the independent numpy + ml_dtypes reference
(reference.py): every recipe, 20 steps, under the `exact` tensor-core model;
per step the loss, gradient norm, loss scale, skip, every tensor's amax,
scale and cast counts, and every parameter's nonzero and lost updates agree
bit for bit, and so does the final evaluation (a function of every trained
weight)."""
import json

import numpy as np
import pandas as pd
import pytest

import reference
import reference_transformer

F32 = np.float32
STEPS, BATCH = 20, 16
COUNTS = ["underflowed", "overflowed", "flushed", "saturated"]


def run_cli(fmtcheck, digits, tmp_path, recipes, *extra):
    csv, js = tmp_path / "steps.csv", tmp_path / "summary.json"
    r = fmtcheck("train", "--data", digits, "--recipe", ",".join(recipes), "--gpu", "exact", "--steps", STEPS,
                 "--batch", BATCH, "--csv", csv, "--json", js, *extra)
    assert r.returncode == 0, r.stderr.decode()
    return pd.read_csv(csv, keep_default_na=False, dtype=str), json.loads(js.read_text())


def f32(text):
    return F32(float(text))


def same(a, b):
    """Bit for bit; NaN matches NaN (the CSV writes no payload)."""
    a, b = F32(a), F32(b)
    return (np.isnan(a) and np.isnan(b)) or a.tobytes() == b.tobytes()


def compare(table, summary, recipe, expected_steps):
    rows = table[table.recipe == recipe].reset_index(drop=True)
    *steps, final = expected_steps
    assert len(rows) == len(steps)
    for row, ref in zip(rows.itertuples(index=False), steps):
        row = row._asdict() if hasattr(row, "_asdict") else dict(row)
        got = dict(zip(table.columns, row.values()))
        where = f"{recipe} step {ref['step']}"
        for key in ["loss", "grad_norm", "loss_scale"]:
            assert same(f32(got[key]), ref[key]), f"{where}: {key} {got[key]} != {ref[key]!r}"
        assert got["skipped"] == ("1" if ref["skipped"] else "0"), where
        tensors = {c.split(":")[0] for c in table.columns if ":" in c and not c.endswith(":lost_updates") and got[c] != ""}
        assert tensors == set(ref["tensors"]), where
        for name, s in ref["tensors"].items():
            assert same(f32(got[name + ":amax"]), s.amax), f"{where}: {name} amax"
            assert same(f32(got[name + ":scale"]), s.scale), f"{where}: {name} scale {got[name + ':scale']} != {s.scale}"
            for c in COUNTS:
                assert int(got[f"{name}:{c}"]) == getattr(s, c), f"{where}: {name} {c}"
        if "updates" in ref:
            assert int(got["nonzero_updates"]) == sum(n for n, _ in ref["updates"].values()), where
            assert int(got["lost_updates"]) == sum(lost for _, lost in ref["updates"].values()), where
            for name, (_, lost) in ref["updates"].items():
                assert int(got[name + ":lost_updates"]) == lost, f"{where}: {name} lost updates"
    js = next(r for r in summary["recipes"] if r["recipe"] == recipe)
    assert same(F32(js["eval_loss"]), final["eval_loss"]), recipe
    assert js["accuracy"] == pytest.approx(final["accuracy"], abs=0)


@pytest.mark.parametrize("recipe", list(reference.RECIPES))
def test_recipe_matches_reference_bit_for_bit(fmtcheck, digits, tmp_path, recipe):
    table, summary = run_cli(fmtcheck, digits, tmp_path, [recipe])
    compare(table, summary, recipe, list(reference.train(recipe, digits, STEPS, BATCH)))


@pytest.mark.parametrize("recipe", list(reference.PURE))
def test_pure_recipe_matches_reference_bit_for_bit(fmtcheck, digits, tmp_path, recipe):
    # SGD at lr 0.01 loses a share of the updates to rounding in every pure
    # recipe, so the counts, the stochastic draws and Kahan's compensation
    # all take part; --sr-bits 7 and a seed exercise the stated stream.
    table, summary = run_cli(fmtcheck, digits, tmp_path, [recipe], "--lr", 0.01, "--sr-bits", 7, "--sr-seed", 5)
    ref = list(reference.train(recipe, digits, STEPS, BATCH, lr=0.01, sr_bits=7, sr_seed=5))
    compare(table, summary, recipe, ref)
    lost = sum(l for s in ref[:-1] for _, l in s["updates"].values())
    nonzero = sum(n for s in ref[:-1] for n, _ in s["updates"].values())
    assert 0 < lost < nonzero
    js = summary["recipes"][0]
    assert (js["lost_updates"], js["nonzero_updates"]) == (lost, nonzero)
    assert js["lost_updates_per_step"] == [sum(l for _, l in s["updates"].values()) for s in ref[:-1]]
    assert js["lost_updates_per_parameter"] == {
        name: sum(s["updates"][name][1] for s in ref[:-1]) for name in ref[0]["updates"]}


@pytest.mark.parametrize("recipe", ["bf16-pure", "bf16-pure-sr", "bf16-pure-kahan", "fp16-pure-fp32-states"])
def test_pure_recipe_with_adam_matches_reference(fmtcheck, digits, tmp_path, recipe):
    table, summary = run_cli(fmtcheck, digits, tmp_path, [recipe], "--optimizer", "adam", "--lr", 3e-4)
    compare(table, summary, recipe, list(reference.train(recipe, digits, STEPS, BATCH, lr=3e-4, optimizer="adam")))


@pytest.mark.parametrize("recipe", ["fp16", "fp8-current"])
def test_adam_and_clipping_match_reference(fmtcheck, digits, tmp_path, recipe):
    table, summary = run_cli(fmtcheck, digits, tmp_path, [recipe], "--optimizer", "adam", "--clip", "0.5")
    ref = list(reference.train(recipe, digits, STEPS, BATCH, lr=1e-3, optimizer="adam", clip=0.5))
    compare(table, summary, recipe, ref)
    assert any(s["grad_norm"] > 0.5 for s in ref[:-1])  # clipping took effect


def test_fp16_scale_too_large_skips_and_backs_off(fmtcheck, digits, tmp_path):
    # Each row of the logits' gradient holds (1 - p_label)·S/16, at least
    # S/160 while the untrained model gives the label p < 0.9: above fp16's
    # overflow threshold 65520 for every S >= 2^24. So from 2^28 at least five
    # steps overflow, are skipped and halve the scale; the reference says
    # exactly how many.
    table, summary = run_cli(fmtcheck, digits, tmp_path, ["fp16"], "--init-scale", 2.0 ** 28)
    ref = list(reference.train("fp16", digits, STEPS, BATCH, init_scale=2.0 ** 28))
    compare(table, summary, "fp16", ref)
    skipped = [s["skipped"] for s in ref[:-1]]
    first_kept = skipped.index(False)
    assert first_kept >= 5
    scales = table.loss_scale.map(float).tolist()
    assert scales[:first_kept + 1] == [2.0 ** (28 - i) for i in range(first_kept + 1)]
    assert summary["recipes"][0]["skipped_steps"] == sum(skipped)


def test_fp16_scale_too_small_underflows_what_bf16_keeps(fmtcheck, digits, tmp_path):
    # At a loss scale of 2^-20 the fp16 gradients fall below its smallest
    # subnormal (2^-24) and vanish; bf16's range keeps them.
    table, summary = run_cli(fmtcheck, digits, tmp_path, ["fp16", "bf16"], "--init-scale", 2.0 ** -20)
    ref16 = list(reference.train("fp16", digits, STEPS, BATCH, init_scale=2.0 ** -20))
    compare(table, summary, "fp16", ref16)
    underflowed = [c for c in table.columns if c.endswith(":underflowed")]
    fp16 = table[table.recipe == "fp16"].iloc[0]
    bf16 = table[table.recipe == "bf16"].iloc[0]
    assert int(fp16["logits.grad:underflowed"]) > 0
    assert sum(int(bf16[c]) for c in underflowed) == 0


@pytest.mark.parametrize("recipe", list(reference.RECIPES))
def test_transformer_matches_reference_bit_for_bit(fmtcheck, sort_data, tmp_path, recipe):
    # One sequence per step keeps the pure-Python reference to seconds.
    csv, js = tmp_path / "steps.csv", tmp_path / "summary.json"
    r = fmtcheck("train", "--model", "transformer", "--data", sort_data, "--recipe", recipe, "--gpu", "exact",
                 "--steps", STEPS, "--batch", 1, "--optimizer", "adam", "--lr", 0.003, "--infer", "", "--csv", csv,
                 "--json", js)
    assert r.returncode == 0, r.stderr.decode()
    table = pd.read_csv(csv, keep_default_na=False, dtype=str)
    compare(table, json.loads(js.read_text()), recipe,
            list(reference_transformer.train(recipe, sort_data, STEPS, 1)))


def test_inference_in_other_precisions_matches_reference(fmtcheck, digits, tmp_path):
    # Weights trained in float32 and in pure bf16, each evaluated under the
    # casts and tensor cores of other recipes.
    infer = ["fp32", "tf32", "bf16", "fp16", "fp8-current", "mxfp8"]
    _, summary = run_cli(fmtcheck, digits, tmp_path, ["fp32", "bf16-pure"], "--infer", ",".join(infer))
    for trained in summary["recipes"]:
        final = list(reference.train(trained["recipe"], digits, STEPS, BATCH, infer=infer))[-1]
        assert [i["recipe"] for i in trained["inference"]] == infer
        for got in trained["inference"]:
            loss, accuracy = final["inference"][got["recipe"]]
            where = f"{trained['recipe']} under {got['recipe']}"
            assert same(F32(got["eval_loss"]), loss), where
            assert got["accuracy"] == pytest.approx(accuracy, abs=0), where
            assert got["loss_change"] == pytest.approx(float(loss) - float(final["eval_loss"]), abs=0), where
        losses = {i["recipe"]: i["eval_loss"] for i in trained["inference"]}
        assert losses["fp32"] == trained["eval_loss"]
        assert losses["fp8-current"] != losses["fp32"]  # the casts change the outcome


def test_any_tensor_core_preset_trains(fmtcheck, digits):
    """--gpu takes every preset of fmtcheck mma --model: MI300X in bf16 and in FP8 through its fnuz
    formats (the bits are held to fmtcheck.torch.emulate in tests/torch)."""
    r = fmtcheck("train", "--data", digits, "--gpu", "mi300x", "--recipe", "bf16,current:e4m3fnuz/e5m2fnuz",
                 "--steps", 3, "--infer", "")
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr.decode()
    assert "mi300x" in out and "current:e4m3fnuz/e5m2fnuz" in out
    assert max(map(len, out.splitlines())) <= 100
