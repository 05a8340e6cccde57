"""torch._scaled_mm under fmtcheck.torch.emulate: the FP8 operands' codes on the preset's tensor
core (fmtcheck.gemm). Against torch's own CPU _scaled_mm on exactly computable data (FP8 integers,
power-of-two scales: every accumulation order agrees); the accumulation mode each use_fast_accum
selects, against fmtcheck.gemm on the same codes, on data where the two differ; a bfloat16 result
is torch's cast of the float32 one; what it does not model is one Error, or torch's result with
a warning."""

import warnings

import numpy as np
import pytest
import torch

import fmtcheck
import fmtcheck.torch as ft

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
ONE = torch.tensor(1.0)


def fp8_ints(rows, cols, dtype, seed, hi=8):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-hi, hi + 1, (rows, cols), generator=g).float().to(dtype)


@pytest.mark.parametrize("types", [(E4M3, E4M3), (E4M3, E5M2)])
@pytest.mark.parametrize("out", [torch.float32, torch.bfloat16])
def test_scaled_mm_against_torch_on_exact_data(types, out):
    a, b = fp8_ints(8, 32, types[0], seed=1), fp8_ints(16, 32, types[1], seed=2).t()  # b column-major
    sa, sb = torch.tensor(0.5), torch.tensor(4.0)
    want = torch._scaled_mm(a, b, sa, sb, out_dtype=out)
    for fast in (True, False):
        with ft.emulate("fp8-current", "hopper"):
            got = torch._scaled_mm(a, b, sa, sb, out_dtype=out, use_fast_accum=fast)
        assert got.dtype == out and torch.equal(got, want)
    assert want.float().abs().max() > 256  # bf16 rounds some


def cancelling():
    """K = 256 products: in each block of 128 a large pair cancels leaving small ones, which the
    whole-K accumulation on Hopper's FP8 tensor core loses part of and promotion every 128 keeps."""
    g = torch.Generator().manual_seed(3)
    a = torch.randn(4, 256, generator=g)
    b = torch.randn(8, 256, generator=g)
    a[:, 0], a[:, 1], b[:, 0], b[:, 1] = 256.0, -256.0, 448.0, 448.0
    return a.to(E4M3), b.to(E4M3).t()


def codes(t):
    return t.contiguous().view(torch.uint8).numpy()


def test_use_fast_accum_selects_the_accumulation():
    a, b = cancelling()
    got = {}
    for fast in (True, False):
        with ft.emulate("fp8-current", "hopper"):
            got[fast] = torch._scaled_mm(a, b, ONE, ONE, out_dtype=torch.float32, use_fast_accum=fast)
        d = fmtcheck.gemm(codes(a), codes(b), model="hopper-wgmma", input="e4m3", promote_every=0 if fast else 128)
        assert np.array_equal(got[fast].numpy(), d)
    assert not torch.equal(got[True], got[False])


def test_bf16_result_is_torchs_cast_of_the_float32_one():
    a, b = cancelling()
    with ft.emulate("fp8-current", "hopper"):
        f32 = torch._scaled_mm(a, b, ONE, ONE, out_dtype=torch.float32)
        low = torch._scaled_mm(a, b, ONE, ONE, out_dtype=torch.bfloat16)
    assert torch.equal(low, f32.to(torch.bfloat16))


BAD = {
    "row-wise scales": dict(scale_a=torch.ones(4, 1), scale_b=torch.ones(1, 8)),
    "bias": dict(bias=torch.zeros(8, dtype=torch.bfloat16), out_dtype=torch.bfloat16),
    "fp8 result": dict(out_dtype=E4M3),
}


@pytest.mark.parametrize("case", BAD)
def test_unmodelled_scaled_mm_is_one_error_or_torch_with_a_warning(case):
    a, b = fp8_ints(4, 32, E4M3, seed=1), fp8_ints(8, 32, E4M3, seed=2).t()
    kw = {"scale_a": ONE, "scale_b": ONE, "out_dtype": torch.float32} | BAD[case]
    with ft.emulate("fp8-current", "hopper"), pytest.raises(ft.Error, match="_scaled_mm") as e:
        torch._scaled_mm(a, b, **kw)
    assert "\n" not in str(e.value)
    with ft.emulate("fp8-current", "hopper", unsupported="warn"), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = torch._scaled_mm(a, b, **kw)
    assert torch.equal(got.float(), torch._scaled_mm(a, b, **kw).float())
    assert len(w) == 1 and "_scaled_mm ran in torch" in str(w[0].message)
