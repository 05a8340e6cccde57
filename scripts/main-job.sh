#!/usr/bin/env bash
# Quick start, part one: install, build, and run fmtcheck's main job on the
# bundled data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
echo
echo "== fmtcheck ranges"
build/tools/fmtcheck ranges
echo
echo "== fmtcheck analyze (bundled real tensors)"
build/tools/fmtcheck analyze data/weights/*.npy --formats fp16,bf16,e4m3,e5m2
