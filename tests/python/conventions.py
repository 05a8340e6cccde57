"""The differences from an oracle that a named convention or a documented
oracle quirk explains, each checked rather than just tolerated: an explained
difference is one where fmtcheck's bits are exactly what its documented rule
(lib/src/core/nan_rules.cpp, DESIGN.md) gives, computed here from the float32 bits.

Every function takes the float32 inputs, fmtcheck's bits and the oracle's
bits of one chunk and returns the mask of differences it explains.
"""
import numpy as np


def float32_fields(x):
    u = x.view(np.uint32)
    return u >> np.uint32(31), (u >> np.uint32(23)) & np.uint32(0xFF), u & np.uint32(0x7FFFFF)


def ieee_nan_bits(target, x):
    """fmtcheck's --nan ieee result for a NaN input into an IEEE-style format
    (x86 F16C's rule): quiet NaN, the input's sign, the top mantissa bits of
    its payload."""
    e, m = target.exponent_bits, target.mantissa_bits
    sign, _, mant = (f.astype(np.uint64) for f in float32_fields(x))
    code = (sign << np.uint64(e + m)) | np.uint64(((1 << e) - 1) << m) | np.uint64(1 << (m - 1)) \
        | (mant >> np.uint64(23 - m))
    return code << np.uint64(target.pad_bits)


def nan_payload_dropped(target, x, got, want):
    """ml_dtypes (bfloat16, float8_e5m2) makes every NaN the default quiet NaN
    with the input's sign, dropping the payload; fmtcheck's ieee convention
    keeps the payload's top bits (0x7fc12345 -> bf16 0x7fc1, ml_dtypes 0x7fc0)."""
    nan_in = np.isnan(x)
    return nan_in & (got.astype(np.uint64) == ieee_nan_bits(target, x)) \
        & ((want & np.uint64(target.sign_bit)) == (got & np.uint64(target.sign_bit)))


def numpy_keeps_signaling(target, x, got, want):
    """numpy float16 keeps a signaling NaN signaling (0x7f800001 -> 0x7c01,
    quiet bit clear); fmtcheck's ieee convention quiets it (0x7e00), as F16C
    does. Quiet NaN inputs must agree exactly."""
    _, _, mant = float32_fields(x)
    signaling = np.isnan(x) & ((mant & np.uint32(0x400000)) == 0)
    return signaling & (got.astype(np.uint64) == ieee_nan_bits(target, x))


def nan_into_no_nan_format(target, x, got, want):
    """MX FP6/FP4 have no NaN. ml_dtypes turns a NaN into a zero of the
    opposite sign (+NaN -> 0x20 = -0 in FP6, -NaN -> +0): junk. fmtcheck's
    ieee convention gives the zero with the NaN's sign (nan_rules.cpp)."""
    sign, _, _ = float32_fields(x)
    expected = np.where(sign == 1, target.sign_bit, 0)
    return np.isnan(x) & (got == expected)


def e8m0_ties_to_even_code(target, x, got, want):
    """E8M0 ties: x = 1.5 * 2^k lies halfway between 2^k (code c = k + 127)
    and 2^(k+1) (code c + 1). fmtcheck (like gfloat) rounds to the even code;
    ml_dtypes always rounds away, because its ties-to-even test looks at a
    mantissa bit E8M0 lacks."""
    with np.errstate(invalid="ignore"):  # signaling NaN inputs
        frac, exp = np.frexp(x.astype(np.float64))  # x = frac * 2^exp, frac in [0.5, 1)
    tie = (x > 0) & (frac == 0.75) & (exp - 1 >= -127)
    code = (exp - 1 + 127).astype(np.int64)
    even = code + (code & 1)
    return tie & (got.astype(np.int64) == even) & (want.astype(np.int64) == code + 1)


def e8m0_subnormal_input_rounds_up(target, x, got, want):
    """ml_dtypes quirk found here: every float32 subnormal input above 2^-127
    (bits 0x00400001..0x007fffff) becomes code 1 (2^-126), even those below
    the midpoint 1.5 * 2^-127 that are nearer to 2^-127 (code 0), e.g.
    1.2 * 2^-127. Round to nearest gives code 0 there (as gfloat does)."""
    u = x.view(np.uint32)
    below_midpoint = (u > np.uint32(0x400000)) & (u < np.uint32(0x600000))
    return below_midpoint & (got == 0) & (want == 1)


# Per format: the conventions that may explain a difference from ml_dtypes/numpy.
EXPLAINED = {
    "fp16": [numpy_keeps_signaling],
    "bf16": [nan_payload_dropped],
    "e5m2": [nan_payload_dropped],
    "e4m3": [],
    "e4m3fnuz": [],
    "e5m2fnuz": [],
    "e2m3": [nan_into_no_nan_format],
    "e3m2": [nan_into_no_nan_format],
    "e2m1": [nan_into_no_nan_format],
    "e8m0": [e8m0_ties_to_even_code, e8m0_subnormal_input_rounds_up],
}
