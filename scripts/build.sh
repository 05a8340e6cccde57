#!/usr/bin/env bash
# Configures and builds fmtcheck in build/ (Release), using .venv's Python
# for the Python tests once scripts/install-deps.sh has made it.
#   bash scripts/build.sh [--strict] [TARGET...]
# TARGETs: build only those (the main job builds fmtcheck-cli, which builds
# the library it links); none: everything, tests and benchmark included.
# --strict: fail when the compiler printed any warning or note (the test
# command and CI use it, so that a new warning fails CI); the build log is
# kept in build/build.log.
set -euo pipefail
cd "$(dirname "$0")/.."
strict=0
if [[ "${1:-}" == "--strict" ]]; then
  strict=1
  shift
fi
python=()
[[ -x .venv/bin/python ]] && python=(-DPython3_EXECUTABLE="$PWD/.venv/bin/python")
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${python[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
if [[ $strict == 0 ]]; then
  cmake --build build "${targets[@]}"
  exit 0
fi
cmake --build build "${targets[@]}" 2>&1 | tee build/build.log
# Compiler and linker diagnostics; ninja's own messages are not about the code.
count=$(grep -E '(warning|note): ' build/build.log | grep -cv '^ninja: ' || true)
if [[ $count != 0 ]]; then
  echo "scripts/build.sh --strict: the compiler printed $count warning or note line(s) (listed above, kept in build/build.log)" >&2
  exit 1
fi
