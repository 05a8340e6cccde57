#!/usr/bin/env bash
# Configures and builds fmtcheck in build/ (Release), with the tests, the
# benchmark and the Python package, using .venv's Python; then points .venv
# at the package built in build/python (a .pth file), so that `import
# fmtcheck` works in .venv without a second build.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PWD/.venv/bin/python" \
  -DPython_EXECUTABLE="$PWD/.venv/bin/python" -DFMTCHECK_BUILD_PYTHON=ON >/dev/null
cmake --build build
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/build/python" > "$site/fmtcheck-build.pth"
