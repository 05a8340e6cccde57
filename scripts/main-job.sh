#!/usr/bin/env bash
# Quick start, part one: install, build the CLI (and the library it links,
# nothing else), and run fmtcheck's main job on the bundled data. It ends
# with analyze's verdict: per format, what overflows or underflows to zero
# and the scale that fixes it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --no-python
bash scripts/build.sh fmtcheck-cli
echo
echo "== fmtcheck ranges"
build/tools/fmtcheck ranges
echo
echo "== fmtcheck scale: GradScaler replay of a real gradient trace (digits MLP, 300 steps)"
build/tools/fmtcheck scale data/digits_mlp_trace --growth-interval 50
echo
echo "== fmtcheck train: digits MLP, 300 steps, fp32/fp16 (GradScaler)/bf16/FP8 on an emulated H100"
build/tools/fmtcheck train --data data/digits/digits.csv.gz --steps 300
echo
echo "== fmtcheck analyze: real weights (all-MiniLM-L6-v2 layer 0) in fp16, bf16, e4m3, e5m2"
build/tools/fmtcheck analyze data/minilm/layer0.safetensors
