"""AMD matrix cores as Khattak & Mikaitis's published models describe them
(MATLAB-tensor-core, models/MI100MC.m, MI210MC.m, MI300MC.m and
tools/Generic_BFMA_TC.m), written again in exact rational arithmetic: an
oracle for fmtcheck's mi100 ... mi300x presets that shares no code with it.

Every function takes the operands and C as Fractions (C an fp32 value; a
float for infinities and NaN), the operand types as a pair (A's, B's), and
returns the fp32 result the same way. Zeros carry no sign here: the models
have no -0.
"""
import math
from fractions import Fraction as Q

MIN_EXPONENT = {"fp16": -14, "bf16": -126, "tf32": -126, "e4m3fnuz": -7, "e5m2fnuz": -15}
FP32_MIN = Q(2) ** -126


def binade(x):  # floor(log2 |x|), x != 0
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e if abs(x) >= Q(2) ** e else e - 1


def align(x, min_exponent):  # the exponent hardware aligns by: a subnormal counts as the lowest binade
    return max(binade(x), min_exponent)


def round_fp32(x):
    """Nearest even to fp32, subnormals kept; infinities and NaN pass through."""
    if isinstance(x, float) or x == 0:
        return x
    step = Q(2) ** (max(binade(x), -126) - 23)
    q, r = divmod(abs(x), step)
    if r > step / 2 or (r == step / 2 and q % 2):
        q += 1
    if q * step >= Q(2) ** 128:
        return math.copysign(math.inf, x)
    return q * step if x > 0 else -q * step


def floor_to(x, unit):  # toward minus infinity onto multiples of unit
    return (x // unit) * unit


def trunc_to(x, unit):  # toward zero onto multiples of unit
    return (abs(x) // unit) * unit * (1 if x >= 0 else -1)


def ieee_add(x, y):
    if isinstance(x, float) or isinstance(y, float):
        return float(x) + float(y)
    return round_fp32(x + y)


def chained(block_size, instruction):
    """K cut into instructions of block_size, each one's D the next one's C."""
    def run(a, b, c, typ):
        for k0 in range(0, max(len(a), 1), block_size):
            c = instruction(a[k0:k0 + block_size], b[k0:k0 + block_size], c, typ)
        return c
    return run


def specials(a, b, c, limit=False):
    """NaN, inf*0 or inf-inf: NaN; an infinity: that infinity; else None.
    With limit, a product of 2^128 or more counts as an infinity (CDNA3)."""
    terms = [float(c)] + [float(x) * float(y) for x, y in zip(a, b) if isinstance(x, float) or isinstance(y, float)]
    if limit:
        terms += [math.copysign(math.inf, x * y) for x, y in zip(a, b)
                  if not isinstance(x * y, float) and abs(x * y) >= Q(2) ** 128]
    if any(math.isnan(t) for t in terms) or (math.inf in terms and -math.inf in terms):
        return math.nan
    return next((t for t in terms if math.isinf(t)), None)


# ---- MI100 (CDNA1): exact sum of the block and C, one rounding ---------------

def mi100_instruction(a, b, c, typ):
    s = specials(a, b, c)
    return s if s is not None else round_fp32(sum(x * y for x, y in zip(a, b)) + c)


# ---- MI210, MI250 (CDNA2): pairwise fp32 sums, subnormals flushed -------------

def flush(x):
    return Q(0) if not isinstance(x, float) and abs(x) < FP32_MIN else x


def mi210_instruction(a, b, c, typ):
    s = specials(a, b, c)
    if s is not None:
        return s
    ftz = lambda x, t: Q(0) if abs(x) < Q(2) ** MIN_EXPONENT[t] else x
    p = [flush(round_fp32(ftz(x, typ[0]) * ftz(y, typ[1]))) for x, y in zip(a, b)] + [Q(0)] * (4 - len(a))
    tree = flush(ieee_add(flush(ieee_add(p[0], p[1])), flush(ieee_add(p[2], p[3]))))
    return flush(ieee_add(flush(c), tree))


# ---- MI300A, MI300X (CDNA3) ----------------------------------------------------

F = 24  # bits kept below the block's largest exponent (MI300MC.m: neab = 1)


def truncated_sum(pairs, typ):
    """Nonzero products truncated toward zero at 2^(e_max - F): (sum, e_max), or None."""
    terms = [(x * y, align(x, MIN_EXPONENT[typ[0]]) + align(y, MIN_EXPONENT[typ[1]])) for x, y in pairs if x * y != 0]
    if not terms:
        return None
    e_max = max(e for _, e in terms)
    unit = Q(2) ** (e_max - F)
    return sum(trunc_to(p, unit) for p, _ in terms), e_max


def add_c_late(partial, c, truncate_far_c):
    """The products' sum and C aligned to the larger exponent, the other rounded down."""
    if partial is None:
        return c
    s, e_max = partial
    e_c = align(c, -126) if c != 0 else -126
    if e_max < e_c:
        s = floor_to(s, Q(2) ** (e_c - 31))
    elif e_c < e_max:
        unit = Q(2) ** (e_max - F)
        c = trunc_to(c, unit) if truncate_far_c and e_c < e_max - 25 else floor_to(c, unit)
    return round_fp32(s + c)


def mi300_instruction(a, b, c, typ):
    s = specials(a, b, c, limit=True)
    if s is not None:
        return s
    return add_c_late(truncated_sum(zip(a, b), typ), c, False)


def mi300_fp8_instruction(a, b, c, typ):
    s = specials(a, b, c)
    if s is not None:
        return s
    even, odd = truncated_sum(zip(a[0::2], b[0::2]), typ), truncated_sum(zip(a[1::2], b[1::2]), typ)
    if even is None or odd is None:
        partial = even or odd
    else:
        (big, e_big), (small, _) = (even, odd) if even[1] >= odd[1] else (odd, even)
        partial = (big + floor_to(small, Q(2) ** (e_big - F)), e_big)
    return add_c_late(partial, c, True)


MODELS = {
    "mi100": {"fp16": chained(4, mi100_instruction), "bf16": chained(2, mi100_instruction)},
    "mi210": {"fp16": chained(4, mi210_instruction), "bf16": chained(4, mi210_instruction)},
    "mi300x": {"fp16": chained(8, mi300_instruction), "bf16": chained(8, mi300_instruction),
               "tf32": chained(4, mi300_instruction), "e4m3fnuz": chained(16, mi300_fp8_instruction),
               "e5m2fnuz": chained(16, mi300_fp8_instruction)},
}
MODELS["mi250"] = MODELS["mi210"]
MODELS["mi300a"] = MODELS["mi300x"]
