"""Outcomes of the FP8 recipes worked out from Transformer Engine's rules,
checked on `fmtcheck train`'s own per-step CSV: delayed scaling's scale for
step t comes from the amaxes of the `--amax-history` steps before it
(scale 1 at step 0), current scaling's from the tensor's own amax, both
divided by 2^margin; current scaling never overflows."""
import numpy as np
import pandas as pd
import pytest

F32 = np.float32
FMAX = {"e4m3": F32(448), "e5m2": F32(57344)}


def run(fmtcheck, digits, tmp_path, recipe, *extra):
    csv = tmp_path / "steps.csv"
    r = fmtcheck("train", "--data", digits, "--recipe", recipe, "--gpu", "hopper", "--steps", 12, "--batch", 16,
                 "--csv", csv, *extra)
    assert r.returncode == 0, r.stderr.decode()
    return pd.read_csv(csv)


def operands(table):
    """The cast GEMM operands and their FP8 format (gradients e5m2, the rest e4m3)."""
    names = [c.split(":")[0] for c in table.columns if c.endswith(":scale")]
    ops = [n for n in names if n.endswith((".input", ".weight", ".grad_output"))]
    return {n: "e5m2" if n.endswith(".grad_output") else "e4m3" for n in ops}


def expected_scale(amax, fmax, margin):
    return (fmax / F32(amax)) / F32(2.0 ** margin)


def test_delayed_scaling_follows_the_amax_history(fmtcheck, digits, tmp_path):
    table = run(fmtcheck, digits, tmp_path, "fp8-delayed", "--amax-history", 3, "--margin", 1)
    tensors = operands(table)
    assert len(tensors) == 6
    for name, fmt in tensors.items():
        amax = table[name + ":amax"].astype(F32).tolist()
        scale = table[name + ":scale"].astype(F32).tolist()
        assert scale[0] == 1
        for t in range(1, len(scale)):
            window = max(amax[max(0, t - 3):t])
            assert scale[t] == expected_scale(window, FMAX[fmt], 1), (name, t)


def test_current_scaling_uses_its_own_amax_and_never_overflows(fmtcheck, digits, tmp_path):
    table = run(fmtcheck, digits, tmp_path, "fp8-current", "--margin", 2)
    for name, fmt in operands(table).items():
        for amax, scale in zip(table[name + ":amax"].astype(F32), table[name + ":scale"].astype(F32)):
            assert scale == expected_scale(amax, FMAX[fmt], 2), name
        assert (table[name + ":overflowed"] == 0).all() and (table[name + ":saturated"] == 0).all()


@pytest.mark.parametrize("recipe", ["fp16", "bf16"])
def test_recipes_without_tensor_scaling_keep_scale_one(fmtcheck, digits, tmp_path, recipe):
    table = run(fmtcheck, digits, tmp_path, recipe)
    scales = table[[c for c in table.columns if c.endswith(":scale")]]
    assert (scales == 1).all().all()
    assert (table.loss_scale == (65536 if recipe == "fp16" else 1)).all()
