#!/usr/bin/env bash
# Quick start, part two: install, build, run the whole test suite (ctest),
# then the hardening job (scripts/harden.sh: the sanitizer build, the unit,
# CLI and analysis tests under it, and 30 s of each fuzz target).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh --strict
ctest --test-dir build --output-on-failure -j "$(nproc)"
bash scripts/harden.sh
