"""10^6 random float32 inputs into every IEEE P3109 binary8 member in every
deterministic mode under every saturation mode (30 x 5 x 3 = 450
combinations, 4.5 x 10^8 conversions), fmtcheck's Python package against
gfloat's vectorised round_ndarray / encode_ndarray. The boundaries and ties
of every member are tests/python/test_p3109.py's; whole sweeps of every
float32 are test_p3109_every_float32.py's.

gfloat takes about 0.15 s per million inputs, fmtcheck a few milliseconds:
the test costs about a minute of one core."""
import numpy as np
import pytest

import fmtcheck
from p3109_oracle import MEMBERS, gfloat_codes, in_gfloat_domain, random_inputs

NAMES = list(MEMBERS)
MODES = ["rne", "rna", "rtz", "rup", "rdn"]
OVERFLOWS = ["nosat", "sat", "satprop"]
RANDOM_PER_COMBINATION = 10**6


@pytest.mark.parametrize("overflow", OVERFLOWS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_random_float32_match_gfloat(name, mode, overflow):
    fi = MEMBERS[name]
    rng = np.random.default_rng([0x3109, NAMES.index(name), MODES.index(mode), OVERFLOWS.index(overflow)])
    x = random_inputs(fi, RANDOM_PER_COMBINATION, rng)
    got = fmtcheck.convert(x, name, round=mode, overflow=overflow, threads=1).codes
    keep = in_gfloat_domain(fi, x)
    want = gfloat_codes(fi, x[keep], mode, overflow)
    bad = np.nonzero(got[keep] != want)[0]
    examples = [(hex(int(x[keep].view(np.uint32)[i])), hex(int(got[keep][i])), hex(int(want[i]))) for i in bad[:8]]
    assert bad.size == 0, f"{bad.size} of {keep.sum()} differ from gfloat (input, fmtcheck, gfloat): {examples}"
    # Negative numbers into an unsigned member (outside gfloat's domain): the report's NaN.
    assert np.all(got[~keep] == 0xFF)
