"""fmtcheck's AMD presets (mi100, mi210, mi250, mi300a, mi300x) against hand-built
cases whose results are worked out below from the published models'
description (docs/tensor-core.md), and against amd_reference.py, an exact
re-statement of those models in Python fractions, on random cases.

Each hand-built case names the behaviour it pins and what the nearest wrong
model would give; the expected bits are written out, not computed by either
implementation, and amd_reference.py must agree with them too.
"""
import math
import random
import struct
from fractions import Fraction as Q

import pytest

from amd_reference import MODELS, MIN_EXPONENT

P = lambda e: Q(2) ** e  # noqa: E731


def f32_bits(x):
    if isinstance(x, float) and math.isnan(x):
        return 0x7FFFFFFF
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def f32_value(bits):
    x = struct.unpack("<f", struct.pack("<I", bits))[0]
    return x if math.isinf(x) or math.isnan(x) else Q(x)


def run_mma(fmtcheck, tmp_path, model, types, cases):
    """cases: (a, b, c) with a, b lists of float32 bit patterns, c one; D's bits per case."""
    k = len(cases[0][0])
    (tmp_path / "a.txt").write_text("".join(" ".join(f"{w:08x}" for w in a) + "\n" for a, _, _ in cases))
    (tmp_path / "b.txt").write_text("".join(" ".join(f"{w:08x}" for w in b) + "\n" for _, b, _ in cases))
    (tmp_path / "c.txt").write_text("".join(f"{c:032b}\n" for _, _, c in cases))
    args = ["mma", "--model", model, "--type", types[0], "--type-b", types[1], "--k", k,
            "--a", tmp_path / "a.txt", "--b", tmp_path / "b.txt", "--c", tmp_path / "c.txt", "--d", tmp_path / "d.txt"]
    r = fmtcheck(*args)
    assert r.returncode == 0, r.stderr.decode()
    return [int(line, 2) for line in (tmp_path / "d.txt").read_text().split()]


def same(got_bits, want_bits):
    """Bit equality; NaN by class, and zeros by value (the models carry no sign of zero)."""
    if math.isnan(struct.unpack("<f", struct.pack("<I", want_bits))[0]):
        return got_bits == 0x7FFFFFFF
    return got_bits == want_bits or (got_bits | want_bits) == 0x80000000


def values(xs):
    return [f32_bits(x) for x in xs]


# (preset, type, a values, b values, C value, expected D bits, what it pins)
HAND = [
    # MI100: exact sum of 4 products (bf16: 2) and C, one rounding to nearest even.
    ("mi100", "fp16", [1, P(-12), P(-15)], [1, P(-12), P(-15)], 0, 0x3F800001,
     "1 + 2^-24 + 2^-30 kept exactly rounds up; truncating F = 24 or 25 gives the tie's even 0x3f800000"),
    ("mi100", "fp16", [1, P(-12), 0, 0, P(-15)], [1, P(-12), 0, 0, P(-15)], 0, 0x3F800000,
     "block of 4: 1 + 2^-24 rounds to 1 before 2^-30 arrives; one block of 8 gives 0x3f800001"),
    ("mi100", "bf16", [1, P(-12), P(-15)], [1, P(-12), P(-15)], 0, 0x3F800000,
     "bf16 block of 2: k = 2 is the next instruction; a block of 4 gives 0x3f800001"),
    ("mi100", "fp16", [P(-24)], [P(-24)], 0, 0x27800000, "subnormal fp16 operands kept: 2^-48"),
    ("mi100", "bf16", [P(100), P(100)], [P(30), -P(30)], 1, 0x3F800000,
     "exact: 2^130 - 2^130 + 1 = 1 (no product limit on CDNA1)"),
    # MI210 / MI250: pairwise fp32 additions, C last, subnormals flushed.
    ("mi210", "fp16", [1, P(-12), P(-12), P(-12)], [1, P(-12), P(-12), P(-12)], 0, 0x3F800001,
     "(1 + 2^-24) + (2^-24 + 2^-24): the tie goes to 1, then 1 + 2^-23; left to right gives 1, exact 1 + 2^-22"),
    ("mi250", "fp16", [P(-12), P(-12)], [P(-12), P(-12)], 1, 0x3F800001,
     "C added last to the tree 2^-23; C first would round 1 + 2^-24 to 1 twice"),
    ("mi210", "fp16", [P(-12), 0, 0, 0, P(-12)], [P(-12), 0, 0, 0, P(-12)], 1, 0x3F800000,
     "L = 4 with C = 1: (1 + 2^-24) + 2^-24 rounds twice to 1; one block of 8 gives 1 + 2^-23"),
    ("mi210", "fp16", [P(-15)], [P(10)], 0, 0x00000000, "an fp16 subnormal operand is flushed: 0, not 2^-5"),
    ("mi210", "bf16", [P(-64)], [P(-64)], 0, 0x00000000, "a product below 2^-126 is flushed: 0, not 2^-128"),
    ("mi210", "fp16", [0], [0], P(-130), 0x00000000, "a subnormal C is flushed"),
    # MI300A / MI300X, fp16, bf16, tf32: F = 24, C added late with round-down alignment.
    ("mi300x", "fp16", [1, P(-12), P(-12)], [1, P(-12), P(-13)], 0, 0x3F800000,
     "F = 24: 2^-25 is cut, leaving the tie 1 + 2^-24 that goes to 1; F = 25 or exact give 0x3f800001"),
    ("mi300x", "fp16", [1, P(-12), P(-12)], [1, P(-12), P(-12)], 0, 0x3F800001,
     "F = 24 keeps 2^-24: 1 + 2^-23; F = 23 would give 1"),
    ("mi300a", "fp16", [1.5, P(-12), P(-12), P(-12)], [1.5, P(-12), P(-12), P(-12)], 0, 0x40100001,
     "2.25 aligns by the operands' exponent sum 0, not its own 1: 3 * 2^-24 is kept and rounds 2.25 up"),
    ("mi300x", "fp16", [1], [1], -P(-30), 0x3F7FFFFF,
     "C below e_max is rounded down onto 2^-24: 1 - 2^-24; exact rounding or truncation give 1"),
    ("mi300x", "fp16", [-P(-12), P(-20)], [P(-12), P(-20)], 1 + P(-23), 0x3F800000,
     "C above: the sum -2^-24 + 2^-40 is rounded down onto 2^-31 (-2^-24), a tie that goes to even 1; "
     "truncation toward zero or exact rounding give 0x3f800001"),
    ("mi300x", "fp16", [P(-12), P(-15)], [P(-12), P(-16)], 1, 0x3F800001,
     "C above: 2^-31 is kept (31 bits below C's exponent), so 1 + 2^-24 + 2^-31 rounds up"),
    ("mi300x", "fp16", [P(-12), P(-16)], [P(-12), P(-16)], 1, 0x3F800000,
     "C above: 2^-32 is dropped, leaving the tie 1 + 2^-24 that goes to 1"),
    ("mi300x", "fp16", [1, -1], [1, 1], -P(-30), 0xB3800000,
     "a zero sum still sets e_max = 0: C = -2^-30 is rounded down to -2^-24"),
    ("mi300x", "fp16", [1, -1, 0, 0, 0, 0, 0, P(-15)], [1, 1, 0, 0, 0, 0, 0, P(-15)], 0, 0x00000000,
     "L = 8: 2^-30 at k = 7 shares the block of 1 - 1 and is cut"),
    ("mi300x", "fp16", [1, -1, 0, 0, 0, 0, 0, 0, P(-15)], [1, 1, 0, 0, 0, 0, 0, 0, P(-15)], 0, 0x30800000,
     "L = 8: 2^-30 at k = 8 is the next instruction's only product and survives"),
    ("mi300x", "bf16", [1, -1, 0, 0, 0, 0, 0, 0, P(-15)], [1, 1, 0, 0, 0, 0, 0, 0, P(-15)], 0, 0x30800000,
     "bf16 L = 8 too"),
    ("mi300x", "tf32", [1, -1, 0, P(-15)], [1, 1, 0, P(-15)], 0, 0x00000000, "tf32 (xf32) L = 4: k = 3 is cut"),
    ("mi300x", "tf32", [1, -1, 0, 0, P(-15)], [1, 1, 0, 0, P(-15)], 0, 0x30800000, "tf32 L = 4: k = 4 survives"),
    ("mi300x", "fp16", [P(-24)], [1], 0, 0x33800000, "subnormal fp16 operands are kept: 2^-24"),
    ("mi300x", "bf16", [P(100)], [P(30)], 1, 0x7F800000, "a product of 2^128 or more is +inf at once"),
    ("mi300x", "bf16", [P(100), P(100)], [P(30), -P(30)], 1, 0x7FFFFFFF, "products of 2^130 and -2^130: NaN"),
    ("mi300x", "fp16", [math.inf, 1], [0, 1], 0, 0x7FFFFFFF, "inf * 0: NaN"),
    ("mi300x", "fp16", [math.inf, 1], [1, 1], -math.inf, 0x7FFFFFFF, "inf - inf: NaN"),
    ("mi300x", "fp16", [math.inf], [-1], 1, 0xFF800000, "an infinite product: that infinity"),
    # MI300 FP8 (fnuz): even and odd k summed apart, 16 per instruction.
    ("mi300x", "e4m3fnuz", [P(7), P(-10)], [P(7), -P(-10)], 0, 0x467FFFFF,
     "odd k = 1 summed apart (-2^-20 exactly), then rounded down onto 2^(14-24): 2^14 - 2^-10; "
     "one block truncates it toward zero (2^14, 0x46800000)"),
    ("mi300x", "e4m3fnuz", [P(7), 0, P(-10)], [P(7), 0, -P(-10)], 0, 0x46800000,
     "even k = 2 shares k = 0's block and is truncated toward zero: 2^14"),
    ("mi300x", "e4m3fnuz", [P(7)], [P(7)], -Q(3, 2) * P(-12), 0x46800000,
     "C more than 25 binades below e_max = 14 is truncated toward zero: 2^14"),
    ("mi300x", "e4m3fnuz", [P(7)], [P(7)], -Q(3, 2) * P(-11), 0x467FFFFF,
     "C at most 25 binades below is rounded down onto 2^-10: 2^14 - 2^-10"),
    ("mi300x", "e4m3fnuz", [P(7), 0, -P(7)] + [0] * 11 + [P(-10)], [P(7), 0, P(7)] + [0] * 11 + [P(-10)], 0,
     0x00000000, "L = 16: 2^-20 at k = 14 shares the even block of 2^14 - 2^14 and is cut"),
    ("mi300x", "e4m3fnuz", [P(7), 0, -P(7)] + [0] * 13 + [P(-10)], [P(7), 0, P(7)] + [0] * 13 + [P(-10)], 0,
     0x35800000, "L = 16: 2^-20 at k = 16 is the next instruction's and survives"),
    ("mi300x", "e5m2fnuz", [P(-17)], [P(-17)], 0, 0x2E800000, "e5m2fnuz subnormals are kept: 2^-34"),
    ("mi300x", "e4m3fnuz", [math.nan], [1], 0, 0x7FFFFFFF, "the fnuz NaN: NaN"),
]


@pytest.mark.parametrize("case", HAND, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(HAND)])
def test_hand_built_case(fmtcheck, tmp_path, case):
    model, typ, a, b, c, want, _ = case
    exact = lambda x: x if isinstance(x, float) and not math.isfinite(x) else Q(x)  # noqa: E731
    a, b, c = [exact(x) for x in a], [exact(x) for x in b], exact(c)
    reference = MODELS[model][typ](a, b, c, (typ, typ))
    assert same(f32_bits(reference), want), f"amd_reference.py gives {f32_bits(reference):08x}"
    (got,) = run_mma(fmtcheck, tmp_path, model, (typ, typ), [(values(a), values(b), f32_bits(c))])
    assert same(got, want), f"fmtcheck gives {got:08x}, expected {want:08x}"


# ---- random cases ---------------------------------------------------------------

def random_operand(typ, rng):
    """A random value of typ as float32 bits (tf32: any fp32 register, whose low 13 bits are ignored)."""
    if rng.random() < 0.2:
        return 0
    if typ == "tf32":
        return rng.getrandbits(32) & 0xC7FFFFFF | (rng.randrange(110, 140) << 23)
    if typ == "fp16":
        while True:
            x = struct.unpack("<e", struct.pack("<H", rng.getrandbits(16)))[0]
            if math.isfinite(x):
                return f32_bits(x)
    if typ == "bf16":
        while True:
            bits = rng.getrandbits(16) << 16
            if (bits >> 23) & 0xFF != 0xFF:
                return bits
    exponent_bits, mantissa_bits, bias = {"e4m3fnuz": (4, 3, 8), "e5m2fnuz": (5, 2, 16)}[typ]
    code = rng.randrange(1, 1 << (exponent_bits + mantissa_bits))  # never 0x80, the NaN
    e, m = code >> mantissa_bits, code & ((1 << mantissa_bits) - 1)
    value = Q(m, 1 << mantissa_bits) * P(1 - bias) if e == 0 else (1 + Q(m, 1 << mantissa_bits)) * P(e - bias)
    return f32_bits(-value if rng.random() < 0.5 else value)


def operand_value(bits, typ):
    return f32_value(bits & 0xFFFFE000 if typ == "tf32" else bits)


def random_c(rng):
    kind = rng.random()
    if kind < 0.2:
        return 0
    if kind < 0.3:
        return rng.getrandbits(32) & 0x807FFFFF  # a subnormal
    return (rng.getrandbits(32) & 0x807FFFFF) | (rng.randrange(100, 150) << 23)


PAIRS = [(m, (t, t)) for m in ("mi100", "mi210", "mi300x") for t in sorted(MODELS[m])] + \
        [("mi300x", ("e4m3fnuz", "e5m2fnuz"))]


@pytest.mark.parametrize("model,types", PAIRS, ids=[f"{m}-{t[0]}-{t[1]}" for m, t in PAIRS])
@pytest.mark.parametrize("k", [16, 37])
def test_random_cases_match_the_reference(fmtcheck, tmp_path, model, types, k):
    rng = random.Random(f"{model}{types}{k}")
    cases = [([random_operand(types[0], rng) for _ in range(k)], [random_operand(types[1], rng) for _ in range(k)],
              random_c(rng)) for _ in range(300)]
    got = run_mma(fmtcheck, tmp_path, model, types, cases)
    bad = []
    for (a, b, c), d in zip(cases, got):
        want = MODELS[model][types[0]]([operand_value(x, types[0]) for x in a], [operand_value(x, types[1]) for x in b],
                                       f32_value(c), types)
        if not same(d, f32_bits(want)):
            bad.append(f"a={a} b={b} c={c:08x}: fmtcheck {d:08x}, reference {f32_bits(want):08x}")
    assert not bad, f"{len(bad)}/{len(cases)} differ, first: {bad[0]}"
