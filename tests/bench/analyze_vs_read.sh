#!/usr/bin/env bash
# The analyze target (within 2x a read), measured: `fmtcheck analyze` of a 1 GiB float32
# .npy against the default 4 formats, as a ratio to reading the same file
# once, cold (O_DIRECT, bypassing the page cache) and warm (cat from the page
# cache). Not part of ctest: it writes a 1 GiB file and takes a minute.
# Usage: tests/bench/analyze_vs_read.sh FMTCHECK [PYTHON] [REPEATS]
set -euo pipefail
cli=${1:?usage: analyze_vs_read.sh path/to/fmtcheck [python with numpy] [repeats]}
python=${2:-python3}
repeats=${3:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
file=$dir/x.npy

# 2^28 float32 values: normal values scaled by 2^-20 .. 2^10 (every format
# sees overflow, subnormals and underflow), written in 64 MiB pieces.
"$python" - "$file" <<'PY'
import sys
import numpy as np
n, piece = 1 << 28, 1 << 24
rng = np.random.default_rng(1)
out = np.lib.format.open_memmap(sys.argv[1], mode="w+", dtype=np.float32, shape=(n,))
for i in range(0, n, piece):
    out[i:i + piece] = rng.standard_normal(piece) * np.exp2(rng.uniform(-20, 10, piece))
out.flush()
PY

seconds() {  # wall seconds of a command, output discarded
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

evict() {  # drops this file's pages from the page cache (its own pages only)
  "$python" -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$file"
}
cold=$(for _ in $(seq "$repeats"); do seconds dd if="$file" of=/dev/null bs=16M iflag=direct; done | median)
cold_analyze=$(for _ in $(seq "$repeats"); do evict; seconds "$cli" analyze "$file"; done | median)
cat "$file" > /dev/null  # into the page cache
warm=$(for _ in $(seq "$repeats"); do seconds cat "$file"; done | median)
analyze=$(for _ in $(seq "$repeats"); do seconds "$cli" analyze "$file"; done | median)
one=$(for _ in $(seq "$repeats"); do seconds "$cli" analyze "$file" --threads 1; done | median)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-36s %8s %14s %14s\n' "median of $repeats" seconds "/ cold read" "/ warm read"
for row in "read once, cold (dd iflag=direct):$cold" "read once, warm (cat):$warm" \
           "fmtcheck analyze, file not cached:$cold_analyze" \
           "fmtcheck analyze (all cores):$analyze" "fmtcheck analyze --threads 1:$one"; do
  name=${row%:*}
  t=${row##*:}
  awk -v n="$name" -v t="$t" -v c="$cold" -v w="$warm" 'BEGIN { printf "%-36s %8.2f %14.2f %14.2f\n", n, t, t / c, t / w }'
done
