"""Independent reference for `fmtcheck analyze`: every measure computed with
numpy and ml_dtypes casts (gfloat for float64 input), never with fmtcheck."""
import gfloat
import ml_dtypes
import numpy as np
from gfloat import formats as gformats

DTYPES = {
    "fp16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "e2m3": ml_dtypes.float6_e2m3fn,
    "e3m2": ml_dtypes.float6_e3m2fn,
    "e2m1": ml_dtypes.float4_e2m1fn,
}


# ml_dtypes casts float64 to bfloat16 and the fp8 types through float32,
# rounding twice (1 + 2^-8 + 2^-35 becomes bf16 1, not 1 + 2^-7); gfloat
# rounds float64 once, so it is the oracle for float64 tensors.
GFLOAT = {
    "fp16": gformats.format_info_binary16,
    "bf16": gformats.format_info_bfloat16,
    "e4m3": gformats.format_info_ocp_e4m3,
    "e5m2": gformats.format_info_ocp_e5m2,
}


def finfo(fmt):
    return ml_dtypes.finfo(DTYPES[fmt])


def saturation_threshold(fmt):
    """|x| beyond which round-to-nearest-even leaves the finite range: half an
    ulp of the top binade above max, inclusive when max's last mantissa bit is 1."""
    info = finfo(fmt)
    top = float(info.max)
    ulp = 2.0 ** (np.floor(np.log2(top)) - info.nmant)
    inclusive = int(top / ulp) % 2 == 1
    return top + ulp / 2, inclusive


def as_input(x):
    """The values as fmtcheck reads them: float64 stays float64 (measured
    exactly), everything else widens to float32."""
    x = np.asarray(x).ravel()
    return x if x.dtype == np.float64 else x.astype(np.float32)


def scaled(x, scale):
    """x * scale in x's own precision (float32 or float64)."""
    return (x * x.dtype.type(np.float32(scale))).astype(x.dtype)


def cast(x, fmt, sat):
    """x (float32 or float64) rounded once to nearest-even in fmt, as float64;
    with sat, overflow and infinities clamp to +-max (CUDA SATFINITE)."""
    if x.dtype == np.float64:
        return np.asarray(gfloat.round_ndarray(GFLOAT[fmt], x, sat=sat), dtype=np.float64)
    if sat:
        top = x.dtype.type(finfo(fmt).max)
        x = np.where(np.isnan(x), x, np.clip(x, -top, top)).astype(x.dtype)
    return x.astype(DTYPES[fmt]).astype(np.float64)


def saturated_count(x32, fmt):
    limit, inclusive = saturation_threshold(fmt)
    a = np.abs(x32.astype(np.float64))
    return int(np.sum(a >= limit if inclusive else a > limit))


def conversion_measures(x_in, r, scale, fmt, sat):
    """Counts and errors of results r (float64) for inputs x_in scaled by scale."""
    x = x_in.astype(np.float64)
    scaled_in = scaled(x_in, scale)
    deq = r / np.float64(np.float32(scale))
    fin = np.isfinite(x) & np.isfinite(r)
    err = np.abs(deq[fin] - x[fin])
    nz = x[fin] != 0
    rel = err[nz] / np.abs(x[fin][nz])
    tiny = float(finfo(fmt).smallest_normal)
    m = {
        "values": x.size,
        "exact": int(np.sum(deq == x)),
        "inexact": int(np.sum(np.isfinite(scaled_in) & (r != scaled_in.astype(np.float64)))),
        "overflow": int(np.sum(np.isfinite(x) & ~np.isfinite(r))),
        "saturated": saturated_count(scaled_in, fmt) if sat else 0,
        "underflow_to_zero": int(np.sum(np.isfinite(scaled_in) & (scaled_in != 0) & (r == 0))),
        "subnormal": int(np.sum(np.isfinite(r) & (r != 0) & (np.abs(r) < tiny))),
        "nan_in": int(np.sum(np.isnan(x))),
        "inf_in": int(np.sum(np.isinf(x))),
        "nan_produced": int(np.sum(~np.isnan(scaled_in) & np.isnan(r))),
        "max_abs_error": float(err.max()) if err.size else 0.0,
        "max_rel_error": float(rel.max()) if rel.size else 0.0,
        "mean_rel_error": float(rel.mean()) if rel.size else 0.0,
        "rms_rel_error": float(np.sqrt(np.mean(rel * rel))) if rel.size else 0.0,
    }
    return m


def best_pow2_exponent(amax, fmt):
    """Largest k with amax * 2^k <= max finite, by exact doubling/halving."""
    top = float(finfo(fmt).max)
    k = 0
    while np.ldexp(amax, k) > top:
        k -= 1
    while np.ldexp(amax, k + 1) <= top:
        k += 1
    return int(np.clip(k, -126, 127))


def analyze(x, fmt, scale=1.0, sat=False):
    """Everything `fmtcheck analyze --csv` reports for one tensor and format."""
    x = as_input(x)
    m = conversion_measures(x, cast(scaled(x, scale), fmt, sat), scale, fmt, sat)
    finite = x[np.isfinite(x)].astype(np.float64)
    amax = float(np.abs(finite).max()) if finite.size else 0.0
    m["amax"] = amax
    if amax > 0:
        k = best_pow2_exponent(amax, fmt)
        sx = scaled(x, 2.0 ** k)
        at_best = cast(sx, fmt, sat)
        m["best_pow2_scale"] = 2.0 ** k
        m["underflow_at_best_pow2_scale"] = float(np.sum(np.isfinite(sx) & (sx != 0) & (at_best == 0))) / x.size
    return m


def binades(x):
    """The histogram rows of `fmtcheck analyze --histogram-csv`, as
    {binade: count}: floor(log2|x|) of the nonzero finite values (as text),
    then "zero", "infinite" and "not_a_number" (both signs), always present."""
    x = as_input(x).astype(np.float64)
    nonzero = x[np.isfinite(x) & (x != 0)]
    _, e = np.frexp(nonzero)
    values, counts = np.unique(e - 1, return_counts=True)
    rows = {str(v): c for v, c in zip(values.tolist(), counts.tolist())}
    rows.update(zero=int(np.sum(x == 0)), infinite=int(np.sum(np.isinf(x))), not_a_number=int(np.sum(np.isnan(x))))
    return rows
