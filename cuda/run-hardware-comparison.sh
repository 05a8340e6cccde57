#!/usr/bin/env bash
# The whole hardware comparison, on a machine with an NVIDIA GPU (sm_80, sm_89
# or sm_90) and the CUDA toolkit, in one command:
#
#   cuda/run-hardware-comparison.sh [options]
#
#   --build DIR        build directory (default build-hw/); configured for the
#                      architecture of the GPU found (90a for Hopper) and built
#                      with every core, unless --prebuilt
#   --prebuilt         use the fmtcheck and cuda-device already built in DIR
#   --results DIR      where results go (default docs/hardware/<gpu>/)
#   --bundle FILE      after every step, pack the results into FILE (.tar.gz;
#                      the cases into FILE-cases.tar.gz), so a run cut off
#                      still leaves what it measured
#   --steps LIST       comma-separated steps to run (default: all, in this
#                      order of value): convert,mma,wgmma,probe,gemm,train,device,emulator
#   --step-timeout S   seconds one step may take (default 480)
#   --rehearse         no GPU needed: run every step's plumbing; a step passes
#                      when its only failure is the missing GPU (exit 2 with
#                      "no GPU found", or 77 from the device tests). Exit 0 when
#                      every step did, 1 otherwise. CI runs this.
#
# Results: info.txt, per check NAME.txt (the command's output) and NAME.csv (the
# differences; for train the per-step table), cases/<instr>-<acc>/<type>/ (the
# mma and wgmma cases with the hardware's D, in the layout `fmtcheck mma
# --check` replays), device-tests.txt, summary.md (one row per check).
# Exit status: 0 when every check that could run agreed, 1 otherwise.
# docs/hardware.md says what each result means.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# The device programs read committed files (cases, digests) from this tree, wherever it was built.
export FMTCHECK_SOURCE_DIR=$root
build=$root/build-hw
prebuilt=0 rehearse=0 results="" bundle="" step_timeout=480
steps=convert,mma,wgmma,probe,gemm,train,device,emulator
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --prebuilt) prebuilt=1; shift ;;
    --results) results=$(realpath -m "$2"); shift 2 ;;
    --bundle) bundle=$(realpath -m "$2"); shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --step-timeout) step_timeout=$2; shift 2 ;;
    --rehearse) rehearse=1; shift ;;
    *) echo "run-hardware-comparison.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

if [ $prebuilt -eq 0 ]; then
  # Only the GPU's own architecture: a third of the nvcc time of the default fat binary.
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
  case $arch in 90) arch=90a-real ;; "") arch="" ;; *) arch=$arch-real ;; esac
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFMTCHECK_BUILD_BENCH=OFF \
    ${arch:+-DCMAKE_CUDA_ARCHITECTURES=$arch} >/dev/null || exit 1
  ninja -C "$build" -j "$(nproc)" fmtcheck-cli cuda-device cuda-emulator-sweep cuda-emulator-gemm >/dev/null || exit 1
fi
cli=$build/tools/fmtcheck
device_tests=$build/tests/cuda/cuda-device
emulator_sweep=$build/tests/cuda/cuda-emulator-sweep
emulator_gemm=$build/tests/cuda/cuda-emulator-gemm
[ -x "$cli" ] || { echo "run-hardware-comparison.sh: no $cli (build it, or drop --prebuilt)" >&2; exit 2; }

info=$("$cli" hw info 2>&1); info_rc=$?
if [ $info_rc -eq 0 ]; then
  gpu=$(printf '%s\n' "$info" | sed -n 's/^device: *//p' | tr -c 'A-Za-z0-9.\n-' '-')
elif [ $rehearse -eq 1 ]; then
  gpu=rehearsal
else
  echo "fmtcheck hw info failed: $info" >&2; exit 1
fi
out=${results:-$root/docs/hardware/$gpu}
mkdir -p "$out" || exit 2
{
  printf '%s\n' "$info"
  echo
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv 2>&1
} > "$out/info.txt"
tag=$(printf '%s' "$gpu" | sed 's/^NVIDIA-//; s/-.*//')  # H100, H200...

summary=$out/summary.md
{
  echo "# Hardware comparison: $gpu"
  echo
  echo "$(date -u +%Y-%m-%d), fmtcheck ${FMTCHECK_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')}$([ $rehearse -eq 1 ] && echo ', rehearsal without a GPU')."
  printf '%s\n' "$info" | sed -n 's/^\(driver\|runtime\|compute capability\)\(.*\)/\1\2  /p'
  echo
  echo "Exit status per check: 0 agrees bit for bit (or only known gaps), 1 unexplained differences, 2 could not run here,"
  echo "124 cut off after ${step_timeout} s."
  echo
  echo "| check | exit | seconds | result |"
  echo "| --- | --- | --- | --- |"
} > "$summary"

pack() {
  [ -n "$bundle" ] || return 0
  # The cases apart (FILE-cases.tar.gz): the bigger half, each under 16 MiB.
  tar -czf "$bundle.part" --exclude=cases -C "$(dirname "$out")" "$(basename "$out")" && mv "$bundle.part" "$bundle"
  if [ -d "$out/cases" ]; then
    tar -czf "$bundle.part" -C "$(dirname "$out")" "$(basename "$out")/cases" && mv "$bundle.part" "${bundle%.tar.gz}-cases.tar.gz"
  fi
  cp "$summary" "$(dirname "$bundle")/summary.md" 2>/dev/null || true
}

failed=0
# summary_lines FILE: the lines of a check's output that say what agreed. A
# result too long for 100 columns is printed as its title (unindented lines
# ending in ':') and then indented counts ("  N compared, ...", "  N steps
# agree ..."): joined back into one line here; difference tables are dropped.
summary_lines() {
  awk '
    /compared|^PASS|^FAIL|^fmtcheck:|^\[doctest\] (test cases|Status)|SKIPPED/ && /^[^ ]/ { print; title = ""; next }
    /^[^ ]/ { title = title == "" ? $0 : title " " $0; next }
    /^  [0-9]+ (compared|steps agree)/ && title ~ /:$/ { sub(/^ +/, ""); print title " " $0; title = ""; next }
    { title = "" }
  ' "$1"
}

# record NAME RC SECONDS: one summary row; in a rehearsal, fails unless the
# only problem was the missing GPU.
record() {
  name=$1 rc=$2 secs=$3
  result=$(summary_lines "$out/$name.txt" | tr '\n' ';' | sed 's/|/\\|/g')
  # Keep the first 200 differences of a check: the counts are in the result,
  # and 100000-row files per check would not fit a commit or a bundle.
  csv=$out/$name.csv
  if [ -f "$csv" ] && [ "$(wc -l < "$csv")" -gt 201 ]; then
    result="$result CSV: first 200 of $(( $(wc -l < "$csv") - 1 )) rows kept;"
    head -n 201 "$csv" > "$csv.part" && mv "$csv.part" "$csv"
  fi
  echo "| $name | $rc | $secs | $result |" >> "$summary"
  if [ $rehearse -eq 1 ]; then
    if { [ "$rc" -eq 2 ] && grep -q '^fmtcheck: no GPU found: ' "$out/$name.txt"; } || [ "$rc" -eq 77 ]; then :; else
      echo "$name: exit $rc, not the missing GPU:" >&2; head -n 5 "$out/$name.txt" >&2; failed=1
    fi
  else
    [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ] && failed=1
  fi
  echo "$name: exit $rc (${secs} s)"
}

# check NAME ARGS...: `fmtcheck hw ARGS --csv NAME.csv` in the background
# (checks of one step run side by side: the emulator's half is on the CPU).
check() {
  name=$1; shift
  (
    start=$(date +%s)
    timeout "$step_timeout" "$cli" hw "$@" --csv "$out/$name.csv" > "$out/$name.txt" 2>&1
    echo "$? $(( $(date +%s) - start ))" > "$out/$name.rc"
  ) &
}

# finish: waits for the step's checks and records each.
finish() {
  wait
  for f in "$out"/*.rc; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .rc)
    read -r rc secs < "$f"
    rm -f "$f"
    record "$name" "$rc" "$secs"
  done
  pack
}

# run_binary NAME BINARY: a built program's whole output as NAME.txt.
run_binary() {
  if [ -x "$2" ]; then
    start=$(date +%s)
    timeout "$step_timeout" "$2" > "$out/$1.txt" 2>&1
    echo "$? $(( $(date +%s) - start ))" > "$out/$1.rc"
  else
    echo "no $2" > "$out/$1.txt"; echo "2 0" > "$out/$1.rc"
  fi
}

run_step() {
  case $1 in
    convert)
      for spec in fp16:rne fp16:rtz fp16:rup fp16:rdn bf16:rne bf16:rtz tf32:rna tf32:rne tf32:rtz e4m3:rne e5m2:rne; do
        format=${spec%:*}; round=${spec#*:}
        check "convert-$format-$round" convert "$format" --round "$round" --exhaustive
      done ;;
    mma | wgmma)
      # 1024 mma.sync tiles (128 outputs each) or 256 wgmma tiles (512) per kind.
      tiles=1024; [ "$1" = wgmma ] && tiles=256
      for spec in fp16:fp32 fp16:fp16 bf16:fp32 tf32:fp32 e4m3:fp32 e4m3:fp16 e5m2:fp32 e5m2:fp16; do
        type=${spec%:*}; acc=${spec#*:}
        check "$1-$type-$acc" mma --instr "$1" --type "$type" --out "$acc" --random "$tiles" \
          --cases "$out/cases/$1-$acc" --tag "$tag"
      done ;;
    probe) check probe probe ;;
    gemm)
      # Each type into fp32; FP8 with FAST_ACCUM on and off, without and with
      # scales, and an e4m3 D with its scale. A block of each goes to cases/gemm/.
      mkdir -p "$out/cases/gemm"
      gemm_check() { name=$1; shift; check "$name" gemm "$@" --cases "$out/cases/gemm/$name.txt"; }
      for type in fp16 bf16 tf32; do gemm_check "gemm-$type" --type "$type"; done
      gemm_check gemm-e4m3-fast-unscaled --type e4m3 --fast-accum
      gemm_check gemm-e4m3-promoted-unscaled --type e4m3
      gemm_check gemm-e4m3-fast --type e4m3 --fast-accum --scale-a 0.5 --scale-b 2
      gemm_check gemm-e4m3-promoted --type e4m3 --scale-a 0.5 --scale-b 2
      gemm_check gemm-e4m3-to-e4m3 --type e4m3 --out e4m3 --fast-accum --scale-a 0.5 --scale-b 2 --scale-d 8 ;;
    train)
      # The digits MLP: fp16 from a loss scale that overflows (skips, backoff,
      # growth every 50 steps), bf16 with torch's defaults, pure bf16 with
      # stochastically rounded weight updates, tf32 from fp32 registers.
      digits=$out/digits.csv
      gunzip -c "$root/data/digits/digits.csv.gz" > "$digits" || { failed=1; return; }
      check train-fp16 train --steps 300 --half fp16 --data "$digits" --init-scale 16777216 --growth-interval 50
      check train-bf16 train --steps 300 --half bf16 --data "$digits"
      check train-bf16-pure-sr train --steps 300 --half bf16-pure-sr --data "$digits" --lr 0.01
      check train-tf32 train --steps 300 --half tf32 --data "$digits"
      finish
      rm -f "$digits"
      return ;;
    device) run_binary device-tests "$device_tests" ;;
    emulator)
      # fmtcheck's own rounding on the GPU (cuda/src/emulator/) against the
      # CPU on all 2^32 inputs per format and policy, then its speed; the
      # emulated GEMM's speed for every preset, its outputs checked.
      run_binary emulator "$emulator_sweep"
      run_binary emulator-gemm "$emulator_gemm" ;;
    *) echo "run-hardware-comparison.sh: unknown step '$1'" >&2; exit 2 ;;
  esac
  finish
}

pack
for step in $(printf '%s' "$steps" | tr ',' ' '); do
  echo "== $step"
  run_step "$step"
done

echo "results in $out (summary.md)"
exit $failed
