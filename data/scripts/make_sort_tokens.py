"""Writes data/sort/sort.csv.gz, the token task of `fmtcheck train --model
transformer`: 2000 lines, each 6 random tokens 0..7, the separator 8, and
the same 6 tokens sorted (13 comma-separated integers). numpy's PCG64 with
seed 0 draws the tokens; gzip's mtime is 0, so rerunning reproduces the file
bit for bit. Needs numpy."""
import gzip
import pathlib

import numpy as np

LENGTH, VOCAB, SEPARATOR, LINES = 6, 8, 8, 2000

rng = np.random.default_rng(0)
lines = []
for _ in range(LINES):
    tokens = rng.integers(0, VOCAB, LENGTH)
    lines.append(",".join(map(str, [*tokens, SEPARATOR, *np.sort(tokens)])))
out = pathlib.Path(__file__).resolve().parents[1] / "sort" / "sort.csv.gz"
with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
    f.write(("\n".join(lines) + "\n").encode())
