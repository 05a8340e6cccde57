"""float32 inputs that exercise a format: every boundary case (each value,
each tie between neighbours, the float32 numbers either side of both, max,
the overflow tie above max, min subnormal and half of it, zeros, infinities,
NaNs) and random inputs concentrated on the format's range."""
import ml_dtypes
import numpy as np

SPECIALS = np.concatenate([
    np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 2.0**-149, -(2.0**-149),
              np.finfo(np.float32).max, -np.finfo(np.float32).max, 2.0**-126], dtype=np.float32),
    # NaNs with payloads, quiet and signaling, both signs
    np.array([0x7FC12345, 0xFFC12345, 0x7F800001, 0xFF812345, 0x7FFFFFFF], dtype=np.uint32).view(np.float32),
])


def _around(values):
    """Each value and its float32 neighbours, both signs."""
    with np.errstate(over="ignore"):  # twice E8M0's max is beyond float32: inf
        v = np.unique(values.astype(np.float32))
    v = v[np.isfinite(v)]
    near = np.concatenate([v, np.nextafter(v, np.float32(np.inf)), np.nextafter(v, np.float32(-np.inf))])
    return np.concatenate([near, -near])


def code_values(target):
    """Every finite value of an 8-bit format, decoded by ml_dtypes."""
    codes = np.arange(1 << (target.storage_bits), dtype=np.uint64)
    codes = codes[codes < (1 << (1 + target.exponent_bits + target.mantissa_bits))]
    values = codes.astype(np.uint8).view(target.ml_dtype).astype(np.float64)
    return np.unique(np.abs(values[np.isfinite(values)]))


def _tf32_edges():
    """tf32 keeps the top 10 of float32's 23 mantissa bits: ulp = 0x2000,
    the tie is 0x1000 past a tf32 value. For every float32 binade: the
    binade edge, ties after even and odd codes, the top tie that carries into
    the next binade, and the float32 numbers either side of each."""
    exps = np.arange(256, dtype=np.uint32) << np.uint32(23)
    mants = np.array([0, 0x1000, 0x3000, 0x400000, 0x7FF000], dtype=np.uint32)
    bits = (exps[:, None] | mants[None, :]).ravel()
    return bits.view(np.float32)


def fraction_points(values, parts):
    """The points j/parts of the way between neighbouring magnitudes in
    values (j = 1 .. parts - 1), both signs: the ties stochastic rounding
    with sr-rne meets when it rounds the fraction to log2(parts) - 1 bits."""
    v = np.unique(np.abs(values[np.isfinite(values)]))
    j = np.arange(1, parts, dtype=np.float64)[:, None]
    points = (v[:-1] + (v[1:] - v[:-1]) * j / parts).ravel().astype(np.float32)
    return np.concatenate([points, -points])


def boundary_inputs(target):
    if target.name == "tf32":
        edges = _tf32_edges()
    else:
        v = code_values(target)
        mids = (v[1:] + v[:-1]) / 2
        top = v[-1] + (v[-1] - v[-2]) / 2  # the overflow tie above max
        edges = np.concatenate([v, mids, [top, 2 * v[-1], v[v > 0][0] / 2, v[v > 0][0] / 4]])
    return np.concatenate([SPECIALS, _around(edges)]).astype(np.float32)


def random_inputs(target, count, rng):
    """One input in eight is any float32 bit pattern (NaNs, infinities, far
    out of range); the rest have exponents from three binades below the
    format's smallest subnormal to two above its largest value."""
    bias = target.gfloat.bias
    lo = max(1, 127 - bias - target.mantissa_bits - 3)
    hi = min(254, 127 + (1 << target.exponent_bits) - bias + 2)
    return random_float32(lo, hi, count, rng)


def random_float32(lo, hi, count, rng):
    """count float32 inputs: one in eight any bit pattern, the rest with a
    random sign and mantissa and an exponent field from lo to hi."""
    n_any = count // 8
    any_bits = rng.integers(0, 1 << 32, n_any, dtype=np.uint64).astype(np.uint32)
    exp = rng.integers(lo, hi + 1, count - n_any, dtype=np.uint32)
    bits = (rng.integers(0, 2, exp.size, dtype=np.uint32) << np.uint32(31)) | (exp << np.uint32(23)) \
        | rng.integers(0, 1 << 23, exp.size, dtype=np.uint32)
    return np.concatenate([any_bits, bits]).view(np.float32)
