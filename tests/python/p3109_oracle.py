"""gfloat's description of each IEEE P3109 binary8 member fmtcheck names,
the inputs that exercise one, and gfloat's conversions. Nothing here calls
fmtcheck."""
import numpy as np
from gfloat import Domain, Signedness, decode_ndarray, encode_ndarray, round_ndarray
from gfloat.formats import format_info_p3109

from oracles import GFLOAT_MODE
from sample_inputs import random_float32

# fmtcheck's name -> gfloat's FormatInfo, every member of the family:
# precision 1..7 signed, 1..8 unsigned, extended (with infinities) or finite.
MEMBERS = {
    f"binary8p{p}{'s' if signed else 'u'}{'e' if extended else 'f'}":
        format_info_p3109(8, p, Signedness.Signed if signed else Signedness.Unsigned,
                          Domain.Extended if extended else Domain.Finite)
    for signed in (True, False) for extended in (True, False) for p in range(1, 8 if signed else 9)
}

def code_values(fi):
    """Value of every code (NaN for the NaN code), decoded by gfloat."""
    return decode_ndarray(fi, np.arange(256, dtype=np.uint64))


def boundary_inputs(fi):
    """Every finite value of the member, every midpoint between neighbours
    (the ties), the overflow tie above max, twice max, half and a quarter of
    the smallest nonzero value, each with its float32 neighbours, both
    signs; plus zeros, infinities and NaNs with payloads."""
    v = code_values(fi)
    v = np.unique(np.abs(v[np.isfinite(v)]))
    mids = (v[1:] + v[:-1]) / 2
    top = v[-1] + (v[-1] - v[-2]) / 2
    smallest = v[v > 0][0]
    edges = np.concatenate([v, mids, [top, 2 * v[-1], smallest / 2, smallest / 4]]).astype(np.float32)
    edges = np.unique(edges[np.isfinite(edges)])
    near = np.concatenate([edges, np.nextafter(edges, np.float32(np.inf)), np.nextafter(edges, np.float32(-np.inf))])
    specials = np.concatenate([
        np.array([0.0, -0.0, np.inf, -np.inf, np.finfo(np.float32).max, 2.0**-149], dtype=np.float32),
        np.array([0x7FC12345, 0xFFC12345, 0x7F800001, 0xFF812345], dtype=np.uint32).view(np.float32)])
    return np.concatenate([specials, near, -near]).astype(np.float32)


def random_inputs(fi, count, rng):
    """One input in eight any float32 bit pattern; the rest with exponents
    from three binades below the smallest subnormal to two above max."""
    lo = max(1, 127 - fi.bias - fi.precision - 3)
    hi = min(254, 127 + int(np.floor(np.log2(fi.max))) + 2)
    return random_float32(lo, hi, count, rng)


def in_gfloat_domain(fi, x):
    """gfloat rounds a negative number into an unsigned member as if it were
    positive-signed junk (round_float takes the sign only where the format
    has one); those inputs are checked against the report's rule instead."""
    return np.ones(x.shape, dtype=bool) if fi.is_signed else ~(x < 0)


def gfloat_codes(fi, x, mode, overflow, srbits=None, srnumbits=0):
    """gfloat's code for each float32 x under fmtcheck's --round mode and
    --overflow sat|nosat|satprop. gfloat 0.5 has a saturation flag only:
    sat=True is SatFinite, sat=False OvfInf; SatPropagate is SatFinite for
    finite inputs and OvfInf for infinities (the report's definition)."""
    kwargs = {} if srbits is None else {"srbits": srbits.astype(np.int64), "srnumbits": srnumbits}
    with np.errstate(invalid="ignore", over="ignore"):  # NaN inputs and overflow are expected
        x64 = x.astype(np.float64)
        if overflow == "satprop":
            r = round_ndarray(fi, x64, GFLOAT_MODE[mode], True, **kwargs)
            special = ~np.isfinite(x64)
            special_kwargs = {} if srbits is None else {**kwargs, "srbits": kwargs["srbits"][special]}
            r[special] = round_ndarray(fi, x64[special], GFLOAT_MODE[mode], False, **special_kwargs)
        else:
            r = round_ndarray(fi, x64, GFLOAT_MODE[mode], overflow == "sat", **kwargs)
        return encode_ndarray(fi, r).astype(np.uint64)
