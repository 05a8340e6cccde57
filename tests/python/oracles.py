"""The independent implementations each fmtcheck format is compared with,
and what the DESIGN.md table says about each format's layout.

Nothing here calls fmtcheck: expected values come from numpy, ml_dtypes and
gfloat (or from the one-line encoding rules quoted from DESIGN.md).
"""
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from gfloat import Domain, FormatInfo, RoundMode, encode_ndarray, round_ndarray
from gfloat import formats as gf


def _fnuz(name, precision, bias):
    # gfloat has no fnuz preset; this is the fnuz layout of DESIGN.md in
    # gfloat's vocabulary: no infinity, no -0 (its code is the only NaN).
    return FormatInfo(name, 8, precision, bias=bias, is_signed=True, domain=Domain.Finite, has_nz=False,
                      num_high_nans=0, has_subnormals=True, is_twos_complement=False)


# tf32 as gfloat sees it: a 19-bit IEEE format (1 + 8 + 10, bias 127).
_TF32 = FormatInfo("tf32", 19, 11, bias=127, is_signed=True, domain=Domain.Extended, has_nz=True,
                   num_high_nans=2**10 - 1, has_subnormals=True, is_twos_complement=False)


@dataclass(frozen=True)
class Target:
    name: str             # fmtcheck's name
    exponent_bits: int
    mantissa_bits: int
    storage_bits: int     # container width of a sweep element
    pad_bits: int         # zero bits below the code in its container (tf32: 13)
    sign_bit: int         # code bit of the sign, 0 for unsigned formats
    ml_dtype: object      # ml_dtypes / numpy type, or None
    gfloat: FormatInfo    # gfloat's description, or None
    has_nan: bool


TARGETS = {t.name: t for t in [
    Target("fp16", 5, 10, 16, 0, 0x8000, np.float16, gf.format_info_binary16, True),
    Target("bf16", 8, 7, 16, 0, 0x8000, ml_dtypes.bfloat16, gf.format_info_bfloat16, True),
    Target("tf32", 8, 10, 32, 13, 0x40000, None, _TF32, True),
    Target("e4m3", 4, 3, 8, 0, 0x80, ml_dtypes.float8_e4m3fn, gf.format_info_ocp_e4m3, True),
    Target("e5m2", 5, 2, 8, 0, 0x80, ml_dtypes.float8_e5m2, gf.format_info_ocp_e5m2, True),
    Target("e4m3fnuz", 4, 3, 8, 0, 0x80, ml_dtypes.float8_e4m3fnuz, _fnuz("e4m3fnuz", 4, 8), True),
    Target("e5m2fnuz", 5, 2, 8, 0, 0x80, ml_dtypes.float8_e5m2fnuz, _fnuz("e5m2fnuz", 3, 16), True),
    Target("e2m3", 2, 3, 8, 0, 0x20, ml_dtypes.float6_e2m3fn, gf.format_info_ocp_e2m3, False),
    Target("e3m2", 3, 2, 8, 0, 0x20, ml_dtypes.float6_e3m2fn, gf.format_info_ocp_e3m2, False),
    Target("e2m1", 2, 1, 8, 0, 0x08, ml_dtypes.float4_e2m1fn, gf.format_info_ocp_e2m1, False),
    Target("e8m0", 8, 0, 8, 0, 0, ml_dtypes.float8_e8m0fnu, gf.format_info_ocp_e8m0, True),
]}

# fmtcheck --round name -> gfloat's RoundMode. fmtcheck's sr rounds away iff
# floor(frac * 2^n) + r >= 2^n, which for an integer r is gfloat's
# StochasticFastest test frac + r * 2^-n >= 1; sr-rne rounds frac * 2^n to
# nearest even instead of down, as gfloat's Stochastic does, sr-rno to
# nearest odd (StochasticOdd), and sr-rna to nearest, ties away: gfloat's
# StochasticFast test frac + (2r + 1) * 2^-(n+1) >= 1 is
# frac * 2^n + 1/2 + r >= 2^n.
GFLOAT_MODE = {
    "rne": RoundMode.TiesToEven,
    "rna": RoundMode.TiesToAway,
    "rtz": RoundMode.TowardZero,
    "rup": RoundMode.TowardPositive,
    "rdn": RoundMode.TowardNegative,
    "sr": RoundMode.StochasticFastest,
    "sr-rne": RoundMode.Stochastic,
    "sr-rna": RoundMode.StochasticFast,
    "sr-rno": RoundMode.StochasticOdd,
}


def ml_dtypes_bits(target, x):
    """Container bits of ml_dtypes' (numpy's for fp16) cast of float32 x: RNE, no saturation."""
    with np.errstate(invalid="ignore", over="ignore"):
        y = x.astype(target.ml_dtype)
    return y.view(np.uint16 if target.storage_bits == 16 else np.uint8)


def gfloat_domain(target, x):
    """Mask of the inputs gfloat can round into `target`. gfloat raises or
    returns junk for NaN into a format without NaN, for anything below the
    lowest binade of a format without subnormals (E8M0: it rounds within the
    input's own binade) and for negative numbers or zeros into an unsigned
    format. The tests check those inputs separately, against ml_dtypes or
    the rule DESIGN.md / round_to_format.cpp states."""
    fi = target.gfloat
    ok = np.ones(x.shape, dtype=bool)
    if not target.has_nan:
        ok &= ~np.isnan(x)
    if not fi.is_signed:
        ok &= (x > 0) | np.isnan(x)
    if not fi.has_subnormals:
        ok &= ~(np.abs(x) < 2.0 ** -fi.bias)  # the lowest binade of E8M0 is 2^-127
    return ok


def gfloat_bits(target, x, mode, sat, srbits=None, srnumbits=0):
    """Container bits of gfloat's rounding of float32 x (inside gfloat_domain).
    gfloat works in the input's float type; float64 keeps every float32 and
    every intermediate of these formats exact."""
    # Formats without infinity or NaN (MX FP6/FP4) can only saturate, as
    # ml_dtypes' cast does too; gfloat raises there unless told sat=True.
    sat = sat or not target.has_nan
    kwargs = {}
    if srbits is not None:
        kwargs = {"srbits": srbits.astype(np.int64), "srnumbits": srnumbits}
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and overflow are expected inputs
        x64 = x.astype(np.float64)
        r = round_ndarray(target.gfloat, x64, GFLOAT_MODE[mode], sat, **kwargs)
        code = encode_ndarray(target.gfloat, r).astype(np.uint64)
    return code << np.uint64(target.pad_bits)


def is_nan_bits(target, bits):
    """NaN-ness of container bits, decoded by ml_dtypes / numpy (tf32 as the float32 it lives in)."""
    if target.name == "tf32":
        return np.isnan(bits.astype(np.uint32).view(np.float32))
    if not target.has_nan:
        return np.zeros(bits.shape, dtype=bool)
    w = np.uint16 if target.storage_bits == 16 else np.uint8
    return np.isnan(bits.astype(w).view(target.ml_dtype).astype(np.float32))
