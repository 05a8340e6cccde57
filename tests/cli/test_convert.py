"""`fmtcheck convert`: one value at a time. Every expected result is worked
out by hand from the format's layout (DESIGN.md) and, where the value needs
it, checked with Python's exact fractions."""
import json
from fractions import Fraction

import pytest

from usage_error import assert_usage_error


def convert_json(fmtcheck, *args):
    r = fmtcheck("convert", "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# (input, target, policy options, expected bits)
CASES = [
    # 0.1 = 1.6 * 2^-4; fp16 keeps 10 fraction bits: 0.6 * 1024 = 614.4 -> 614;
    # exponent field 15 - 4 = 11: (11 << 10) | 614 = 0x2e66.
    ("0.1", "fp16", [], "0x2e66"),
    # DESIGN.md: 464 is the tie between 448 and the NaN code and goes to 448;
    # anything above overflows: NaN without saturation, 448 with.
    ("464", "e4m3", [], "0x7e"),
    ("464.001", "e4m3", [], "0x7f"),
    ("464.001", "e4m3", ["--overflow", "sat"], "0x7e"),
    ("-inf", "e4m3", [], "0xff"),
    ("inf", "e4m3", ["--overflow", "sat"], "0x7e"),
    # e5m2: max 57344 (0x7b); 61440 is the tie between it and 65536 -> inf.
    ("61439.99", "e5m2", [], "0x7b"),
    ("61440", "e5m2", [], "0x7c"),
    # The decimal is exact, never a double: 1 + 2^-11 + 10^-20 is just above
    # the fp16 tie between 1 (0x3c00) and 1 + 2^-10, so it rounds up; as a
    # double it would be the tie itself and round to even, 0x3c00.
    ("1.00048828125000000001", "fp16", [], "0x3c01"),
    ("1.00048828125", "fp16", [], "0x3c00"),
    # 1/3 = 1.0101...b * 2^-2, rounded once: fp16 keeps 0101010101 with
    # 0101... (below half) discarded: (13 << 10) | 0x155 = 0x3555; toward
    # -inf, -1/3 takes the magnitude above it.
    ("1/3", "fp16", [], "0x3555"),
    ("-1/3", "fp16", ["--round", "rdn"], "0xb556"),
    # 1.0625 lies halfway between e4m3's 1 (0x38) and 1.125 (0x39).
    ("1.0625", "e4m3", ["--round", "rne"], "0x38"),
    ("1.0625", "e4m3", ["--round", "rna"], "0x39"),
    ("1.0625", "e4m3", ["--round", "rtz"], "0x38"),
    ("1.0625", "e4m3", ["--round", "rup"], "0x39"),
    ("-1.0625", "e4m3", ["--round", "rup"], "0xb8"),
    ("-1.0625", "e4m3", ["--round", "rdn"], "0xb9"),
    # Round to odd: truncate to 1 (even code 0x38), inexact -> set the last bit.
    ("1.0625", "e4m3", ["--round", "rto"], "0x39"),
    ("1.125", "e4m3", ["--round", "rto"], "0x39"),
    # Stochastic with one random bit: the discarded half is 1 in binary; it
    # rounds away iff half + random >= 1.
    ("1.0625", "e4m3", ["--round", "sr", "--sr-bits", "1", "--sr-random", "0"], "0x38"),
    ("1.0625", "e4m3", ["--round", "sr", "--sr-bits", "1", "--sr-random", "1"], "0x39"),
    # MX: no NaN, no inf; overflow always saturates (e2m1 max 6 = 0x7).
    ("100", "e2m1", [], "0x07"),
    ("-0.25", "e2m1", [], "0x08"),  # the tie between -0 and -0.5 goes to the even code: -0
    # E8M0: powers of two; 3 = 1.5 * 2 ties between codes 128 and 129 -> even.
    ("3", "e8m0", [], "0x80"),
    ("6", "e8m0", [], "0x82"),
    ("-1", "e8m0", [], "0xff"),
]


@pytest.mark.parametrize("value,target,policy,bits", CASES)
def test_hand_worked_values(fmtcheck, value, target, policy, bits):
    # "--" lets a value such as -inf, which looks like an option, through.
    (row,) = convert_json(fmtcheck, "--to", target, *policy, "--", value)
    assert row["bits"] == bits, row


def test_tf32_rna_rne_rtz(fmtcheck):
    # tf32 keeps float32's top 10 fraction bits (ulp 0x2000 in the float32
    # bits); 0x3f801000 is exactly halfway between 0x3f800000 and 0x3f802000.
    for policy, bits in [("rna", "0x3f802000"), ("rne", "0x3f800000"), ("rtz", "0x3f800000")]:
        (row,) = convert_json(fmtcheck, "--from", "fp32", "0x3f801000", "--to", "tf32", "--round", policy)
        assert row["bits"] == bits, policy


def test_error_and_flags_of_0_1_to_fp16(fmtcheck):
    (row,) = convert_json(fmtcheck, "0.1", "--to", "fp16")
    value = Fraction(1638, 2**14)  # (1024 + 614) / 1024 * 2^-4
    assert Fraction(row["value"]) == value
    # |value - 0.1| = 1/40960 exactly; JSON carries the nearest double.
    assert row["abs_error"] == float(abs(value - Fraction(1, 10)))
    assert row["flags"] == ["inexact"]
    # ulp of fp16 in [2^-4, 2^-3) is 2^-14: the error is 0.4 ulp (rounded to double).
    assert row["ulp_error"] == pytest.approx(0.4, rel=1e-15)


def test_underflow_to_zero_flags(fmtcheck):
    # 1e-10 is far below half of fp16's min subnormal 2^-24.
    (row,) = convert_json(fmtcheck, "1e-10", "--to", "fp16")
    assert row["bits"] == "0x0000"
    assert set(row["flags"]) == {"inexact", "underflow", "tiny_to_zero"}


def test_bits_input_from_another_format(fmtcheck):
    rows = convert_json(fmtcheck, "--from", "fp16", "0x3c00", "0x7c00", "0xfe00", "--to", "e4m3")
    assert [r["bits"] for r in rows] == ["0x38", "0x7f", "0xff"]  # 1, inf -> NaN (no inf), -NaN


def test_table_output(fmtcheck):
    r = fmtcheck("convert", "448", "--to", "e4m3")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0].startswith("to e4m3 (")
    assert lines[2].split()[:3] == ["448", "0x7e", "448"]


def test_several_targets(fmtcheck):
    # 0.1 into fp16 is 0x2e66 (worked out above); into bf16, float32's
    # 0x3dcccccd cut to its top half 0x3dcc with 0xcccd > 0x8000 below, so
    # it rounds up to 0x3dcd; into e4m3 0x1d (the README's example).
    # Each format's rows in the order of --to, the values in their order.
    rows = convert_json(fmtcheck, "0.1", "448", "--to", "fp16,bf16,e4m3")
    assert [(r["format"], r["input"], r["bits"]) for r in rows] == [
        ("fp16", "0.1", "0x2e66"), ("fp16", "448", "0x5f00"),
        ("bf16", "0.1", "0x3dcd"), ("bf16", "448", "0x43e0"),
        ("e4m3", "0.1", "0x1d"), ("e4m3", "448", "0x7e")]
    r = fmtcheck("convert", "0.1", "--to", "fp16,e4m3")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0].startswith("to fp16 (") and lines[2].split()[:2] == ["0.1", "0x2e66"]
    assert lines[3] == "" and lines[4].startswith("to e4m3 (") and lines[6].split()[:2] == ["0.1", "0x1d"]
    # p3109 stands for its 30 members.
    assert len(convert_json(fmtcheck, "1", "--to", "p3109")) == 30
    # A bad name anywhere in the list: its one line, no table for the good ones.
    assert_usage_error(fmtcheck("convert", "0.1", "--to", "fp16,e4m3q"), "e4m3q")
    assert_usage_error(fmtcheck("convert", "0.1", "--to", ","), "empty format list")


def test_stochastic_rounding_distribution(fmtcheck):
    # 0.1 / 2^-7 (E4M3's spacing in [2^-4, 2^-3)) = 12.8: neighbours 12 * 2^-7
    # (0x1c) and 13 * 2^-7 (0x1d); the discarded 0.8 of a spacing has top 8
    # bits floor(204.8) = 204, so draws 52..255 round up: 52 and 204 of 256.
    rows = convert_json(fmtcheck, "0.1", "--to", "e4m3", "--round", "sr", "--sr-bits", "8")
    assert [(r["bits"], r["draws"], r["probability"]) for r in rows] == [
        ("0x1c", 52, 52 / 256), ("0x1d", 204, 204 / 256)]
    mean = (52 * Fraction(12, 128) + 204 * Fraction(13, 128)) / 256
    assert rows[0]["expected_value"] == float(mean) and rows[0]["bias"] == float(mean - Fraction(1, 10))
    r = fmtcheck("convert", "0.1", "--to", "e4m3", "--round", "sr", "--sr-bits", "8")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0].endswith(": every outcome of the 2^8 draws")
    assert lines[2].split()[:4] == ["0.1", "0x1c", "0.09375", "0.203125"]
    assert lines[3].split()[:3] == ["0x1d", "0.1015625", "0.796875"]
    assert lines[4] == f"0.1: mean over the draws {float(mean)!r}, bias {float(mean - Fraction(1, 10))!r}"
    # A draw given: that draw's one result, as before (52 is the first that rounds up).
    assert [r["bits"] for r in convert_json(fmtcheck, "0.1", "--to", "e4m3", "--round", "sr", "--sr-bits", "8",
                                            "--sr-random", "52")] == ["0x1d"]
    # Exact values keep one outcome; an overflowing neighbour leaves no mean.
    rows = convert_json(fmtcheck, "448", "464.5", "--to", "e4m3", "--round", "sr", "--sr-bits", "4")
    assert [(r["input"], r["bits"], r["draws"]) for r in rows][0] == ("448", "0x7e", 16)
    assert rows[0]["bias"] == 0
    assert rows[-1]["bits"] == "0x7f" and rows[-1]["expected_value"] is None


def test_several_rounding_modes(fmtcheck):
    # 0.1 lies 0.8 of the way from E4M3's 0x1c (0.09375) to 0x1d (0.1015625):
    # nearest and upward take 0x1d, toward zero and downward 0x1c; -0.1
    # mirrors it. A table per format and mode, formats outermost.
    rows = convert_json(fmtcheck, "0.1", "-0.1", "--to", "e4m3,fp16", "--round", "rne,rtz,rup,rdn")
    e4m3 = [(r["policy"].split(",")[0], r["input"], r["bits"]) for r in rows if r["format"] == "e4m3"]
    assert e4m3 == [("rne", "0.1", "0x1d"), ("rne", "-0.1", "0x9d"), ("rtz", "0.1", "0x1c"), ("rtz", "-0.1", "0x9c"),
                    ("rup", "0.1", "0x1d"), ("rup", "-0.1", "0x9c"), ("rdn", "0.1", "0x1c"), ("rdn", "-0.1", "0x9d")]
    assert [r["format"] for r in rows] == ["e4m3"] * 8 + ["fp16"] * 8
    # In a list --sr-bits is the stochastic modes' alone; alone it is refused
    # for a deterministic mode, as everywhere else.
    rows = convert_json(fmtcheck, "0.1", "--to", "e4m3", "--round", "rne,sr", "--sr-bits", "8")
    assert [(r["bits"], r.get("draws")) for r in rows] == [("0x1d", None), ("0x1c", 52), ("0x1d", 204)]
    assert_usage_error(fmtcheck("convert", "0.1", "--to", "e4m3", "--round", "rne", "--sr-bits", "8"), "--sr-bits")
    assert_usage_error(fmtcheck("convert", "0.1", "--to", "e4m3", "--round", "rne,nearest"), "nearest")
    assert_usage_error(fmtcheck("convert", "0.1", "--to", "e4m3", "--round", ","), "--round")


@pytest.mark.parametrize("args,words", [
    (["1", "--to", "e4m3q"], ["e4m3q"]),                                  # unknown format
    (["1.2.3", "--to", "fp16"], ["1.2.3"]),                               # malformed number
    (["0x1.8q3", "--to", "fp16"], ["0x1.8q3"]),
    (["", "--to", "fp16"], []),
    (["1/0", "--to", "fp16"], ["1/0", "division by zero"]),               # fractions
    (["1/2/3", "--to", "fp16"], ["1/2/3"]),
    (["1", "--to", "fp16", "--round", "nearest"], ["--round", "nearest"]),
    (["1", "--to", "fp16", "--overflow", "clamp"], ["--overflow", "clamp"]),
    (["1", "--to", "fp16", "--subnormals", "flush"], ["--subnormals"]),
    (["1", "--to", "fp16", "--tininess", "never"], ["--tininess"]),
    (["1", "--to", "fp16", "--nan", "sparc"], ["--nan"]),
    (["1", "--to", "fp16", "--sr-bits", "4"], ["--sr-bits"]),              # sr bits without sr
    (["1", "--to", "fp16", "--round", "sr"], ["--sr-bits"]),               # sr without bits
    (["1", "--to", "fp16", "--round", "sr", "--sr-bits", "2", "--sr-random", "4"], ["--sr-random"]),
    (["1", "--to", "fp16", "--round", "sr", "--sr-bits", "33"], ["--sr-bits"]),
    (["--from", "fp16", "0x1ffff", "--to", "e4m3"], ["0x1ffff"]),        # too wide for fp16
    (["--from", "fp16", "12x", "--to", "e4m3"], ["12x"]),                # malformed bits
    (["--from", "tf32", "0x3f800001", "--to", "e4m3"], ["0x3f800001"]),  # tf32 padding bits set
    (["1"], ["--to"]),                                                     # missing option
])
def test_bad_input(fmtcheck, args, words):
    assert_usage_error(fmtcheck("convert", *args), *words)


def test_p3109_names_and_saturation(fmtcheck):
    # 1e6 overflows binary8p3se (max 49152): OvfInf gives +inf (0x7f),
    # SatFinite and SatPropagate +max (0x7e); an infinite input stays
    # infinite under SatPropagate only.
    for overflow, big, inf in [("nosat", "0x7f", "0x7f"), ("sat", "0x7e", "0x7e"), ("satprop", "0x7e", "0x7f")]:
        run = fmtcheck("convert", "--to", "binary8p3se", "--overflow", overflow, "--json", "1e6", "inf")
        assert run.returncode == 0, run.stderr
        assert [row["bits"] for row in json.loads(run.stdout)] == [big, inf]
    assert_usage_error(fmtcheck("convert", "1", "--to", "binary8p8se"), "binary8p8se")
