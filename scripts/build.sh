#!/usr/bin/env bash
# Configures and builds fmtcheck in build/ (Release), with the tests and the
# benchmark, using .venv's Python for the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PWD/.venv/bin/python" >/dev/null
cmake --build build
