"""The user workflow "is my cast kernel right?": someone's float32 -> e4m3
cast (here ml_dtypes' astype, RNE without saturation) over all 2^32 inputs,
piped into `fmtcheck verify --to e4m3 --against -`.

The honest stream must pass (exit 0): this is also the exhaustive proof that
fmtcheck's e4m3 RNE nosat agrees with ml_dtypes bit for bit (both keep the
NaN's sign: S.1111.111). A copy with a few known results corrupted must fail
(exit 1) with the right count in each class. Both verify processes read the
same generated stream at once, so ml_dtypes converts each chunk only once.
"""
import re
import subprocess

import ml_dtypes
import numpy as np
import pytest

from float32_inputs import CHUNK, COUNT, chunk_inputs

# Inputs whose result the corrupted stream flips (XOR 1 on the code: the
# neighbouring code, or NaN <-> max), by the class `verify` reports.
CORRUPTED = {
    "nan": [0x7FC00000],
    "overflow": [0x447A0000, 0xFF800000],  # 1000.0 (> 448), -inf
    "subnormal": [0x3B800000, 0xBB000000, 0x3C000000],  # 2^-8, -2^-9, 2^-7 (below 2^-6)
    # Exact ties between neighbouring e4m3 values: 1.0625 (1, 1.125),
    # 1.1875 (1.125, 1.25), 17.0 (16, 18), 3.125 (3, 3.25).
    "tie": [0x3F880000, 0x3F980000, 0x41880000, 0x40480000],
    "other": [0x3F8CCCCD, 0x402CCCCD, 0xC0A9999A, 0x42C83333, 0x3E99999A],  # 1.1, 2.7, -5.3, 100.1, 0.3
}


def run_verify_pair(cli):
    cmd = [cli, "verify", "--to", "e4m3", "--against", "-"]
    honest = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    corrupt = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    flips = np.array(sorted(i for inputs in CORRUPTED.values() for i in inputs), dtype=np.uint64)
    try:
        for first in range(0, COUNT, CHUNK):
            ours = chunk_inputs(first).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
            honest.stdin.write(ours.tobytes())
            here = flips[(flips >= first) & (flips < first + CHUNK)] - np.uint64(first)
            if here.size:
                ours = ours.copy()
                ours[here.astype(np.int64)] ^= 1
            corrupt.stdin.write(ours.tobytes())
    finally:
        for p in (honest, corrupt):
            p.stdin.close()
    return [(p.wait(), p.stdout.read().decode(), p.stderr.read().decode()) for p in (honest, corrupt)]


@pytest.fixture(scope="module")
def verify_results(cli):
    with np.errstate(invalid="ignore", over="ignore"):
        return run_verify_pair(cli)


def test_ml_dtypes_e4m3_sweep_verifies(verify_results):
    rc, out, err = verify_results[0]
    assert (rc, err) == (0, ""), out
    assert "all 4294967296 inputs agree" in out


def test_corrupted_sweep_reports_each_class(verify_results):
    rc, out, err = verify_results[1]
    assert rc == 1, out + err
    total = sum(len(v) for v in CORRUPTED.values())
    assert f"{total} of 4294967296 inputs differ" in out
    counts = {m[1]: int(m[2]) for m in re.finditer(r"^(nan|overflow|subnormal|tie|other)\s+(\d+)\s*$", out, re.M)}
    assert counts == {c: len(v) for c, v in CORRUPTED.items()}, out
    for inputs in CORRUPTED.values():
        for i in inputs:
            assert f"{i:#010x}" in out, f"example for input {i:#010x} missing:\n{out}"
