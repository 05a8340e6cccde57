#!/usr/bin/env bash
# Quick start, part two: install, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh --strict
ctest --test-dir build --output-on-failure -j "$(nproc)"
