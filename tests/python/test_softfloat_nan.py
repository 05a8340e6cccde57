"""`--nan riscv` (the canonical convention) against Berkeley SoftFloat
through softfloatpy, whose build uses SoftFloat's RISCV specialisation:
every NaN result is the canonical NaN (0x7E00, 0x7FC00000). The test first
checks that specialisation on SoftFloat itself (an invalid operation and a
NaN operand with a payload), then converts NaN inputs both ways against it:
every fp16 NaN code into float32, and random float32 and float64 NaNs (quiet
and signaling, both signs) into fp16 and float32.

softfloatpy is in scripts/requirements.txt; an environment without it
skips these tests, saying so."""
import json
import subprocess

import numpy as np
import pytest

@pytest.fixture(scope="module")
def sf():
    return pytest.importorskip("softfloatpy", reason="softfloatpy (Berkeley SoftFloat) is not installed: "
                                                     "pip install -r scripts/requirements.txt")


def f16(sf, bits):
    return sf.Float16.from_bytes(int(bits).to_bytes(2, "big"))


def f32(sf, bits):
    return sf.Float32.from_bytes(int(bits).to_bytes(4, "big"))


def f64(sf, bits):
    return sf.Float64.from_bytes(int(bits).to_bytes(8, "big"))


def bits_of(x):
    return int.from_bytes(x.to_bytes(), "big")


def fmtcheck_bits(cli, source, target, bits, digits):
    args = [f"{int(b):#0{digits + 2}x}" for b in bits]
    run = subprocess.run([cli, "convert", "--from", source, "--to", target, "--nan", "riscv", "--json", *args],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return [int(r["bits"], 16) for r in json.loads(run.stdout)]


def random_nans(rng, count, exponent_bits, mantissa_bits):
    mantissa = rng.integers(1, 1 << mantissa_bits, count, dtype=np.uint64)
    sign = rng.integers(0, 2, count, dtype=np.uint64) << np.uint64(exponent_bits + mantissa_bits)
    return sign | np.uint64(((1 << exponent_bits) - 1) << mantissa_bits) | mantissa


def test_softfloat_build_is_the_riscv_specialisation(sf):
    assert bits_of(sf.f16_sub(f16(sf, 0x7C00), f16(sf, 0x7C00))) == 0x7E00
    assert bits_of(sf.f16_add(f16(sf, 0xFE01), f16(sf, 0x3C00))) == 0x7E00  # payload and sign dropped
    assert bits_of(sf.f32_mul(f32(sf, 0), f32(sf, 0xFF800000))) == 0x7FC00000


def test_every_fp16_nan_into_float32(cli, sf):
    codes = [s | 0x7C00 | m for s in (0, 0x8000) for m in range(1, 1 << 10)]
    assert fmtcheck_bits(cli, "fp16", "fp32", codes, 4) == [bits_of(sf.f16_to_f32(f16(sf, c))) for c in codes]


def test_float32_nans_into_fp16(cli, sf):
    nans = random_nans(np.random.default_rng(32), 3000, 8, 23)
    assert fmtcheck_bits(cli, "fp32", "fp16", nans, 8) == [bits_of(sf.f32_to_f16(f32(sf, b))) for b in nans]


def test_float64_nans_into_float32(cli, sf):
    nans = random_nans(np.random.default_rng(64), 3000, 11, 52)
    assert fmtcheck_bits(cli, "fp64", "fp32", nans, 16) == [bits_of(sf.f64_to_f32(f64(sf, b))) for b in nans]
