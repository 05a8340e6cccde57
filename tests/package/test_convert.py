"""fmtcheck.convert on arrays against gfloat (every rounding mode, sat and
nosat, stochastic rounding with the documented per-value draws), ml_dtypes
and numpy (rne), on every boundary case of each format and random inputs;
from float32, float64, float16 and ml_dtypes inputs; and the flag counts
against the CLI's `analyze` over the same data."""
import json

import ml_dtypes
import numpy as np
import pytest

import fmtcheck
from conftest import run_cli
from oracles import TARGETS, gfloat_bits, gfloat_domain, is_nan_bits, ml_dtypes_bits
from sample_inputs import boundary_inputs, random_inputs

FORMATS = ["tf32", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m3", "e3m2", "e2m1", "e8m0"]
MODES = ["rne", "rna", "rtz", "rup", "rdn"]


def sample(name, count=20_000, seed=0):
    target = TARGETS[name]
    rng = np.random.default_rng([list(TARGETS).index(name), seed])
    return np.concatenate([boundary_inputs(target), random_inputs(target, count, rng)])


def bits(converted, name):
    width = TARGETS[name].storage_bits
    return converted.codes.view(np.uint16 if width == 16 else np.uint32 if width == 32 else np.uint8).astype(np.uint64)


def assert_same(target, x, got, want, what):
    both_nan = is_nan_bits(target, got) & is_nan_bits(target, want)
    bad = np.nonzero((got != want) & ~both_nan)[0]
    examples = ", ".join(f"{x.view(np.uint32)[i]:#010x}: {int(got[i]):#x} vs {int(want[i]):#x}" for i in bad[:6])
    assert bad.size == 0, f"{bad.size} of {x.size} differ from {what}: {examples}"


@pytest.mark.parametrize("sat", [False, True], ids=["nosat", "sat"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FORMATS)
def test_every_mode_matches_gfloat(name, mode, sat):
    target = TARGETS[name]
    x = sample(name)
    got = bits(fmtcheck.convert(x, name, round=mode, overflow="sat" if sat else "nosat"), name)
    keep = gfloat_domain(target, x)
    assert_same(target, x[keep], got[keep], gfloat_bits(target, x[keep], mode, sat), f"gfloat {mode}")


@pytest.mark.parametrize("name", ["tf32", "e4m3", "e5m2", "e4m3fnuz", "e2m3", "e2m1"])
def test_round_to_odd_is_truncation_with_the_sticky_bit(name):
    # gfloat has no round-to-odd; its definition is truncation (gfloat's rtz)
    # with the last code bit set when anything was dropped. Checked on finite
    # inputs within the format's range (beyond it rto overflows like rtz).
    target = TARGETS[name]
    x = sample(name)
    with np.errstate(invalid="ignore"):
        in_range = np.isfinite(x) & (np.abs(x) <= fmtcheck.ranges(name)[0]["max_finite"])
    x = x[in_range]
    got = bits(fmtcheck.convert(x, name, round="rto"), name)
    rtz = gfloat_bits(target, x, "rtz", False)
    container = {8: np.uint8, 16: np.uint16, 32: np.uint32}[target.storage_bits]
    dropped = fmtcheck.decode(rtz.astype(container), name).astype(np.float64) != x
    want = rtz | (dropped.astype(np.uint64) << np.uint64(target.pad_bits))
    # fnuz has no -0: a negative value truncated to zero keeps its sign once the odd bit makes it nonzero.
    want |= ((dropped & (x < 0) & (rtz == 0)).astype(np.uint64) * np.uint64(target.sign_bit)) << np.uint64(target.pad_bits)
    assert_same(target, x, got, want, "truncation with the sticky bit")


def splitmix64_draws(seed, n):
    """RandomStream{seed}.draw(i) as lib/include/fmtcheck/core/random.hpp documents it."""
    with np.errstate(over="ignore"):
        q = np.arange(n, dtype=np.uint64)
        z = np.uint64(seed) + (q >> np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> (np.uint64(32) * (q & np.uint64(1)))) & np.uint64(0xFFFFFFFF)


# sr-rne shares sr's draws (the parallel path hands every stochastic mode
# one per value); two widths of it keep the test short.
@pytest.mark.parametrize("mode,sr_bits", [("sr", 1), ("sr", 3), ("sr", 8), ("sr", 13), ("sr-rne", 3), ("sr-rne", 8)])
@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e2m1", "tf32"])
def test_stochastic_rounding_draws_per_value(name, mode, sr_bits):
    target = TARGETS[name]
    x = sample(name, 8000, seed=sr_bits)
    got = bits(fmtcheck.convert(x, name, round=mode, sr_bits=sr_bits, seed=12345), name)
    draws = splitmix64_draws(12345, x.size) & np.uint64((1 << sr_bits) - 1)
    keep = gfloat_domain(target, x)
    want = gfloat_bits(target, x[keep], mode, False, srbits=draws[keep], srnumbits=sr_bits)
    assert_same(target, x[keep], got[keep], want, "gfloat " + mode)


@pytest.mark.parametrize("name", ["bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m3", "e3m2", "e2m1"])
def test_rne_codes_are_ml_dtypes_arrays(name):
    target = TARGETS[name]
    x = sample(name)
    x = x[~np.isnan(x)]  # NaN payloads: tests/python/conventions.py
    converted = fmtcheck.convert(x, name)
    assert converted.codes.dtype == np.dtype(target.ml_dtype)
    assert_same(target, x, bits(converted, name), ml_dtypes_bits(target, x).astype(np.uint64), "ml_dtypes")


def test_fp16_matches_numpy_and_keeps_the_shape():
    x = sample("e5m2").reshape(-1, 2)[:4000]
    converted = fmtcheck.convert(x, "fp16")
    assert converted.codes.dtype == np.float16 and converted.codes.shape == x.shape
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    finite = ~np.isnan(x)
    assert np.array_equal(converted.codes.view(np.uint16)[finite], want.view(np.uint16)[finite])


@pytest.mark.parametrize("name", ["bf16", "e4m3", "e5m2", "fp16"])
def test_float64_input_rounds_once(name):
    # ml_dtypes rounds float64 through float32 (twice); gfloat once.
    target = TARGETS[name]
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(20_000) * 100, 1 + 2.0**-9 + 2.0**-35 * np.arange(1, 9)])
    got = bits(fmtcheck.convert(x, name), name)
    from gfloat import RoundMode, encode_ndarray, round_ndarray
    want = encode_ndarray(target.gfloat, round_ndarray(target.gfloat, x, RoundMode.TiesToEven, False)).astype(np.uint64)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("source", ["float16", "bfloat16", "float8_e5m2"])
def test_low_precision_inputs_are_read_as_their_values(source):
    dtype = np.float16 if source == "float16" else getattr(ml_dtypes, source)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(50_000) * 30).astype(dtype)
    got = fmtcheck.convert(x, "e4m3").codes
    want = x.astype(np.float32).astype(ml_dtypes.float8_e4m3fn)  # exact widening, then one rounding
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_codes_with_from_and_out_and_threads():
    x = sample("e4m3")
    with np.errstate(over="ignore"):
        half = x.astype(np.float16)
    out = np.empty(x.shape, ml_dtypes.float8_e4m3fn)
    r = fmtcheck.convert(half.view(np.uint16), "e4m3", from_="fp16", out=out, threads=3)
    assert r.codes is out
    one = fmtcheck.convert(half, "e4m3", threads=1)
    assert np.array_equal(out.view(np.uint8), one.codes.view(np.uint8)) and r.flags == one.flags


POLICIES = [
    dict(),
    dict(overflow="sat"),
    dict(round="rtz", subnormals="ftz"),
    dict(round="rup", subnormals="daz", overflow="sat"),
    dict(round="sr", sr_bits=8, seed=99),
]


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default")
@pytest.mark.parametrize("name", ["e4m3", "e5m2", "fp16", "e2m1"])
def test_flag_counts_match_the_cli(cli, tmp_path, name, policy):
    x = np.concatenate([sample("e4m3"), sample("e5m2"), sample("e2m1")])
    flags = fmtcheck.convert(x, name, **policy).flags
    path = tmp_path / "x.npy"
    np.save(path, x)
    options = []
    for key, value in policy.items():
        options += ["--" + key.replace("_", "-"), value]
    run_cli(cli, "analyze", path, "--formats", name, *options, "--json", tmp_path / "a.json")
    measures = json.loads((tmp_path / "a.json").read_text())["results"][0]["measures"]
    assert flags["values"] == measures["values"] == x.size
    for flag, measure in [("inexact", "inexact"), ("saturated", "saturated"), ("tiny_to_zero", "underflow_to_zero"),
                          ("subnormal", "subnormal"), ("flushed", "flushed"), ("nan_produced", "nan_produced")]:
        assert flags[flag] == measures[measure], flag


@pytest.mark.parametrize("mode,sr_bits", [("sr", 8), ("sr-rne", 3), ("sr-rna", 5), ("sr-rno", 1)])
@pytest.mark.parametrize("name", ["e4m3", "e5m2", "fp16", "e2m1"])
def test_stochastic_outcomes_match_the_cli(cli, name, mode, sr_bits):
    # The same distribution as `fmtcheck convert` prints (proven against
    # gfloat with every draw in tests/python): for text, and for floats,
    # which the CLI is given as exact hex floats.
    rng = np.random.default_rng([sr_bits, len(name)])
    texts = ["0.1", "1/3", "-2/3", "448", "1e-3", "-7.5e-6", "464.5"] + [repr(float(v)) for v in rng.standard_normal(8)]
    floats = [float(t) for t in texts if "/" not in t]
    cases = [(t, t) for t in texts] + [(x, x.hex()) for x in floats]
    _, out, _ = run_cli(cli, "convert", "--to", name, "--round", mode, "--sr-bits", sr_bits, "--json", "--",
                        *[cli_text for _, cli_text in cases])
    rows = json.loads(out)
    digits = TARGETS[name].storage_bits // 4
    for x, cli_text in cases:
        want = [r for r in rows if r["input"] == cli_text]
        got = fmtcheck.stochastic_outcomes(x, name, round=mode, sr_bits=sr_bits)
        assert [(f"{o.bits:#0{2 + digits}x}", o.draws, o.probability) for o in got.outcomes] \
            == [(r["bits"], r["draws"], r["probability"]) for r in want], (x, cli_text)
        assert [o.flags.split("|") for o in got.outcomes] == [r["flags"] or ["none"] for r in want]
        assert (got.mean, got.bias) == (want[0]["expected_value"], want[0]["bias"])
        assert sum(o.draws for o in got.outcomes) == 2 ** sr_bits


def test_stochastic_outcomes_by_hand_and_errors():
    # 0.1 into E4M3 on 8 bits: 52 draws give 0x1c and 204 give 0x1d (tests/cli works it out).
    d = fmtcheck.stochastic_outcomes("0.1", "e4m3", sr_bits=8)
    assert [(o.bits, o.exact, o.draws) for o in d.outcomes] == [(0x1C, "0.09375", 52), (0x1D, "0.1015625", 204)]
    assert d.mean == (52 * 12 + 204 * 13) / 128 / 256
    with pytest.raises(ValueError, match="not stochastic"):
        fmtcheck.stochastic_outcomes("0.1", "e4m3", round="rne", sr_bits=0)
    with pytest.raises(ValueError, match="--sr-bits applies only to"):
        fmtcheck.stochastic_outcomes("0.1", "e4m3", round="rne", sr_bits=8)
    with pytest.raises(ValueError, match="division by zero"):
        fmtcheck.stochastic_outcomes("1/0", "e4m3", sr_bits=8)
