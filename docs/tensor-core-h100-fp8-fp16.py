"""Counts behind docs/tensor-core.md's table for the H100 FP8 files with fp16
output: each hypothesis replayed on ../shared/data/tensor-core/H100 in exact
rational arithmetic (standard library only, independent of fmtcheck).

    python3 docs/tensor-core-h100-fp8-fp16.py [DATA_DIR]      # about a minute
"""
import math, struct, sys
from fractions import Fraction as Q

DATA = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/tensor-core/H100"


def f32(bits):
    return Q(struct.unpack("<f", struct.pack("<I", bits))[0])


def sign(x):
    return -1 if x < 0 else 1


def binade(x):  # floor(log2 |x|), x != 0
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e if abs(x) >= Q(2) ** e else e - 1


def round_fp16(x):  # nearest even, subnormals kept, overflow to infinity
    if x == 0:
        return Q(0)
    step = Q(2) ** (max(binade(x), -14) - 10)
    q, r = divmod(abs(x), step)
    if r > step / 2 or (r == step / 2 and q % 2):
        q += 1
    if q * step >= 65520:
        return math.copysign(math.inf, x)
    return sign(x) * q * step


def round_down_bits(x, fraction_bits):  # toward zero, normal fp32 range
    if x == 0:
        return Q(0)
    step = Q(2) ** (binade(x) - fraction_bits)
    return sign(x) * (abs(x) // step) * step


def block(terms, f):
    """Terms (value, alignment exponent) truncated toward zero at 2^(e_max - f), summed."""
    live = [(v, e) for v, e in terms if v != 0]
    if not live:
        return Q(0)
    unit = Q(2) ** (max(e for _, e in live) - f)
    return sum(sign(v) * (abs(v) // unit) for v, _ in live) * unit


def align(x, min_exponent):
    return max(binade(x), min_exponent) if x != 0 else 0


def products(a, b, min_exponent):
    return [(x * y, align(x, min_exponent) + align(y, min_exponent)) for x, y in zip(a, b)]


def hmma(a, b, group, acc):  # the H100 fp16 model: L = 16, F = 25, RNE to fp16, operands as fp16
    terms = products([a[k] for k in group], [b[k] for k in group], -14) + [(acc, align(acc, -14))]
    return round_fp16(block(terms, 25))


G1 = [k for k in range(32) if k % 4 < 2]
G2 = [k for k in range(32) if k % 4 >= 2]
HYPOTHESES = {
    "exact A*B + C, one rounding to fp16": lambda a, b, c, e: round_fp16(sum(x * y for x, y in zip(a, b)) + c),
    "one block L = 32, F = 25, RNE to fp16": lambda a, b, c, e: round_fp16(
        block(products(a, b, e) + [(c, align(c, -14))], 25)),
    "F = 13, L = 32, RNE to fp16": lambda a, b, c, e: round_fp16(block(products(a, b, e) + [(c, align(c, -14))], 13)),
    "F = 13, RZ to 13 fraction bits, then RNE to fp16": lambda a, b, c, e: round_fp16(
        round_down_bits(block(products(a, b, e) + [(c, align(c, -126))], 13), 13)),
    "two fp16 HMMAs, k 0-15 then 16-31, C first": lambda a, b, c, e: hmma(
        a, b, range(16, 32), hmma(a, b, range(16), c)),
    "fp16(HMMA(G2, C = HMMA(G1, C = 0)) + C)": lambda a, b, c, e: round_fp16(hmma(a, b, G2, hmma(a, b, G1, Q(0))) + c),
    "the same, G2 first": lambda a, b, c, e: round_fp16(hmma(a, b, G1, hmma(a, b, G2, Q(0))) + c),
    "C as the first HMMA's accumulator": lambda a, b, c, e: hmma(a, b, G2, hmma(a, b, G1, c)),
}

for typ, min_exponent in (("E4M3", -6), ("E5M2", -14)):
    words = lambda name: open(f"{DATA}/{typ}/{name}").read().split()
    a = [f32(int(w, 16)) for w in words(f"a_H100_{typ}.txt")]
    b = [f32(int(w, 16)) for w in words(f"b_H100_{typ}.txt")]
    c = [round_fp16(f32(int(w, 2))) for w in words("c_H100_fp32.txt")]  # as the authors' kernel: C to fp16
    d = [f32(int(w, 2)) for w in words("d_H100_fp16.txt")]
    k = len(a) // len(c)
    for name, h in HYPOTHESES.items():
        hits = sum(h(a[i * k:(i + 1) * k], b[i * k:(i + 1) * k], c[i], min_exponent) == d[i] for i in range(len(c)))
        print(f"{typ}  {hits:4d}/{len(c)}  {name}", flush=True)
