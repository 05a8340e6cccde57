#!/usr/bin/env python3
"""Runs fmtcheck-bench and prints its figures as docs/performance.md shows
them: each benchmark's median over the repetitions, in values/s and as
ratios to memcpy and to the CPU's F16C instruction measured in the same run
(and, for a conversion, to the rne path of its format). Only the ratios
carry over between machines and hours.

Usage: ratios.py path/to/fmtcheck-bench [REPETITIONS] [FILTER]
"""
import json
import platform
import subprocess
import sys


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def rate(value):
    return f"{value / 1e9:.2f} G" if value >= 1e9 else f"{value / 1e6:.0f} M"


def ratio(value, reference):
    if not reference:
        return ""
    r = value / reference
    return f"{r:.2f}" if r >= 0.1 else f"{r:.3f}"  # the core's rows are a few hundredths


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    bench = sys.argv[1]
    repetitions = sys.argv[2] if len(sys.argv) > 2 else "5"
    name_filter = sys.argv[3] if len(sys.argv) > 3 else "reference|convert|decode|core"
    run = subprocess.run(
        [bench, f"--benchmark_filter={name_filter}", f"--benchmark_repetitions={repetitions}",
         "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
        check=True, capture_output=True, text=True)
    report = json.loads(run.stdout)
    medians = {b["run_name"]: b["items_per_second"] for b in report["benchmarks"]
               if b.get("aggregate_name") == "median" and "items_per_second" in b}
    memcpy = medians.get("reference/memcpy")
    f16c = medians.get("reference/f16c")
    context = report["context"]
    load = ", ".join(f"{x:.1f}" for x in context.get("load_avg", []))
    print(f"{cpu_model()}, {context['num_cpus']} CPUs; load average {load}; {context['date']}; "
          f"medians of {repetitions} repetitions of CPU time, one thread\n")
    print("| benchmark | values/s | / memcpy | / F16C | / rne of the format |")
    print("| --- | --- | --- | --- | --- |")
    for name, value in medians.items():
        parts = name.split("/")
        rne = medians.get(f"convert/{parts[1]}/rne") if parts[0] == "convert" else None
        print(f"| {name} | {rate(value)} | {ratio(value, memcpy)} | {ratio(value, f16c)} | {ratio(value, rne)} |")


if __name__ == "__main__":
    main()
