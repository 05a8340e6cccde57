"""The Recorder given an emulate (`Recorder(..., emulate=em)`): per step and cast, the counts it
writes (emulated.csv, summary.json, `recorder.emulated`) against the casts recomputed here with
torch's own float8 and bfloat16 casts (proven equal to fmtcheck's on every float32 input) at
Transformer Engine's current scaling, fp8_max / amax; their sums against emulate's totals; steps
spanning several forwards, every step whatever `every`, the report, and bad input."""
import csv
import json

import pandas as pd
import pytest
import torch

import fmtcheck.torch as ft
from models import DigitsMlp, digits

B = 16
E4M3, E5M2 = (torch.float8_e4m3fn, 448.0), (torch.float8_e5m2, 57344.0)


def wide_batches(seed=0):
    """The digits, each pixel times 2^-r (r 0..29): values below e4m3's range at amax 1, so the
    input's cast underflows and the counts have something to count."""
    _, batches, _ = digits(seed, batch=B)
    g = torch.Generator().manual_seed(seed)
    for x, y in batches:
        yield x * 2.0 ** -torch.randint(0, 30, x.shape, generator=g).float(), y


def current_cast(t, fmt):
    """amax, scale and underflow to zero of `t` cast to `fmt` at current scaling (fp8_max / amax in
    float32, as Transformer Engine computes it), by torch."""
    dtype, fp8_max = fmt
    amax = t.abs().max()
    scale = torch.tensor(fp8_max) / amax
    scaled = t * scale
    return float(amax), float(scale), int(((scaled.to(dtype) == 0) & (scaled != 0)).sum())


def bf16_cast(t):
    return float(t.abs().max()), 1.0, int(((t.to(torch.bfloat16) == 0) & (t != 0)).sum())


def expected_casts(seen):
    """The operand casts of fp8-current and the rounding of each incoming gradient to bf16, from what
    one forward and backward fed the layers: {name: (amax, scale, underflow to zero)}."""
    out = {}
    for layer in ("fc1", "fc2"):
        dy = seen[f"{layer}:dy"]
        out[f"{layer}:input"] = current_cast(seen[f"{layer}:input"], E4M3)
        out[f"{layer}:weight"] = current_cast(seen[f"{layer}:weight"], E4M3)
        out[f"{layer}:output.grad"] = bf16_cast(dy)  # the incoming gradient in the activation format
        out[f"{layer}:grad_output"] = current_cast(dy.to(torch.bfloat16).float(), E5M2)
    return out


def capture(model):
    """Per forward: the layers' inputs, weights, and (in backward) the gradients reaching their
    outputs, as the test's own hooks see them."""
    seen = []

    def pre(name):
        def hook(m, args):
            seen[-1][f"{name}:input"] = args[0].detach().clone()
            seen[-1][f"{name}:weight"] = m.weight.detach().clone()
        return hook

    def post(name):
        def hook(m, args, out):
            if out.requires_grad:
                out.register_hook(lambda g: seen[-1].__setitem__(f"{name}:dy", g.clone()))
        return hook

    hooks = [model.register_forward_pre_hook(lambda m, a: seen.append({}))]
    for name in ("fc1", "fc2"):
        layer = getattr(model, name)
        hooks += [layer.register_forward_pre_hook(pre(name)), layer.register_forward_hook(post(name))]
    return seen, hooks


def sizes(batch):
    """Each cast's number of values: the size of the tensor it casts (fc1's input needs no gradient)."""
    n = {"fc1": (64, 32), "fc2": (32, 10)}
    out = {}
    for layer, (k, m) in n.items():
        out |= {f"{layer}:input": batch * k, f"{layer}:weight": k * m, f"{layer}:output": batch * m,
                f"{layer}:output.grad": batch * m, f"{layer}:grad_output": batch * m, f"{layer}:grad_weight": k * m,
                f"{layer}:grad_bias": m}
    out["fc2:grad_input"] = batch * 32
    # The ReLU between them works on an autocast tensor: its result is rounded, and its share of
    # fc1's output gradient.
    out |= {"relu:output": batch * 32, "relu:grad_input": batch * 32}
    # The loss on fc2's output, which would be an autocast tensor: its log-probabilities and gradient.
    out |= {"cross_entropy:log_probs": batch * 10, "cross_entropy:grad_input": batch * 10}
    return out


def test_each_steps_casts_are_the_ones_torch_computes(tmp_path, capsys):
    torch.manual_seed(0)
    model = DigitsMlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = wide_batches()
    seen, hooks = capture(model)
    with ft.emulate("fp8-current", "hopper", model=model) as em, \
            ft.Recorder(model, tmp_path, every=2, optimizer=opt, emulate=em) as rec:
        for _ in range(3):
            x, y = next(batches)
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            opt.zero_grad()
    for h in hooks:
        h.remove()
    assert rec.recorded_steps == [0, 2]  # the tensors every 2nd step; the casts every step
    rows = {(r["step"], r["tensor"]): r for r in rec.emulated}
    assert {s for s, _ in rows} == {0, 1, 2}
    for step, t in enumerate(seen):
        assert {n: r["values"] for (s, n), r in rows.items() if s == step} == sizes(B)
        for name, (amax, scale, under) in expected_casts(t).items():
            r = rows[(step, name)]
            assert (r["amax"], r["scale"], r["underflow_to_zero"]) == (amax, scale, under), (step, name)
            assert r["overflow"] == r["saturated"] == r["nan_produced"] == 0
    assert min(rows[(s, "fc1:input")]["underflow_to_zero"] for s in range(3)) > 0
    # Summed over the steps: emulate's own totals.
    totals = {}
    for r in rec.emulated:
        t = totals.setdefault(r["tensor"], {"amax": 0.0})
        for m in ("values", "overflow", "saturated", "underflow_to_zero", "nan_produced"):
            t[m] = t.get(m, 0) + r[m]
        t["amax"] = max(t["amax"], r["amax"])
    assert totals == em.summary
    # The files hold the same rows; pandas reads them as it reads summary.csv (the notebook's path).
    with open(tmp_path / "emulated.csv") as f:
        assert [{k: float(v) if k not in ("tensor", "recipe") else v for k, v in r.items()} for r in csv.DictReader(f)] \
            == [dict(r) for r in rec.emulated]
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["emulated"] == rec.emulated and doc["emulate"] == {"recipe": "fp8-current", "gpu": "hopper"}
    frame = pd.read_csv(tmp_path / "emulated.csv")
    assert list(frame.groupby("tensor").underflow_to_zero.sum().nlargest(1).index) == ["fc1:input"]
    # The report says what the casts lost, within 100 columns.
    out = capsys.readouterr().out
    assert all(len(line) <= 100 for line in out.splitlines())
    cast = sum(t["values"] for t in em.summary.values())
    lost = sum(t["underflow_to_zero"] for t in em.summary.values())
    assert f"emulated fp8-current on hopper: {cast} values cast over 3 steps (emulated.csv)" in out
    assert f"{lost} ({100 * lost / cast:.2g}%) underflowed to zero" in " ".join(out.split())
    table = out[out.index("the emulated casts that lost most"):].splitlines()
    assert table[1].split() == ["tensor", "fp8-current"] and table[2].split()[0] == "fc1:input"


def test_a_step_of_several_forwards_and_a_pass_after_the_last(tmp_path):
    torch.manual_seed(1)
    model = DigitsMlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = wide_batches(1)
    seen, hooks = capture(model)
    with ft.emulate("fp8-current", "hopper", model=model) as em:
        with torch.no_grad():
            model(next(batches)[0])  # before the Recorder: none of its steps
        with ft.Recorder(model, tmp_path, optimizer=opt, record=("grad",), emulate=em, verbose=False) as rec:
            for _ in range(2):
                for _ in range(2):  # gradient accumulation: emulate starts a step per forward
                    x, y = next(batches)
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
                opt.zero_grad()
            with torch.no_grad():
                model(next(batches)[0])  # after the last step: a row of step 2, the step under way
    for h in hooks:
        h.remove()
    rows = {(r["step"], r["tensor"]): r for r in rec.emulated}
    assert {s for s, _ in rows} == {0, 1, 2}
    for step in (0, 1):
        micro = seen[1 + 2 * step: 3 + 2 * step]
        assert {n: r["values"] for (s, n), r in rows.items() if s == step} == {n: 2 * v for n, v in sizes(B).items()}
        first, last = (expected_casts(t) for t in micro)
        for name, (amax, scale, under) in last.items():  # amax the larger, scale the last, counts the sum
            r = rows[(step, name)]
            assert (r["amax"], r["scale"], r["underflow_to_zero"]) == (max(amax, first[name][0]), scale,
                                                                      under + first[name][2]), (step, name)
    assert {n for s, n in rows if s == 2} == {"fc1:input", "fc1:weight", "fc1:output", "relu:output", "fc2:input",
                                             "fc2:weight", "fc2:output"}
    assert rows[(2, "fc1:input")]["underflow_to_zero"] == current_cast(seen[-1]["fc1:input"], E4M3)[2]
    first = current_cast(seen[0]["fc1:input"], E4M3)[2]
    assert sum(r["underflow_to_zero"] for r in rec.emulated if r["tensor"] == "fc1:input") \
        == em.summary["fc1:input"]["underflow_to_zero"] - first


def test_bad_emulate_is_one_error(tmp_path):
    model = DigitsMlp()
    with pytest.raises(ft.Error) as e:
        ft.Recorder(model, tmp_path, emulate="fp8-current")
    assert str(e.value) == "emulate=str: expected the fmtcheck.torch.emulate the loop runs under"
    em = ft.emulate("bf16", "hopper", model=model)
    with ft.Recorder(model, tmp_path / "a", emulate=em, verbose=False):
        with pytest.raises(ft.Error, match="^this emulate already reports its casts to another Recorder$"):
            ft.Recorder(model, tmp_path / "b", emulate=em, verbose=False).start()
