"""Counts behind docs/tensor-core.md's tables for FP8 mma.sync (m16n8k32) on
H100 (fp16 output) and B200 (fp16 and fp32 output): each hypothesis replayed
on the published measurements in exact rational arithmetic (standard library
only, independent of fmtcheck).

    python3 docs/tensor-core-fp8-mma-sync.py [DATA_DIR]      # a few minutes

DATA_DIR (default ../shared/data/tensor-core) holds H100/ and B200-first-half/.
"""
import math, struct, sys
from fractions import Fraction as Q

DATA = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/tensor-core"


def f32(bits):
    return Q(struct.unpack("<f", struct.pack("<I", bits))[0])


def sign(x):
    return -1 if x < 0 else 1


def binade(x):  # floor(log2 |x|), x != 0
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e if abs(x) >= Q(2) ** e else e - 1


def rounder(fraction_bits, min_exponent, nearest, overflow):
    """Rounds to a binary format: nearest even or toward zero, subnormals kept."""
    def r(x):
        if x == 0:
            return Q(0)
        step = Q(2) ** (max(binade(x), min_exponent) - fraction_bits)
        q, rest = divmod(abs(x), step)
        if nearest and (rest > step / 2 or (rest == step / 2 and q % 2)):
            q += 1
        if q * step >= overflow:
            return math.copysign(math.inf, x)
        return sign(x) * q * step
    return r


fp16 = rounder(10, -14, True, 65520)                  # nearest even
fp32_rz = rounder(23, -126, False, Q(2) ** 128)       # toward zero
fp32_rn = rounder(23, -126, True, Q(2) ** 128 - Q(2) ** 103)
fp32_rz13 = rounder(13, -126, False, Q(2) ** 128)     # toward zero, 13 fraction bits


def block(terms, f):
    """Terms (value, alignment exponent) truncated toward zero at 2^(e_max - f), summed."""
    live = [(v, e) for v, e in terms if v != 0]
    if not live:
        return Q(0)
    unit = Q(2) ** (max(e for _, e in live) - f)
    return sum(sign(v) * (abs(v) // unit) for v, _ in live) * unit


def align(x, min_exponent):
    return max(binade(x), min_exponent) if x != 0 else 0


def products(a, b, ks, min_exponent):
    return [(a[k] * b[k], align(a[k], min_exponent) + align(b[k], min_exponent)) for k in ks]


def fused(a, b, ks, acc, out, f=25, min_exponent=-14):
    """One fused block of the products ks plus acc; operands aligned as fp16 (min exponent -14) by default."""
    acc_min = -14 if out is fp16 else -126
    return out(block(products(a, b, ks, min_exponent) + [(acc, align(acc, acc_min))], f))


ALL = range(32)
G1 = [k for k in ALL if k % 4 < 2]   # k mod 4 in {0, 1}
G2 = [k for k in ALL if k % 4 >= 2]  # k mod 4 in {2, 3}
LOW, HIGH = range(16), range(16, 32)


def groups(first, second, out, last, f=25, min_exponent=-14):
    """HMMA(second, C = HMMA(first, C = 0)), then C added with `last` rounding."""
    return lambda a, b, c, e: last(fused(a, b, second, fused(a, b, first, Q(0), out, f, min_exponent), out, f,
                                         min_exponent) + c)


# (name, function of a, b, C and the FP8 type's min exponent e), per output.
FP16_OUTPUT = [
    ("exact A*B + C, one rounding to fp16", lambda a, b, c, e: fp16(sum(x * y for x, y in zip(a, b)) + c)),
    ("one block L = 32, F = 25, RNE to fp16", lambda a, b, c, e: fused(a, b, ALL, c, fp16, 25, e)),
    ("one block L = 32, F = 13, RNE to fp16", lambda a, b, c, e: fused(a, b, ALL, c, fp16, 13, e)),
    ("F = 13, RZ to 13 fraction bits, then RNE to fp16",
     lambda a, b, c, e: fp16(fp32_rz13(block(products(a, b, ALL, e) + [(c, align(c, -126))], 13)))),
    ("two fp16 HMMAs, k 0-15 then 16-31, C first", lambda a, b, c, e: fused(a, b, HIGH, fused(a, b, LOW, c, fp16), fp16)),
    ("C as the first HMMA's accumulator (G1, then G2)", lambda a, b, c, e: fused(a, b, G2, fused(a, b, G1, c, fp16), fp16)),
    ("fp16(HMMA(G2, C = HMMA(G1, C = 0)) + C)", groups(G1, G2, fp16, fp16)),
    ("the same, G2 first", groups(G2, G1, fp16, fp16)),
]
FP32_OUTPUT = [
    ("tcgen05 parameters: one block L = 32, F = 25, RZ", lambda a, b, c, e: fused(a, b, ALL, c, fp32_rz, 25, e)),
    ("one block L = 32, F = 25, RNE", lambda a, b, c, e: fused(a, b, ALL, c, fp32_rn, 25, e)),
    ("two fp16 HMMAs, k 0-15 then 16-31, C first", lambda a, b, c, e: fused(a, b, HIGH, fused(a, b, LOW, c, fp32_rz), fp32_rz)),
    ("C as the first HMMA's accumulator (G1, then G2)", lambda a, b, c, e: fused(a, b, G2, fused(a, b, G1, c, fp32_rz), fp32_rz)),
    ("C as the first HMMA's accumulator (G2, then G1)", lambda a, b, c, e: fused(a, b, G1, fused(a, b, G2, c, fp32_rz), fp32_rz)),
    ("RZ(HMMA(G2, C = HMMA(G1, C = 0)) + C)", groups(G1, G2, fp32_rz, fp32_rz)),
    ("RN(HMMA(G2, C = HMMA(G1, C = 0)) + C)", groups(G1, G2, fp32_rz, fp32_rn)),
    ("RN(HMMA(G1, C = HMMA(G2, C = 0)) + C)", groups(G2, G1, fp32_rz, fp32_rn)),
    ("RN(HMMA(k 16-31, C = HMMA(k 0-15, C = 0)) + C)", groups(LOW, HIGH, fp32_rz, fp32_rn)),
    ("RN(RZ(one block L = 32, F = 25, C = 0) + C)", lambda a, b, c, e: fp32_rn(fused(a, b, ALL, Q(0), fp32_rz, 25, e) + c)),
    ("RN(exact A*B + C): one rounding", lambda a, b, c, e: fp32_rn(sum(x * y for x, y in zip(a, b)) + c)),
    ("RN(...) + C with F = 24 in the HMMAs", groups(G1, G2, fp32_rz, fp32_rn, f=24)),
    ("RN(...) + C with F = 22 in the HMMAs", groups(G1, G2, fp32_rz, fp32_rn, f=22)),
    ("RN(...) + C with operands aligned as FP8, not fp16", None),  # filled per type below
]


def load(folder, gpu, typ, out):
    words = lambda name: open(f"{DATA}/{folder}/{typ}/{name}").read().split()
    a = [f32(int(w, 16)) for w in words(f"a_{gpu}_{typ}.txt")]
    b = [f32(int(w, 16)) for w in words(f"b_{gpu}_{typ}.txt")]
    c = [f32(int(w, 2)) for w in words(f"c_{gpu}_fp32.txt")]
    d = [f32(int(w, 2)) for w in words(f"d_{gpu}_{out}.txt")]
    if out == "fp16":
        c = [fp16(x) for x in c]  # as the authors' kernel: C rounded to fp16 first
    return a, b, c, d


def replay(folder, gpu, out, hypotheses):
    for typ, min_exponent in (("E4M3", -6), ("E5M2", -14)):
        a, b, c, d = load(folder, gpu, typ, out)
        k = len(a) // len(c)
        for name, h in hypotheses:
            if h is None:  # FP8 subnormals aligned by their own exponent field
                h = groups(G1, G2, fp32_rz, fp32_rn, min_exponent=min_exponent)
            hits = sum(h(a[i * k:(i + 1) * k], b[i * k:(i + 1) * k], c[i], min_exponent) == d[i] for i in range(len(c)))
            print(f"{gpu} {typ} {out}  {hits:4d}/{len(c)}  {name}", flush=True)


replay("H100", "H100", "fp16", FP16_OUTPUT)
replay("B200-first-half", "B200", "fp16", FP16_OUTPUT)
replay("B200-first-half", "B200", "fp32", FP32_OUTPUT)
