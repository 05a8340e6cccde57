#!/usr/bin/env bash
# PyTorch on the GPU against fmtcheck, on a machine with an NVIDIA GPU and
# torch, in one command (docs/hardware.md, "PyTorch on the GPU"):
#
#   PYTHONPATH=DIR/python cuda/run-torch-on-gpu.sh RESULTS CLI [--rehearse] [--steps LIST]
#
# DIR is what cuda/build-for-device.sh built with the GPU machine's Python;
# CLI its tools/fmtcheck. Runs the steps of --steps (default all, comma-separated), each under
# --step-timeout (default 300 s):
#   casts       cuda/torch/casts_every_float32.py: torch's CUDA casts on all
#               2^32 float32 inputs per dtype
#   captures    cuda/torch/capture_steps.py: the GEMMs and casts of autocast
#               fp16/bf16, TF32 and _scaled_mm steps with the GPU's outputs
#   gradscaler  cuda/torch/gradscaler_run.py: a GPU GradScaler run recorded by
#               the Recorder, replayed by `fmtcheck scale`
#   emulator    cuda/torch/emulator_from_python.py: fmtcheck.convert, decode,
#               gemm, analyze and torch.emulate on the GPU against the CPU, bit
#               for bit, timed
# Each writes its report and cases into RESULTS; RESULTS/summary.txt gets one
# line per step. --rehearse (no GPU): passes when every step's only failure is
# the missing GPU; CI runs it. Exit 0 when every step passed.
set -u
usage="usage: cuda/run-torch-on-gpu.sh RESULTS CLI [--rehearse] [--step-timeout S] [--steps LIST]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
results=$(realpath -m "$1") cli=$(realpath -m "$2"); shift 2
rehearse=0 step_timeout=300 steps=casts,captures,gradscaler,emulator
while [ $# -gt 0 ]; do
  case $1 in
    --rehearse) rehearse=1; shift ;;
    --step-timeout) step_timeout=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) echo "run-torch-on-gpu.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
python=${PYTHON:-python3}
mkdir -p "$results" || exit 2
: > "$results/summary.txt"
failed=0
for step in ${steps//,/ }; do
  case $step in
    casts) args=("$root/cuda/torch/casts_every_float32.py" "$results") ;;
    captures) args=("$root/cuda/torch/capture_steps.py" "$results") ;;
    gradscaler) args=("$root/cuda/torch/gradscaler_run.py" "$results" "$cli") ;;
    emulator) args=("$root/cuda/torch/emulator_from_python.py" "$results") ;;
    *) echo "run-torch-on-gpu.sh: unknown step '$step' (casts, captures, gradscaler, emulator)" >&2; exit 2 ;;
  esac
  start=$(date +%s)
  PYTHONUNBUFFERED=1 timeout "$step_timeout" "$python" "${args[@]}" > "$results/$step.log" 2>&1
  rc=$?
  line="$step: exit $rc ($(( $(date +%s) - start )) s): $(tail -n 1 "$results/$step.log")"
  echo "${line:0:100}" | tee -a "$results/summary.txt"
  if [ $rehearse -eq 1 ]; then
    { [ $rc -eq 2 ] && grep -q '^fmtcheck: no GPU found: ' "$results/$step.log"; } || failed=1
  else
    [ $rc -ne 0 ] && failed=1
  fi
done
if [ $failed -eq 0 ]; then
  [ $rehearse -eq 1 ] && echo "PASS: every step's only failure is the missing GPU" ||
    echo "PASS: torch on this GPU is fmtcheck's; commit $results for CI's replay"
else
  echo "FAIL: a step failed; its log in $results says why"
fi
exit $failed
