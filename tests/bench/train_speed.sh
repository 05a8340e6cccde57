#!/usr/bin/env bash
# Issue 23's speed targets for `fmtcheck train`, measured: 300 steps of the
# digits MLP in the five recipes that run on --gpu hopper (target: at most
# 10 s on 2 cores), each recipe's seconds as a ratio to the fp32 recipe's in
# the same run; and the transformer's cost per million multiply-adds of its
# GEMMs (from the JSON summary). Medians of REPEATS runs. Not part of ctest.
# Usage: tests/bench/train_speed.sh FMTCHECK [REPEATS]
set -euo pipefail
cli=${1:?usage: train_speed.sh path/to/fmtcheck [repeats]}
repeats=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

run() {  # label, then fmtcheck train arguments; appends "label wall recipe seconds..." lines
  local label=$1 start end
  shift
  start=$(date +%s.%N)
  "$cli" train "$@" --json "$dir/s.json" > /dev/null
  end=$(date +%s.%N)
  python3 - "$label" "$start" "$end" "$dir/s.json" >> "$dir/results" <<'PY'
import json, sys
label, start, end, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
s = json.load(open(path))
parts = [f"{r['recipe']}={r['seconds']:.4f}:{r['seconds_per_million_multiply_adds']:.5f}" for r in s["recipes"]]
print(label, f"{end - start:.3f}", *parts)
PY
}

for _ in $(seq "$repeats"); do
  run mlp --data "$root/data/digits/digits.csv.gz" --steps 300 --recipe fp32,fp16,bf16,fp8-delayed,fp8-current
  run transformer --model transformer --data "$root/data/sort/sort.csv.gz" --steps 10 --batch 8 --optimizer adam \
    --recipe fp32,fp16,bf16,fp8-delayed,fp8-current
done

python3 - "$dir/results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for label in ["mlp", "transformer"]:
    mine = [r for r in rows if r[0] == label]
    wall = statistics.median(float(r[1]) for r in mine)
    recipes = {}
    for r in mine:
        for part in r[2:]:
            name, value = part.split("=")
            seconds, per_million = map(float, value.split(":"))
            recipes.setdefault(name, []).append((seconds, per_million))
    print(f"{label}: median wall {wall:.2f} s over {len(mine)} runs")
    base = statistics.median(s for s, _ in recipes["fp32"])
    for name, values in recipes.items():
        s = statistics.median(v for v, _ in values)
        m = statistics.median(p for _, p in values)
        print(f"  {name:12s} {s:8.3f} s  {s / base:6.2f}x fp32  {m * 1e3:8.3f} ms per million multiply-adds")
PY
