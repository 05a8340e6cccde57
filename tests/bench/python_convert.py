"""Speed of fmtcheck.convert from Python on 2^24 float32 values, as ratios to
what was measured in the same run: the C++ path it calls (convert_parallel,
every core, from fmtcheck-bench), and ml_dtypes' / numpy's astype.

Usage: PYTHONPATH=build/python .venv/bin/python tests/bench/python_convert.py build/tests/bench/fmtcheck-bench
The inputs follow fmtcheck-bench's recipe (normal values times 2^-20..2^20,
every 997th a random bit pattern); medians of REPEATS runs each.
"""
import json
import statistics
import subprocess
import sys
import time

import ml_dtypes
import numpy as np

import fmtcheck

COUNT = 1 << 24
REPEATS = 9
FORMATS = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def inputs():
    rng = np.random.default_rng(42)
    x = (rng.standard_normal(COUNT) * np.exp2(rng.integers(-20, 21, COUNT))).astype(np.float32)
    x[::997] = rng.integers(0, 2**32, x[::997].size, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return x


def median_ms(run):
    run()  # warm: page faults of a fresh output, thread start-up
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def cpp_medians(bench):
    r = subprocess.run([bench, "--benchmark_filter=^convert_parallel/.*/rne$", f"--benchmark_repetitions={REPEATS}",
                        "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                       capture_output=True, text=True, check=True)
    return {b["run_name"].split("/")[1]: b["real_time"] for b in json.loads(r.stdout)["benchmarks"]
            if b.get("aggregate_name") == "median"}


def main():
    x = inputs()
    cpp = cpp_medians(sys.argv[1])
    print(f"{'format':7} {'C++ ms':>8} {'out= ms':>8} {'alloc ms':>9} {'astype ms':>10} {'out=/C++':>9} {'alloc/C++':>10} {'out=/astype':>12}")
    with np.errstate(all="ignore"):
        for name, dtype in FORMATS.items():
            out = np.empty(COUNT, dtype)
            into = median_ms(lambda: fmtcheck.convert(x, name, out=out))
            alloc = median_ms(lambda: fmtcheck.convert(x, name))
            astype = median_ms(lambda: x.astype(dtype))
            print(f"{name:7} {cpp[name]:8.2f} {into:8.2f} {alloc:9.2f} {astype:10.2f} {into / cpp[name]:9.2f} "
                  f"{alloc / cpp[name]:10.2f} {into / astype:12.2f}")


if __name__ == "__main__":
    main()
