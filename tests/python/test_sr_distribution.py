"""`fmtcheck convert` with a stochastic --round and no --sr-random prints
every outcome with its share of the 2^n draws, and the mean over the draws.
Against gfloat rounding each input with every one of the 2^n draws (its
StochasticFastest is sr, Stochastic sr-rne): the codes and their counts,
and the mean computed in exact fractions from gfloat's rounded values."""
import json
import subprocess
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from gfloat import round_ndarray

from oracles import GFLOAT_MODE, TARGETS, gfloat_bits, gfloat_domain, is_nan_bits
from sample_inputs import boundary_inputs, random_inputs

FORMATS = ["e4m3", "e5m2", "e2m3", "e2m1", "tf32", "e8m0"]


def cli_distributions(cli, name, x, policy):
    """{input bits: ({code: draws}, expected_value, bias)} from the CLI."""
    args = [f"{int(b):#010x}" for b in x.view(np.uint32)]
    run = subprocess.run([cli, "convert", "--from", "fp32", "--to", name, *policy, "--json", *args],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = {}
    for row in json.loads(run.stdout):
        codes = out.setdefault(int(row["input"], 16), ({}, row["expected_value"], row["bias"]))[0]
        # Outcomes with the same code and other flags (underflow or not) add up.
        codes[int(row["bits"], 16)] = codes.get(int(row["bits"], 16), 0) + row["draws"]
        assert row["probability"] == row["draws"] / 2 ** int(policy[3])
    return out


def nan_as_one(target, counts):
    """gfloat has one NaN code per format (no sign): NaN codes count as one key."""
    out = Counter()
    for code, n in counts.items():
        out["nan" if is_nan_bits(target, np.array([code], np.uint64))[0] else code] += n
    return dict(out)


@pytest.mark.parametrize("mode", ["sr", "sr-rne"])
@pytest.mark.parametrize("n_bits", [3, 6])
@pytest.mark.parametrize("name", FORMATS)
def test_every_outcome_and_its_draws_match_gfloat(cli, name, n_bits, mode):
    target = TARGETS[name]
    rng = np.random.default_rng([FORMATS.index(name), n_bits, len(mode)])
    x = np.concatenate([boundary_inputs(target)[:200], random_inputs(target, 300, rng)])
    x = np.unique(x[gfloat_domain(target, x) & np.isfinite(x)])
    got = cli_distributions(cli, name, x, ["--round", mode, "--sr-bits", str(n_bits)])
    draws = 2 ** n_bits
    several = 0
    for v in x:
        xs = np.full(draws, v, dtype=np.float32)
        srbits = np.arange(draws)
        codes = gfloat_bits(target, xs, mode, False, srbits=srbits, srnumbits=n_bits)
        with np.errstate(over="ignore", invalid="ignore"):
            values = round_ndarray(target.gfloat, xs.astype(np.float64), GFLOAT_MODE[mode], not target.has_nan,
                                   srbits=srbits.astype(np.int64), srnumbits=n_bits)
        want_codes = nan_as_one(target, Counter(int(c) for c in codes))
        got_codes, got_mean, got_bias = got[int(v.view(np.uint32))]
        got_codes = nan_as_one(target, got_codes)
        assert got_codes == want_codes, f"{name} {mode} n={n_bits} input {v!r}"
        several += len(want_codes) > 1
        if np.all(np.isfinite(values)):
            mean = sum(Fraction(float(r)) for r in values) / draws
            assert got_mean == float(mean) and got_bias == float(mean - Fraction(float(v))), f"input {v!r}"
        else:
            assert got_mean is None and got_bias is None
    assert several > len(x) // 4  # most inputs have two outcomes
