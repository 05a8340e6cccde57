"""The IEEE P3109 binary8 family against gfloat (format_info_p3109), every
member: precision 1..7 signed, 1..8 unsigned, extended and finite (30).

- Decoding: every code of every member, as `fmtcheck values --csv` lists
  it (class and exact decimal), against gfloat's decode (30 x 256 codes).
- Conversion from float32 in every deterministic mode fmtcheck shares
  with gfloat (rne, rna, rtz, rup, rdn) under each of the report's
  saturation modes (sat = SatFinite, nosat = OvfInf, satprop =
  SatPropagate): 450 combinations, each on every boundary of the member
  (every value, every tie between neighbours, the overflow tie, each with
  its float32 neighbours, both signs) plus RANDOM_PER_COMBINATION random
  float32 inputs through the CLI (1.24 x 10^6 conversions in all, under a
  minute on two cores: the CLI converts about 25,000 inputs a second).
  tests/package/test_p3109_random.py adds 10^6 random inputs per
  combination through the Python package; test_p3109_every_float32.py
  proves whole sweeps of every float32.
- Stochastic rounding with n random bits: sr against gfloat's
  StochasticFastest (round away iff frac + r * 2^-n >= 1), sr-rne against
  its Stochastic (frac * 2^n rounded to nearest even first), sr-rna
  against StochasticFast (frac + (2r + 1) * 2^-(n+1) >= 1: frac * 2^n
  rounded to nearest, ties away, first) and sr-rno against StochasticOdd
  (frac * 2^n rounded to nearest, ties to odd, first).
"""
from fractions import Fraction

import numpy as np
import pytest

from convert_cli import convert_float32
from sample_inputs import fraction_points
from test_decode_values import oracle_class, values_rows
from p3109_oracle import MEMBERS, boundary_inputs, code_values, gfloat_codes, in_gfloat_domain, random_inputs

NAMES = list(MEMBERS)
MODES = ["rne", "rna", "rtz", "rup", "rdn"]
OVERFLOWS = ["nosat", "sat", "satprop"]
RANDOM_PER_COMBINATION = 400


@pytest.mark.parametrize("name", NAMES)
def test_every_code_decodes_as_gfloat(cli, name):
    fi = MEMBERS[name]
    rows = values_rows(cli, name)
    assert len(rows) == 256
    values = code_values(fi)
    for code, (row, value) in enumerate(zip(rows, values)):
        where = f"{name} code {code:#04x}: {row}, gfloat {value}"
        assert row["code"] == f"0x{code:02x}", where
        assert row["class"] == oracle_class(value, 2.0 ** (1 - fi.bias), True), where
        if np.isnan(value):
            assert row["value"] in ("nan", "-nan"), where
        elif np.isinf(value):
            assert row["value"] == ("-inf" if value < 0 else "inf"), where
        else:
            assert Fraction(row["value"]) == Fraction(float(value)), where


@pytest.mark.parametrize("name", NAMES)
def test_code_order_is_value_order(cli, name):
    """The report orders codes as sign-magnitude: 0x00 (zero) up to the
    largest positive code increase in value, and so do the negative codes
    from 0x81 up in magnitude. Checked on gfloat's values; fmtcheck's equal
    them (test above)."""
    fi = MEMBERS[name]
    v = code_values(fi)
    top = 0x7F if fi.is_signed else 0xFE
    assert np.all(np.diff(v[:top + 1]) > 0)
    if fi.is_signed:
        assert np.all(np.diff(v[0x81:]) < 0)


def assert_matches(fi, name, x, got, want, what):
    bad = np.nonzero(got != want)[0]
    examples = "\n".join(f"  input {x.view(np.uint32)[i]:#010x} ({x[i]!r}): fmtcheck {int(got[i]):#04x}, "
                         f"gfloat {int(want[i]):#04x}" for i in bad[:8])
    assert bad.size == 0, f"{bad.size} of {x.size} differ from gfloat ({name} {what}):\n{examples}"


def assert_negative_into_unsigned_is_nan(fi, x, got):
    """gfloat does not model a negative value into an unsigned member; the
    report projects it to NaN (0xFF), as fmtcheck does for every unsigned
    format. Negative zero is zero."""
    if fi.is_signed:
        return
    negative = (x < 0) | (x == -np.inf)
    assert np.all(got[negative] == 0xFF)


@pytest.mark.parametrize("overflow", OVERFLOWS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_conversion_matches_gfloat(cli, name, mode, overflow):
    fi = MEMBERS[name]
    rng = np.random.default_rng([NAMES.index(name), MODES.index(mode), OVERFLOWS.index(overflow)])
    x = np.concatenate([boundary_inputs(fi), random_inputs(fi, RANDOM_PER_COMBINATION, rng)])
    got = convert_float32(cli, name, x, ["--round", mode, "--overflow", overflow])
    keep = in_gfloat_domain(fi, x)
    assert_matches(fi, name, x[keep], got[keep], gfloat_codes(fi, x[keep], mode, overflow), f"{mode} {overflow}")
    assert_negative_into_unsigned_is_nan(fi, x, got)


@pytest.mark.parametrize("mode", ["sr", "sr-rne", "sr-rna", "sr-rno"])
# Ties of the fraction (j/8 of the way between neighbours) tell the
# stochastic modes apart: with 1 bit and draw 0 at 3/4, sr-rno stays where
# sr-rne and sr-rna round away; with 2 bits and draw 2 at 3/8 likewise; with
# 1 bit and draw 1 at 1/4, sr-rna and sr-rno round away where sr-rne stays.
@pytest.mark.parametrize("n_bits,draw", [(1, 0), (1, 1), (2, 2), (3, 5), (8, 0), (8, 255), (13, 4097)])
@pytest.mark.parametrize("name", ["binary8p1se", "binary8p3se", "binary8p4sf", "binary8p7sf", "binary8p5ue", "binary8p8uf"])
def test_stochastic_rounding_matches_gfloat(cli, name, n_bits, draw, mode):
    fi = MEMBERS[name]
    rng = np.random.default_rng([NAMES.index(name), n_bits, draw])
    ties = fraction_points(code_values(fi), 8)  # the fraction's ties for n = 1, 2
    x = np.concatenate([boundary_inputs(fi), ties, random_inputs(fi, 1000, rng)])
    got = convert_float32(cli, name, x, ["--round", mode, "--sr-bits", str(n_bits), "--sr-random", str(draw)])
    keep = in_gfloat_domain(fi, x)
    want = gfloat_codes(fi, x[keep], mode, "nosat", srbits=np.full(keep.sum(), draw), srnumbits=n_bits)
    assert_matches(fi, name, x[keep], got[keep], want, f"{mode} {n_bits} bits, draw {draw}")
