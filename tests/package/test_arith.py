"""Element-wise arithmetic against numpy in float64 rounded by ml_dtypes:
for operands of at most 8 bits' precision float64 holds every sum, product
and fma exactly, and the quotient and square root rounded to float64, then
float32 (ml_dtypes' path), then the format round like the exact result
(double rounding is innocuous when each intermediate has at least 2p + 2
bits: Figueroa, "When is double rounding innocuous?", 1995). The inexact
count is checked against the exact float64 result."""
import itertools

import ml_dtypes
import numpy as np
import pytest

import fmtcheck

OPS = {
    "add": (fmtcheck.add, np.add),
    "sub": (fmtcheck.sub, np.subtract),
    "mul": (fmtcheck.mul, np.multiply),
    "div": (fmtcheck.div, np.divide),
}


def finite_codes(dtype):
    codes = np.arange(256, dtype=np.uint8).view(dtype)
    return codes[np.isfinite(codes.astype(np.float32))]


def check(got, exact64, dtype):
    with np.errstate(all="ignore"):
        want = exact64.astype(dtype)
    g, w = got.codes.astype(np.float64), want.astype(np.float64)
    assert np.array_equal(g, w, equal_nan=True)
    finite = np.isfinite(w) & (w != 0)
    assert np.array_equal(np.signbit(g)[finite], np.signbit(w)[finite])
    return g


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("dtype", [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2])
def test_every_pair_of_fp8_operands(op, dtype):
    values = finite_codes(dtype)
    a, b = (v.ravel() for v in np.meshgrid(values, values))
    if op == "div":
        keep = b.astype(np.float64) != 0
        a, b = a[keep], b[keep]
    ours, theirs = OPS[op]
    got = ours(a, b)
    with np.errstate(all="ignore"):
        exact = theirs(a.astype(np.float64), b.astype(np.float64))
    g = check(got, exact, dtype)
    if op != "div":  # float64 holds these exactly: the inexact count is exact
        assert got.flags["inexact"] == np.count_nonzero((g != exact) & np.isfinite(exact))
    assert got.flags["values"] == a.size


@pytest.mark.parametrize("op", list(OPS))
def test_random_bf16_operands(op):
    rng = np.random.default_rng(list(OPS).index(op))
    a = (rng.standard_normal(200_000) * 4.0 ** rng.integers(-20, 20, 200_000)).astype(ml_dtypes.bfloat16)
    b = (rng.standard_normal(200_000) * 4.0 ** rng.integers(-20, 20, 200_000)).astype(ml_dtypes.bfloat16)
    ours, theirs = OPS[op]
    with np.errstate(all="ignore"):
        exact = theirs(a.astype(np.float64), b.astype(np.float64))
    check(ours(a, b, threads=2), exact, ml_dtypes.bfloat16)


def test_fma_of_random_e4m3_triples():
    rng = np.random.default_rng(11)
    values = finite_codes(ml_dtypes.float8_e4m3fn)
    a, b, c = (rng.choice(values, 300_000) for _ in range(3))
    exact = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
    got = fmtcheck.fma(a, b, c)
    g = check(got, exact, ml_dtypes.float8_e4m3fn)
    assert got.flags["inexact"] == np.count_nonzero((g != exact) & np.isfinite(exact))


def test_sqrt_of_every_bf16_code():
    codes = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16)
    with np.errstate(all="ignore"):
        exact = np.sqrt(codes.astype(np.float64))
    check(fmtcheck.sqrt(codes), exact, ml_dtypes.bfloat16)


def test_floats_are_converted_first_and_policy_applies():
    # 448 + 32 = 480 lies beyond the tie 464 between max (448) and the NaN code: NaN, or 448 saturated.
    assert np.isnan(fmtcheck.add([448.0], [32.0], "e4m3").codes.astype(np.float32))[0]
    assert fmtcheck.add([448.0], [32.0], "e4m3", overflow="sat").codes.astype(np.float32)[0] == 448
    r = fmtcheck.mul([1.125], [1.125], "e4m3", round="rtz")  # 1.265625 -> 1.25 toward zero
    assert r.codes.astype(np.float32)[0] == 1.25 and r.flags["inexact"] == 1
    assert fmtcheck.minimum([-0.0, 1.0], [0.0, np.nan], "fp16").codes.view(np.uint16).tolist() == [0x8000, 0x7E00]
    assert fmtcheck.maximum([-0.0, 2.0], [0.0, 1.0], "fp16").codes.astype(np.float32).tolist() == [0.0, 2.0]
