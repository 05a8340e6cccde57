#!/usr/bin/env bash
# Configures and builds fmtcheck in build/ (Release).
#   bash scripts/build.sh [--strict] [TARGET...]
# TARGETs: build only those (the main job builds fmtcheck-cli, which builds
# the library it links); none: everything, tests, benchmark and the Python
# package included.
# With .venv (made by scripts/install-deps.sh) the Python tests use its
# Python, the package is built, and .venv is pointed at build/python (a .pth
# file), so that `import fmtcheck` works there without a second build.
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
if [[ -x .venv/bin/python ]]; then
  python=(-DPython3_EXECUTABLE="$PWD/.venv/bin/python" -DPython_EXECUTABLE="$PWD/.venv/bin/python"
          -DFMTCHECK_BUILD_PYTHON=ON)
fi
# ccache, where present, keeps compiled objects across clones and runs (relative to the checkout, so
# another clone of the same sources hits them too); compiler warnings are replayed from the cache.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD"
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${python[@]}" "${launcher[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
if [[ $strict == 0 ]]; then
  cmake --build build "${targets[@]}"
else
  cmake --build build "${targets[@]}" 2>&1 | tee build/build.log
  # Compiler and linker diagnostics; ninja's own messages are not about the code.
  count=$(grep -E '(warning|note): ' build/build.log | grep -cv '^ninja: ' || true)
  if [[ $count != 0 ]]; then
    echo "scripts/build.sh --strict: the compiler printed $count warning or note line(s) (listed above, kept in build/build.log)" >&2
    exit 1
  fi
fi
if [[ ${#python[@]} != 0 && ${#targets[@]} == 0 ]]; then
  site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$PWD/build/python" > "$site/fmtcheck-build.pth"
fi
