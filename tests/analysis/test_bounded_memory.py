"""Large files are memory-mapped and released chunk by chunk: analysing a
96 MiB file must not need 96 MiB of memory beyond what the program needs for
a tiny file, and measuring its chunks on
several threads must give exactly what numpy gives and what one thread
gives."""
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import oracle

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

MiB = 1 << 20
REPEATS = 24  # 24 copies of 1 Mi float32 values: 96 MiB, 24 chunks of 2^20 values

# A child's peak RSS includes the memory of the process it was forked from
# (Linux carries the old mm's high-water mark across exec), so the CLI is
# started from a small interpreter, not from pytest with 100+ MiB of arrays.
MEASURE = """import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024)"""


@pytest.mark.skipif(bool(os.environ.get("FMTCHECK_SANITIZED")),
                    reason="under AddressSanitizer freed chunks wait in its quarantine (256 MiB): the RSS measures the sanitizer")
def test_large_file_in_bounded_memory_on_two_threads(tmp_path):
    cli = os.environ["FMTCHECK_CLI"]
    rng = np.random.default_rng(31)
    base = (rng.standard_normal(MiB) * np.exp2(rng.uniform(-20, 10, MiB))).astype(np.float32)
    base[:4] = [np.nan, np.inf, 0.0, 1e6]
    path = tmp_path / "big.npy"
    np.save(path, np.tile(base, REPEATS))
    assert path.stat().st_size > 96 * MiB

    def run(threads, npy=path):
        csv = tmp_path / f"t{threads}.csv"
        r = subprocess.run([sys.executable, "-c", MEASURE, cli, "analyze", npy, "--formats", "e4m3,fp16", "--threads",
                            str(threads), "--csv", csv], capture_output=True, text=True, timeout=300)
        status, rss = map(int, r.stdout.split())
        assert status == 0, r.stderr
        return csv.read_text(), rss

    # The program's own footprint is measured on a 4 KiB file and subtracted:
    # what the binary and its libraries take before any data is read says
    # nothing about how the data is read.
    small = tmp_path / "small.npy"
    np.save(small, base[:1024])
    _, rss0 = run(2, small)
    text2, rss2 = run(2)
    text1, rss1 = run(1)
    assert rss2 - rss0 < 64 * MiB, f"peak RSS {rss2 / MiB:.1f} MiB for a 96 MiB file, {rss0 / MiB:.1f} MiB for 4 KiB"
    assert rss1 - rss0 < 64 * MiB, f"peak RSS {rss1 / MiB:.1f} MiB for a 96 MiB file, {rss0 / MiB:.1f} MiB for 4 KiB"
    assert text1 == text2  # chunk results merge in order: the threads change nothing
    df = pd.read_csv(tmp_path / "t2.csv", float_precision="round_trip")
    for fmt in ["e4m3", "fp16"]:
        want = oracle.analyze(base, fmt)
        got = dict(zip(df[df.format == fmt].measure, df[df.format == fmt].value))
        for name in ["values", "exact", "inexact", "overflow", "underflow_to_zero", "subnormal", "nan_in", "inf_in",
                     "nan_produced"]:
            assert got[name] == REPEATS * want[name], f"{fmt} {name}"
        for name in ["max_abs_error", "max_rel_error", "amax", "best_pow2_scale", "underflow_at_best_pow2_scale"]:
            assert got[name] == want[name], f"{fmt} {name}"
        assert got["mean_rel_error"] == pytest.approx(want["mean_rel_error"], rel=1e-12)
