#!/usr/bin/env bash
# cuda/run-hardware-comparison.sh --rehearse on a machine without a GPU
# (BUILD_DIR holds the built fmtcheck and cuda-device):
#  1. every step's plumbing runs and the only failures are the missing GPU:
#     exit 0, one summary row per check, the bundle holds the summary;
#  2. a failure that is not the missing GPU fails the rehearsal: the same
#     run against a stand-in CLI that rejects its arguments exits 1.
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
# 11 conversions, 8 mma.sync, 8 wgmma, probe, 8 GEMMs, 4 trainings, the device tests.
[ "$rows" -eq 41 ] || { echo "FAIL: $rows summary rows, expected 41"; cat "$work/real/rehearsal/summary.md"; exit 1; }
tar -tzf "$work/real/bundle.tar.gz" | grep -q '^rehearsal/summary.md$' || { echo "FAIL: bundle lacks summary.md"; exit 1; }

mkdir -p "$work/fake/tools"
printf '#!/bin/sh\necho "fmtcheck: bad --round" >&2\nexit 2\n' > "$work/fake/tools/fmtcheck"
chmod +x "$work/fake/tools/fmtcheck"
bash "$script" --build "$work/fake" --prebuilt --rehearse --results "$work/fake/out" --steps probe > "$work/fake.log" 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a non-GPU failure gave exit $rc, expected 1"; cat "$work/fake.log"; exit 1; }
grep -q 'probe: exit 2, not the missing GPU' "$work/fake.log" || { echo "FAIL: the failure was not named"; cat "$work/fake.log"; exit 1; }
echo "PASS: 39 checks rehearsed; a non-GPU failure is caught"
