"""fmtcheck.torch.analyze against torch itself: per tensor of a real model's parameters and
gradients, the counts fmtcheck reports equal counts computed with torch's own casts, e.g.
underflow to zero = ((x.to(float16) == 0) & (x != 0)).sum(). Also: every input kind it takes, the
codes of bfloat16 and float8 tensors, the verdict, and one clear Error for what it cannot read."""
import numpy as np
import pytest
import torch

import fmtcheck
import fmtcheck.torch as ft
from models import MODELS, train

TORCH_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


def torch_counts(x: torch.Tensor, fmt: str) -> dict:
    """The counts of one tensor in one format, from torch's cast (round to nearest even)."""
    dtype = TORCH_DTYPES[fmt]
    y = x.to(dtype).float()
    x = x.float()
    finite = torch.isfinite(x)
    counts = {"values": x.numel(), "underflow_to_zero": int(((y == 0) & (x != 0)).sum()),
              "subnormal": int(((y != 0) & (y.abs() < torch.finfo(dtype).tiny)).sum()),
              "amax": float(x[finite].abs().max()) if finite.any() else 0.0}
    if fmt != "e4m3":  # torch's e4m3 cast saturates; the others overflow to inf as fmtcheck's nosat does
        counts["overflow"] = int((finite & ~torch.isfinite(y)).sum())
    return counts


@pytest.fixture(scope="module")
def trained_gpt2():
    """A GPT-2 (from a config) after 3 fp16-autocast steps, its .grad kept."""
    model, batches, loss = MODELS["gpt2"]()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    train(model, opt, batches, loss, 3)
    x, y = next(batches)
    with torch.autocast("cpu", dtype=torch.float16):
        loss(model(x), y).backward()
    return model


def check_against_torch(analysis, tensors, formats):
    checked = 0
    for name, x in tensors.items():
        for fmt in formats:
            expected = torch_counts(x, fmt)
            got = {k: analysis.measure(name, fmt, k) for k in expected}
            assert got == expected, f"{name} in {fmt}: fmtcheck {got}, torch {expected}"
            checked += 1
    return checked


def test_model_parameters_and_gradients_match_torchs_casts(trained_gpt2):
    a = ft.analyze(trained_gpt2)
    params = dict(trained_gpt2.named_parameters())
    tensors = {f"{n}:weight": p.detach() for n, p in params.items()}
    tensors.update({f"{n}:grad": p.grad for n, p in params.items()})
    assert {r["tensor"] for r in a.results} == set(tensors)
    assert check_against_torch(a, tensors, TORCH_DTYPES) == 4 * len(tensors)


def test_scaled_state_dict_overflows_as_torch_casts_do(trained_gpt2):
    # Scaled up and down so that every format overflows and underflows somewhere.
    sd = {f"{k}*{s}": v * s for k, v in trained_gpt2.state_dict().items() if v.is_floating_point()
          for s in (2.0 ** 14, 2.0 ** -20)}
    a = ft.analyze(sd, ["fp16", "bf16", "e4m3", "e5m2"])
    check_against_torch(a, sd, TORCH_DTYPES)
    assert sum(r["measures"]["overflow"] for r in a.results) > 0
    assert sum(r["measures"]["underflow_to_zero"] for r in a.results) > 0


def test_state_dict_leaves_out_integer_buffers():
    m = torch.nn.BatchNorm1d(4)
    a = ft.analyze(m.state_dict(), "fp16")
    assert sorted(r["tensor"] for r in a.results) == ["bias", "running_mean", "running_var", "weight"]


@pytest.mark.parametrize("dtype,fmt", [(torch.bfloat16, "bf16"), (torch.float16, "fp16"),
                                       (torch.float8_e4m3fn, "e4m3"), (torch.float8_e5m2, "e5m2"),
                                       (torch.float8_e4m3fnuz, "e4m3fnuz"), (torch.float8_e5m2fnuz, "e5m2fnuz")])
def test_low_precision_tensors_are_read_as_their_codes(dtype, fmt):
    x = (torch.randn(1000, generator=torch.Generator().manual_seed(1)) * 30).to(dtype)
    a = ft.analyze(x, "fp16,e4m3")
    # The same values given as float32 (every code of these formats is a float32) measure the same.
    b = ft.analyze(x.float(), "fp16,e4m3")
    assert a.results == b.results
    # Their codes given to fmtcheck as codes of `fmt` decode to the same values torch gives.
    codes = x.view(torch.uint8 if x.element_size() == 1 else torch.int16).numpy().view(
        np.uint8 if x.element_size() == 1 else np.uint16)
    assert np.array_equal(fmtcheck.decode(codes, fmt), x.float().numpy(), equal_nan=True)


def test_the_verdict_is_analyzes():
    x = {"a": torch.tensor([1e-9, 1.0, 70000.0]), "b": torch.tensor([3.0, 5.0])}
    v = ft.analyze(x, "fp16").verdict()
    assert v.startswith("fp16  at scale 1: 1 (20%) overflow (1 tensor), 1 (20%) underflow to zero (1 tensor).")
    assert all(len(line) <= 100 for line in v.splitlines())


def test_modules_big_and_small_in_host_batches():
    m = torch.nn.Sequential(*[torch.nn.Linear(32, 32) for _ in range(5)])
    whole = ft.analyze(m, "e4m3")
    batched = ft.analyze(m, "e4m3", max_host_bytes=1)  # one tensor a batch
    assert whole.results == batched.results and whole.outcomes == batched.outcomes


@pytest.mark.parametrize("obj,message", [
    (torch.nn.ReLU(), "the model (ReLU) has no parameters to analyze"),
    (torch.nn.Linear(2, 2, device="meta"), "tensor weight:weight is on the meta device"),
    (torch.zeros(3, dtype=torch.complex64), "tensor tensor has dtype torch.complex64, which fmtcheck does not read"),
    ({"x": [1.0]}, "obj['x'] is a list, not a torch tensor"),
    ({"n": torch.zeros(2, dtype=torch.int64)}, "obj holds no floating-point tensors to analyze"),
    ("model.pt", "obj is a str: expected an nn.Module, a state_dict, a dict of tensors or a tensor"),
])
def test_bad_input_is_one_error(obj, message):
    with pytest.raises(ft.Error) as e:
        ft.analyze(obj)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("options,message", [({"formats": "fp17"}, "fp17"), ({"round": "up"}, "up")])
def test_bad_options_are_the_same_error(options, message):
    with pytest.raises(ft.Error, match=message):
        ft.analyze(torch.ones(3), **options)


def test_progress_bar_on_request(capsys):
    pytest.importorskip("tqdm", reason="the progress bar is tqdm's: pip install tqdm")
    m = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(3)])
    ft.analyze(m, "fp16", progress=True)
    assert "fmtcheck analyze" in capsys.readouterr().err
    ft.analyze(m, "fp16", progress=False)
    assert capsys.readouterr().err == ""
