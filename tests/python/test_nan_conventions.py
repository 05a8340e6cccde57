"""`--nan numpy` and `--nan ml_dtypes` against those libraries' casts, on
NaN inputs (quiet and signaling, both signs, random payloads) and on the
NaN a conversion creates (E4M3 overflow without saturation). The other
conventions are proven in C++ against the CPU (tests/arith/test_nan_conventions.cpp)."""
import json
import subprocess

import numpy as np
import pytest

from convert_cli import convert_float32
from oracles import TARGETS

NAN_COUNT = 4000


def nan_inputs(rng):
    fixed = np.array([0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFC12345, 0x7F800001, 0xFF800001, 0x7F812345,
                      0x7FA00000, 0x7FBFFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x7F801FFF, 0x7F802000], dtype=np.uint32)
    mantissa = rng.integers(1, 1 << 23, NAN_COUNT, dtype=np.uint32)
    sign = rng.integers(0, 2, NAN_COUNT, dtype=np.uint32) << np.uint32(31)
    return np.concatenate([fixed, sign | np.uint32(0x7F800000) | mantissa]).view(np.float32)


def library_bits(target, x):
    with np.errstate(invalid="ignore", over="ignore"):
        y = x.astype(target.ml_dtype)
    return y.view(np.uint16 if target.storage_bits == 16 else np.uint8).astype(np.uint64)


def test_numpy_float16_nans(cli):
    x = nan_inputs(np.random.default_rng(16))
    got = convert_float32(cli, "fp16", x, ["--nan", "numpy"])
    want = library_bits(TARGETS["fp16"], x)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(hex(int(x.view(np.uint32)[i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:8]]
    # Not what the ieee convention gives: numpy keeps signaling NaNs signaling.
    assert np.any(got != convert_float32(cli, "fp16", x, ["--nan", "ieee"]))


@pytest.mark.parametrize("name", ["bf16", "e5m2", "e4m3", "e4m3fnuz", "e5m2fnuz", "e2m3", "e3m2", "e2m1", "e8m0"])
def test_ml_dtypes_nans(cli, name):
    target = TARGETS[name]
    x = nan_inputs(np.random.default_rng(list(TARGETS).index(name)))
    # The NaN a conversion creates: +-500 overflows E4M3 (no infinity).
    x = np.concatenate([x, np.array([500.0, -500.0], dtype=np.float32)])
    got = convert_float32(cli, name, x, ["--nan", "ml_dtypes"])
    want = library_bits(target, x)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(hex(int(x.view(np.uint32)[i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:8]]


def test_numpy_float16_nans_from_float64(cli):
    rng = np.random.default_rng(64)
    mantissa = rng.integers(1, 1 << 52, 2000, dtype=np.uint64)
    sign = rng.integers(0, 2, 2000, dtype=np.uint64) << np.uint64(63)
    bits = np.concatenate([np.array([0x7FF0000000000001, 0xFFF4000000000000, 0x7FF8000000000000], dtype=np.uint64),
                           sign | np.uint64(0x7FF0000000000000) | mantissa])
    args = [f"{int(b):#018x}" for b in bits]
    run = subprocess.run([cli, "convert", "--from", "fp64", "--to", "fp16", "--nan", "numpy", "--json", *args],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = np.array([int(r["bits"], 16) for r in json.loads(run.stdout)], dtype=np.uint64)
    with np.errstate(invalid="ignore"):
        want = bits.view(np.float64).astype(np.float16).view(np.uint16).astype(np.uint64)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(hex(int(bits[i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:8]]
