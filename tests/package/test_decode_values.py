"""decode of every code of every format of at most 16 bits (and tf32's 2^19)
against ml_dtypes and numpy; values() and ranges() against the same."""
import ml_dtypes
import numpy as np
import pytest
from gfloat import Domain, FormatInfo, decode_ndarray

import fmtcheck

# fmtcheck format -> the ml_dtypes / numpy type that decodes it.
DECODERS = {
    "fp16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
    "e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "e5m2fnuz": ml_dtypes.float8_e5m2fnuz, "e2m3": ml_dtypes.float6_e2m3fn,
    "e3m2": ml_dtypes.float6_e3m2fn, "e2m1": ml_dtypes.float4_e2m1fn, "e8m0": ml_dtypes.float8_e8m0fnu,
    # user formats that ml_dtypes has under other names
    "e3m4": ml_dtypes.float8_e3m4, "e4m3ieee": ml_dtypes.float8_e4m3, "e4m3fnuz_b11": ml_dtypes.float8_e4m3b11fnuz,
}


def every_code(name):
    width = fmtcheck._core.storage_bits(name)
    bits = fmtcheck.ranges(name)[0]["bits"]
    return np.arange(1 << bits, dtype=np.uint16 if width == 16 else np.uint8)


def same_values(got, want, nan_sign=True):
    """Equal values, NaN where NaN, the same signs (of NaN too, unless the oracle's NaN has none)."""
    signed = np.ones(got.shape, bool) if nan_sign else ~np.isnan(want)
    return np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got)[signed], np.signbit(want)[signed])


@pytest.mark.parametrize("name", list(DECODERS))
def test_every_code_decodes_as_ml_dtypes_does(name):
    codes = every_code(name)
    got = fmtcheck.decode(codes, name)
    want = codes.view(DECODERS[name]).astype(np.float32)
    assert got.dtype == np.float32
    assert same_values(got, want), name
    # An ml_dtypes array names its own format.
    assert same_values(fmtcheck.decode(codes.view(DECODERS[name])), want)


def test_every_tf32_code_is_the_float32_of_its_bits():
    codes = np.arange(1 << 19, dtype=np.uint32) << np.uint32(13)
    assert same_values(fmtcheck.decode(codes, "tf32"), codes.view(np.float32))


def test_fp64_and_wide_user_formats_decode_to_float64():
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 2**64, 100_000, dtype=np.uint64)
    got = fmtcheck.decode(codes, "fp64")
    assert got.dtype == np.float64 and same_values(got, codes.view(np.float64))
    # e8m23 is fp32's layout under another name; e11m20 is wider than float32 holds.
    codes32 = rng.integers(0, 2**32, 100_000, dtype=np.uint32)
    assert same_values(fmtcheck.decode(codes32, "e8m23"), codes32.view(np.float32))
    wide = fmtcheck.decode(codes32, "e11m20")
    assert wide.dtype == np.float64
    e11m20 = FormatInfo("e11m20", 32, 21, bias=1023, is_signed=True, domain=Domain.Extended, has_nz=True,
                        num_high_nans=2**20 - 1, has_subnormals=True, is_twos_complement=False)
    assert same_values(wide, decode_ndarray(e11m20, codes32.astype(np.int64)), nan_sign=False)  # gfloat's NaN is unsigned


@pytest.mark.parametrize("name", ["fp16", "bf16", "e4m3", "e2m1", "e8m0"])
def test_values_lists_every_code_with_its_value(name):
    v = fmtcheck.values(name)
    codes = every_code(name)
    assert v["code"] == [int(c) for c in codes]
    with np.errstate(invalid="ignore"):  # ml_dtypes' signaling NaNs
        want = codes.view(DECODERS[name]).astype(np.float64)
    assert same_values(np.array(v["value"]), want)
    nan = np.isnan(want)
    assert [c == "nan" for c in v["class"]] == list(nan)
    assert all(float(e) == w for e, w, n in zip(v["exact"], want, nan) if not n and e not in ("inf", "-inf"))


@pytest.mark.parametrize("name", ["fp16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m3", "e3m2", "e2m1"])
def test_ranges_match_ml_dtypes_finfo(name):
    facts = fmtcheck.ranges(name)[0]
    info = ml_dtypes.finfo(DECODERS[name])
    assert facts["max_finite"] == float(info.max)
    assert facts["min_normal"] == float(info.smallest_normal)
    assert facts["min_subnormal"] == float(info.smallest_subnormal)
    assert facts["epsilon"] == float(info.eps)
    assert facts["bits"] == info.bits if name not in ("e2m3", "e3m2", "e2m1") else True


def test_ranges_lists_every_preset_by_default():
    assert [r["format"] for r in fmtcheck.ranges()] == [
        "fp64", "fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m3", "e3m2", "e2m1", "e8m0"]
