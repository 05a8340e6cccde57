"""Every float32 input into P3109 members: fmtcheck's `sweep` against
gfloat, without gfloat converting 2^32 values (about 3 hours a sweep at
gfloat's 3 us a value).

A conversion is a step function of the input. fmtcheck's sweep is cut into
runs of consecutive float32 bit patterns with one code, and split further
at each chunk's edges and where the sign, zero, infinity or NaN begins, so
that bit patterns order the values inside a run. gfloat converts the two
ends of every run. Where it gives the run's code at both ends it gives it
throughout, as rounding to a format is monotone in the value in every
deterministic mode; where fmtcheck's code changed inside a stretch on which
gfloat's did not (or the reverse), a run on one side of that change has an
end where the two differ. So agreement at every run end is agreement on all
2^32 inputs. A sweep has a few thousand run ends.

Labelled exhaustive; which sweeps run is said below.
"""
import os
import time

import numpy as np
import pytest

from float32_inputs import CHUNK
from p3109_oracle import MEMBERS, gfloat_codes, in_gfloat_domain
from test_p3109 import MODES, OVERFLOWS
from sweep_stream import sweep_chunks

# Bit patterns where a run must start whatever the codes: -0, +inf, the
# first positive NaN, -inf, the first negative NaN.
BREAKS = [0x80000000, 0x7F800000, 0x7F800001, 0xFF800000, 0xFF800001]


def run_ends(cli, name, policy):
    """Bit patterns of both ends of every run, and fmtcheck's codes there."""
    bits, codes = [], []
    for first, got in sweep_chunks(cli, name, 8, policy):
        change = np.nonzero(got[1:] != got[:-1])[0]
        cuts = [b - first for b in BREAKS if first < b < first + CHUNK]
        at = np.unique(np.concatenate([change, change + 1, [0, CHUNK - 1], cuts, np.subtract(cuts, 1)]))
        at = at.astype(np.int64)
        bits.append(at.astype(np.uint64) + np.uint64(first))
        codes.append(got[at].astype(np.uint64))
    return np.concatenate(bits).astype(np.uint32), np.concatenate(codes)


# CI runs two sweeps (about 30 s each on two cores): P = 1 signed extended
# in rup under SatPropagate, and an unsigned extended member in rne under
# OvfInf. FMTCHECK_P3109_SWEEPS=some adds 23 more (five members, signed
# and unsigned, extended and finite, in rne under each saturation mode and
# in rtz and rup under OvfInf); FMTCHECK_P3109_SWEEPS=all runs all 450
# combinations of 30 members, 5 modes and 3 saturation modes.
SOME = [(name, mode, overflow)
        for name in ["binary8p3se", "binary8p4sf", "binary8p1se", "binary8p5ue", "binary8p8uf"]
        for mode, overflow in [("rne", "nosat"), ("rne", "sat"), ("rne", "satprop"), ("rtz", "nosat"), ("rup", "nosat")]]
COMBINATIONS = {
    "all": [(name, mode, overflow) for name in MEMBERS for mode in MODES for overflow in OVERFLOWS],
    "some": SOME + [("binary8p1se", "rup", "satprop")],
}.get(os.environ.get("FMTCHECK_P3109_SWEEPS"), [("binary8p1se", "rup", "satprop"), ("binary8p5ue", "rne", "nosat")])


@pytest.mark.parametrize("name,mode,overflow", COMBINATIONS)
def test_every_float32_matches_gfloat(cli, name, mode, overflow):
    fi = MEMBERS[name]
    start = time.monotonic()
    bits, got = run_ends(cli, name, ["--round", mode, "--overflow", overflow])
    x = bits.view(np.float32)
    keep = in_gfloat_domain(fi, x)
    want = gfloat_codes(fi, x[keep], mode, overflow)
    bad = np.nonzero(got[keep] != want)[0]
    examples = [(hex(int(bits[keep][i])), hex(int(got[keep][i])), hex(int(want[i]))) for i in bad[:8]]
    assert bad.size == 0, f"{bad.size} run ends differ from gfloat: {examples}"
    # Negative inputs into an unsigned member (outside gfloat's domain): NaN.
    assert np.all(got[~keep] == 0xFF)
    print(f"\n{name} {mode} {overflow}: 2^32 inputs, {bits.size} run ends checked, {time.monotonic() - start:.1f} s")
