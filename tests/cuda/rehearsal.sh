#!/usr/bin/env bash
# cuda/run-hardware-comparison.sh --rehearse on a machine without a GPU
# (BUILD_DIR holds the built fmtcheck, cuda-device, cuda-emulator-sweep and cuda-emulator-gemm):
#  1. every step's plumbing runs and the only failures are the missing GPU:
#     exit 0, one summary row per check, the bundle holds the summary;
#  2. a failure that is not the missing GPU fails the rehearsal: the same
#     run against a stand-in CLI that rejects its arguments exits 1;
#  3. the summary reads results wrapped for the terminal.
# Exits 77 (skipped) where a GPU answers: the real run covers that machine.
set -u
root=$1 build=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
if "$build/tools/fmtcheck" hw info >/dev/null 2>&1; then echo "SKIPPED: a GPU is present"; exit 77; fi

script=$root/cuda/run-hardware-comparison.sh
bash "$script" --build "$build" --prebuilt --rehearse --results "$work/real/rehearsal" \
  --bundle "$work/real/bundle.tar.gz" > "$work/real.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: rehearsal exited $rc"; cat "$work/real.log"; exit 1; }
rows=$(grep '^| [a-z]' "$work/real/rehearsal/summary.md" | grep -vc '^| check |')
# 11 conversions, 8 mma.sync, 8 wgmma, probe, 8 GEMMs, 4 trainings, the device tests, the emulator's
# sweep and GEMM.
[ "$rows" -eq 43 ] || { echo "FAIL: $rows summary rows, expected 43"; cat "$work/real/rehearsal/summary.md"; exit 1; }
tar -tzf "$work/real/bundle.tar.gz" | grep -q '^rehearsal/summary.md$' || { echo "FAIL: bundle lacks summary.md"; exit 1; }

mkdir -p "$work/fake/tools"
printf '#!/bin/sh\necho "fmtcheck: bad --round" >&2\nexit 2\n' > "$work/fake/tools/fmtcheck"
chmod +x "$work/fake/tools/fmtcheck"
bash "$script" --build "$work/fake" --prebuilt --rehearse --results "$work/fake/out" --steps probe > "$work/fake.log" 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a non-GPU failure gave exit $rc, expected 1"; cat "$work/fake.log"; exit 1; }
grep -q 'probe: exit 2, not the missing GPU' "$work/fake.log" || { echo "FAIL: the failure was not named"; cat "$work/fake.log"; exit 1; }
# 3. The summary joins a result wrapped for the terminal (a title over two
#    lines, then indented counts) back into one line and drops difference rows.
source <(sed -n '/^summary_lines() {/,/^}/p' "$script")
printf '%s\n' 'cuBLASLt e4m3 -> fp32, no fast accum, scales a=1 b=1 d=1 M=128 N=128 K=256 (split-K off) vs' \
  'emulated GEMM, promotion every 32:' '  16384 compared, 16142 differ (known gap: a promotion interval tried' \
  '  and rejected)' '  1. hardware 0xc4749706 = -978.36, emulator 0xc474ada6 = -978.71' \
  'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 vs hopper, random tiles: 131072 compared, 0 differ' \
  'PASS: no unexplained difference' > "$work/wrapped.txt"
want='cuBLASLt e4m3 -> fp32, no fast accum, scales a=1 b=1 d=1 M=128 N=128 K=256 (split-K off) vs emulated GEMM, promotion every 32: 16384 compared, 16142 differ (known gap: a promotion interval tried
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 vs hopper, random tiles: 131072 compared, 0 differ
PASS: no unexplained difference'
[ "$(summary_lines "$work/wrapped.txt")" = "$want" ] || { echo "FAIL: summary lines"; summary_lines "$work/wrapped.txt"; exit 1; }
echo "PASS: $rows checks rehearsed; a non-GPU failure is caught; wrapped results are summarised whole"
