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


# Eight copies of a byte: a word of eight codes is uniform when it equals its lowest byte times this.
REPEAT = np.uint64(0x0101010101010101)


def changes(codes):
    """Positions i (>= 1) where codes[i] != codes[i - 1]. A change lies in
    a word of eight codes that is not uniform, or that differs from the
    word before it; only those words are compared code by code (a sweep
    has a few thousand changes in 2^32 codes)."""
    words = codes.view(np.uint64)
    suspect = words != (words & np.uint64(0xFF)) * REPEAT
    suspect[1:] |= words[1:] != words[:-1]
    positions = (np.flatnonzero(suspect)[:, None] * 8 + np.arange(-1, 8)).ravel()
    positions = np.unique(positions[positions >= 1])
    return positions[codes[positions] != codes[positions - 1]]


def run_ends(cli, name, policy):
    """Bit patterns of both ends of every run, and fmtcheck's codes there."""
    bits, codes = [], []
    for first, got in sweep_chunks(cli, name, 8, policy):
        change = changes(got) - 1
        cuts = [b - first for b in BREAKS if first < b < first + CHUNK]
        at = np.unique(np.concatenate([change, change + 1, [0, CHUNK - 1], cuts, np.subtract(cuts, 1)]))
        at = at.astype(np.int64)
        bits.append(at.astype(np.uint64) + np.uint64(first))
        codes.append(got[at].astype(np.uint64))
    return np.concatenate(bits).astype(np.uint32), np.concatenate(codes)


# A sweep costs about 15 CPU-seconds: fmtcheck's batch table on 2^32 inputs,
# the pipe and the scan for run ends. CI runs two: P = 1 signed extended
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
