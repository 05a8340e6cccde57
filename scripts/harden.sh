#!/usr/bin/env bash
# The hardening job (scripts/test.sh, and so CI, runs it after the test suite):
#  1. one clang build in build-harden/ with AddressSanitizer and
#     UndefinedBehaviorSanitizer on everything (any report is fatal) and
#     libFuzzer's coverage instrumentation: the library, the CLI, the unit
#     tests (tensor-core-unit's kernels on every SIMD target among them), the
#     CLI and analysis tests and the fuzz targets (FMTCHECK_FUZZ, tests/fuzz);
#  2. those tests under the sanitizers; a report from any process, the CLI
#     runs of the Python suites included, fails the job, whatever the test
#     made of the exit code;
#  3. each fuzz target for SECONDS (default 30), two at a time, from its seed
#     corpus; any crash, leak, timeout or sanitizer report fails the job and
#     leaves the input in build-harden/fuzz/NAME/ (turn it into a regression
#     input: tests/fuzz/regressions/NAME/).
#   bash scripts/harden.sh [SECONDS]
# Needs clang with libFuzzer (Debian: clang, libclang-rt-14-dev; see
# scripts/install-deps.sh). Uses ccache when present.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build=build-harden
extra=()
if command -v ccache >/dev/null; then
  extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD"
fi
[[ -x .venv/bin/python ]] && extra+=(-DPython3_EXECUTABLE="$PWD/.venv/bin/python")
# -O1 and line tables only: the cheapest build whose reports still name the line.
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DFMTCHECK_FUZZ=ON -DFMTCHECK_ENABLE_CUDA=OFF \
  -DFMTCHECK_BUILD_BENCH=OFF "${extra[@]}" >/dev/null
start=$SECONDS
cmake --build "$build"
echo "harden: build took $((SECONDS - start)) s"

# Sanitizer reports go to files, so that none passes unseen inside a test
# that only looks at the exit code.
reports="$PWD/$build/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
start=$SECONDS
status=0
ctest --test-dir "$build" --output-on-failure -j2 -LE notebook || status=1
echo "harden: the tests under the sanitizers took $((SECONDS - start)) s"
if compgen -G "$reports/*" >/dev/null; then
  echo "harden: sanitizer reports (in $reports):" >&2
  head -n 40 "$reports"/* >&2
  status=1
fi
[[ $status == 0 ]] || exit 1

# The fuzz runs keep their own reports (libFuzzer prints them): no log_path.
export ASAN_OPTIONS="detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fuzz_one() {
  local name=$1 dir="$build/fuzz/$1"
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  cp tests/fuzz/corpus/"$name"/* "$dir/corpus/"
  if "$build/tests/fuzz/fuzz-$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
       -artifact_prefix="$dir/" "$dir/corpus" >"$dir/log" 2>&1; then
    echo "harden: fuzz-$name: $(grep -o 'Done [0-9]* runs' "$dir/log" | tail -1) in ${seconds} s, no finding"
  else
    echo "harden: fuzz-$name FAILED (input and log in $dir):" >&2
    grep -E -A 12 'ERROR|runtime error|deadly|terminate' "$dir/log" | head -n 30 >&2
    return 1
  fi
}
start=$SECONDS
targets=($(sed -n 's/^set(FMTCHECK_FUZZ_TARGETS \(.*\))$/\1/p' tests/fuzz/CMakeLists.txt))
pids=()
for name in "${targets[@]}"; do
  fuzz_one "$name" &
  pids+=($!)
  if ((${#pids[@]} == 2)); then
    wait "${pids[0]}" || status=1
    pids=("${pids[1]}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
echo "harden: ${#targets[@]} fuzz targets took $((SECONDS - start)) s"
exit $status
