"""Speed of fmtcheck.convert from Python on 2^24 float32 values, as ratios to
what was measured in the same run: the C++ path it calls (convert_parallel,
every core, from fmtcheck-bench), and ml_dtypes' / numpy's astype.

Usage: PYTHONPATH=build/python .venv/bin/python tests/bench/python_convert.py build/tests/bench/fmtcheck-bench
The inputs follow fmtcheck-bench's recipe (normal values times 2^-20..2^20,
every 997th a random bit pattern). The machine's load changes from second to
second, so the C++ and Python timings are taken in alternating rounds and
each ratio is that of one round; the table shows the medians over ROUNDS.
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
ROUNDS = 7
REPEATS = 3  # Python runs per round (their median)
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


def cpp_ms(bench):
    """One fmtcheck-bench run of convert_parallel/<format>/rne: ms per conversion, by format."""
    r = subprocess.run([bench, "--benchmark_filter=^convert_parallel/.*/rne/real_time$", "--benchmark_format=json"],
                       capture_output=True, text=True, check=True)
    return {b["run_name"].split("/")[1]: b["real_time"] for b in json.loads(r.stdout)["benchmarks"]}


def main():
    x = inputs()
    outs = {name: np.empty(COUNT, dtype) for name, dtype in FORMATS.items()}
    rounds = []  # per round, per format: (C++, out=, allocating, astype) in ms
    with np.errstate(all="ignore"):
        for _ in range(ROUNDS):
            cpp = cpp_ms(sys.argv[1])
            rounds.append({name: (cpp[name],
                                  median_ms(lambda: fmtcheck.convert(x, name, out=outs[name])),
                                  median_ms(lambda: fmtcheck.convert(x, name)),
                                  median_ms(lambda: x.astype(dtype)))
                           for name, dtype in FORMATS.items()})
    med = statistics.median
    print(f"medians of {ROUNDS} rounds")
    print(f"{'format':7} {'C++ ms':>8} {'out= ms':>8} {'alloc ms':>9} {'astype ms':>10} {'out=/C++':>9} {'alloc/C++':>10} "
          f"{'out=/astype':>12}")
    for name in FORMATS:
        t = [r[name] for r in rounds]
        print(f"{name:7} {med(c for c, _, _, _ in t):8.2f} {med(o for _, o, _, _ in t):8.2f} {med(a for _, _, a, _ in t):9.2f} "
              f"{med(s for _, _, _, s in t):10.2f} {med(o / c for c, o, _, _ in t):9.2f} {med(a / c for c, _, a, _ in t):10.2f} "
              f"{med(o / s for _, o, _, s in t):12.2f}")


if __name__ == "__main__":
    main()
