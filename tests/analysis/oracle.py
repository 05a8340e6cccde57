"""Independent reference for `fmtcheck analyze`: every measure computed with
numpy and ml_dtypes casts, never with fmtcheck."""
import ml_dtypes
import numpy as np

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


def cast(x32, fmt, sat):
    """x32 (float32) rounded to nearest-even in fmt, as float64; with sat,
    overflow and infinities clamp to +-max (CUDA SATFINITE)."""
    if sat:
        top = np.float32(finfo(fmt).max)
        x32 = np.where(np.isnan(x32), x32, np.clip(x32, -top, top)).astype(np.float32)
    return x32.astype(DTYPES[fmt]).astype(np.float64)


def saturated_count(x32, fmt):
    limit, inclusive = saturation_threshold(fmt)
    a = np.abs(x32.astype(np.float64))
    return int(np.sum(a >= limit if inclusive else a > limit))


def conversion_measures(x32, r, scale, fmt, sat):
    """Counts and errors of results r (float64) for inputs x32 scaled by scale."""
    x = x32.astype(np.float64)
    scaled = (x32 * np.float32(scale)).astype(np.float32)
    deq = r / np.float64(np.float32(scale))
    fin = np.isfinite(x) & np.isfinite(r)
    err = np.abs(deq[fin] - x[fin])
    nz = x[fin] != 0
    rel = err[nz] / np.abs(x[fin][nz])
    tiny = float(finfo(fmt).smallest_normal)
    m = {
        "values": x.size,
        "exact": int(np.sum(deq == x)),
        "inexact": int(np.sum(np.isfinite(scaled) & (r != scaled.astype(np.float64)))),
        "overflow": int(np.sum(np.isfinite(x) & ~np.isfinite(r))),
        "saturated": saturated_count(scaled, fmt) if sat else 0,
        "underflow_to_zero": int(np.sum(np.isfinite(scaled) & (scaled != 0) & (r == 0))),
        "subnormal": int(np.sum(np.isfinite(r) & (r != 0) & (np.abs(r) < tiny))),
        "nan_in": int(np.sum(np.isnan(x))),
        "inf_in": int(np.sum(np.isinf(x))),
        "nan_produced": int(np.sum(~np.isnan(scaled) & np.isnan(r))),
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


def analyze(x32, fmt, scale=1.0, sat=False):
    """Everything `fmtcheck analyze --csv` reports for one tensor and format."""
    x32 = np.asarray(x32, dtype=np.float32).ravel()
    scaled = (x32 * np.float32(scale)).astype(np.float32)
    m = conversion_measures(x32, cast(scaled, fmt, sat), scale, fmt, sat)
    finite = x32[np.isfinite(x32)].astype(np.float64)
    amax = float(np.abs(finite).max()) if finite.size else 0.0
    m["amax"] = amax
    if amax > 0:
        k = best_pow2_exponent(amax, fmt)
        s = np.float32(2.0 ** k)
        at_best = cast((x32 * s).astype(np.float32), fmt, sat)
        sx = (x32 * s).astype(np.float32)
        m["best_pow2_scale"] = 2.0 ** k
        m["underflow_at_best_pow2_scale"] = float(np.sum(np.isfinite(sx) & (sx != 0) & (at_best == 0))) / x32.size
    return m


def binades(x32):
    """floor(log2|x|) of nonzero finite values -> count."""
    x = np.asarray(x32, dtype=np.float32).ravel().astype(np.float64)
    x = x[np.isfinite(x) & (x != 0)]
    _, e = np.frexp(x)
    values, counts = np.unique(e - 1, return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))
