#!/bin/sh
# The whole hardware comparison in one command, on a machine with an NVIDIA
# GPU (sm_80, sm_89 or sm_90) and the CUDA toolkit:
#
#   cuda/run-hardware-comparison.sh [BUILD_DIR]
#
# builds fmtcheck with CUDA (default build-hw/), then runs every check and
# writes, under docs/hardware/<gpu>/: info.txt, one .txt and one .csv (the
# differences; for train the per-step table) per check, probe.csv,
# device-tests.txt and summary.md. Exit status: 0 when every check that could
# run agreed, 1 otherwise.
# docs/hardware.md says what each result means.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-hw}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFMTCHECK_BUILD_BENCH=OFF >/dev/null || exit 1
ninja -C "$build" fmtcheck-cli cuda-device || exit 1
cli=$build/tools/fmtcheck

info=$("$cli" hw info) || { echo "fmtcheck hw info failed: no usable GPU" >&2; exit 1; }
gpu=$(printf '%s\n' "$info" | sed -n 's/^device: *//p' | tr -c 'A-Za-z0-9.\n-' '-')
out=$root/docs/hardware/$gpu
mkdir -p "$out"
printf '%s\n' "$info" > "$out/info.txt"

summary=$out/summary.md
{
  echo "# Hardware comparison: $(sed -n 's/^device: *//p' "$out/info.txt")"
  echo
  echo "$(date -u +%Y-%m-%d), fmtcheck $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')."
  echo "Exit status per check: 0 agrees bit for bit (or only known gaps), 1 unexplained differences, 2 could not run here."
  echo
  echo "| check | exit | result |"
  echo "| --- | --- | --- |"
} > "$summary"

failed=0
# check NAME ARGS...: runs `fmtcheck hw ARGS --csv NAME.csv`, records the result.
check() {
  name=$1; shift
  "$cli" hw "$@" --csv "$out/$name.csv" > "$out/$name.txt" 2>&1
  rc=$?
  result=$(grep -E 'compared|steps of batch|^PASS|^FAIL|^fmtcheck:' "$out/$name.txt" | tr '\n' ';' | sed 's/|/\\|/g')
  echo "| $name | $rc | $result |" >> "$summary"
  [ $rc -eq 1 ] && failed=1
  echo "$name: exit $rc"
}

for spec in fp16:rne fp16:rtz fp16:rup fp16:rdn bf16:rne bf16:rtz tf32:rna tf32:rne tf32:rtz e4m3:rne e5m2:rne; do
  format=${spec%:*}; round=${spec#*:}
  check "convert-$format-$round" convert "$format" --round "$round" --exhaustive
done
for spec in fp16:fp32 fp16:fp16 bf16:fp32 tf32:fp32 e4m3:fp32 e4m3:fp16 e5m2:fp32 e5m2:fp16; do
  type=${spec%:*}; acc=${spec#*:}
  check "mma-$type-$acc" mma --type "$type" --out "$acc" --random 1024
done
# wgmma (sm_90a only; elsewhere exit 2): 512 outputs per tile.
for spec in fp16:fp32 fp16:fp16 bf16:fp32 tf32:fp32 e4m3:fp32 e4m3:fp16 e5m2:fp32 e5m2:fp16; do
  type=${spec%:*}; acc=${spec#*:}
  check "wgmma-$type-$acc" mma --instr wgmma --type "$type" --out "$acc" --random 256
done
check probe probe
# cuBLASLt: each type into fp32; FP8 with scales, FAST_ACCUM on and off, and
# an e4m3 D with its scale.
for type in fp16 bf16 tf32; do
  check "gemm-$type" gemm --type "$type"
done
check gemm-e4m3-fast gemm --type e4m3 --fast-accum --scale-a 0.5 --scale-b 2
check gemm-e4m3-promoted gemm --type e4m3 --scale-a 0.5 --scale-b 2
check gemm-e4m3-to-e4m3 gemm --type e4m3 --out e4m3 --fast-accum --scale-a 0.5 --scale-b 2 --scale-d 8
# Training on the digits data: fp16 from a loss scale that overflows (skips,
# backoff, growth every 50 steps), bf16 with torch's defaults.
digits=$build/digits.csv
gunzip -c "$root/data/digits/digits.csv.gz" > "$digits" || exit 1
check train-fp16 train --steps 300 --half fp16 --data "$digits" --init-scale 16777216 --growth-interval 50
check train-bf16 train --steps 300 --half bf16 --data "$digits"

"$build/tests/cuda/cuda-device" > "$out/device-tests.txt" 2>&1
rc=$?
echo "| device tests (tests/cuda/test_on_device.cpp) | $rc | $(tail -n 2 "$out/device-tests.txt" | tr '\n' ';') |" >> "$summary"
[ $rc -ne 0 ] && failed=1

echo "results in $out (summary.md)"
exit $failed
