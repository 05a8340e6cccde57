"""Speed of fmtcheck.convert from Python on 2^24 float32 values, as ratios to
what was measured in the same run: the C++ path it calls (convert_parallel,
every core, from fmtcheck-bench), and ml_dtypes' / numpy's astype.

What each side includes:
- C++: fmtcheck-bench's convert_parallel/<format>/rne, wall-clock time of the
  call alone, from and into std::vectors allocated before the timed loop
  (4 KiB pages where transparent huge pages are "madvise").
- C++ huge: convert_parallel_huge/<format>/rne, the same with input and output
  in huge pages, as numpy's arrays of 4 MiB and more and the package's large
  results are here.
- out=: fmtcheck.convert(x, fmt, out=codes) into an array allocated once: the
  Python call, argument checks, the DLPack/numpy import and the conversion.
- new: fmtcheck.convert(x, fmt), which returns a new array: the same plus its
  allocation, in the extension's memory, which keeps a freed result's pages
  for the next result of the size (python/src/fresh_memory.cpp).
- fresh: convert(..., out=np.empty(...)) with a new numpy array per call: for
  16-bit codes (32 MiB) malloc maps memory new from the kernel each time, so
  this pays the page faults that the first result of a size pays in "new".
- astype: x.astype(dtype), numpy's or ml_dtypes' conversion with allocation.

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
    run()  # warm: thread start-up, the first faults of out= and of the memory "new" reuses
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def cpp_ms(bench):
    """One fmtcheck-bench run of convert_parallel(_huge)/<format>/rne: ms per conversion, by
    (benchmark, format)."""
    r = subprocess.run([bench, "--benchmark_filter=^convert_parallel(_huge)?/.*/rne/real_time$",
                        "--benchmark_format=json"], capture_output=True, text=True, check=True)
    return {tuple(b["run_name"].split("/")[:2]): b["real_time"] for b in json.loads(r.stdout)["benchmarks"]}


def main():
    x = inputs()
    outs = {name: np.empty(COUNT, dtype) for name, dtype in FORMATS.items()}
    rounds = []  # per round, per format: (C++, C++ huge, out=, new, fresh, astype) in ms
    with np.errstate(all="ignore"):
        for _ in range(ROUNDS):
            cpp = cpp_ms(sys.argv[1])
            rounds.append({name: (cpp["convert_parallel", name], cpp["convert_parallel_huge", name],
                                  median_ms(lambda: fmtcheck.convert(x, name, out=outs[name])),
                                  median_ms(lambda: fmtcheck.convert(x, name)),
                                  median_ms(lambda: fmtcheck.convert(x, name, out=np.empty(COUNT, dtype))),
                                  median_ms(lambda: x.astype(dtype)))
                           for name, dtype in FORMATS.items()})
    med = statistics.median
    columns = ("C++", "C++ huge", "out=", "new", "fresh", "astype")
    ratios = {"out=/C++": (2, 0), "new/C++": (3, 0), "fresh/C++": (4, 0), "new/C++ huge": (3, 1), "new/astype": (3, 5)}
    print(f"medians of {ROUNDS} rounds; ms, then ratios per round")
    print(f"{'format':7}" + "".join(f"{c + ' ms':>12}" for c in columns) + "".join(f"{c:>14}" for c in ratios))
    for name in FORMATS:
        t = [r[name] for r in rounds]
        ms = [med(r[k] for r in t) for k in range(len(columns))]
        quotients = [med(r[a] / r[b] for r in t) for a, b in ratios.values()]
        print(f"{name:7}" + "".join(f"{v:12.2f}" for v in ms) + "".join(f"{v:14.2f}" for v in quotients))

if __name__ == "__main__":
    main()
