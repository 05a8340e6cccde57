"""A small sharded Hugging Face checkpoint (safetensors shards and a
model.safetensors.index.json), written with the safetensors package."""
import json
import pathlib

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file


def tensors(seed=11):
    """{shard file name: {tensor name: array}}: bf16 weights over many binades
    (some underflow or overflow FP8), a float32 norm and an int64 buffer."""
    rng = np.random.default_rng(seed)
    shards = {}
    for s in range(3):
        d = {}
        for t in range(3):
            magnitude = 10.0 ** rng.integers(-7, 4)
            d[f"layers.{s}.w{t}"] = (rng.standard_normal(700 + 53 * s + 11 * t) * magnitude).astype(ml_dtypes.bfloat16)
        if s == 1:
            d["layers.1.norm"] = rng.uniform(0.5, 2, 64).astype(np.float32)
            d["position_ids"] = np.arange(16, dtype=np.int64)
        shards[f"model-{s + 1:05d}-of-00003.safetensors"] = d
    return shards


def write_checkpoint(folder, shards=None):
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    shards = tensors() if shards is None else shards
    weight_map = {}
    for name, d in shards.items():
        save_file(d, str(folder / name))
        weight_map.update({t: name for t in d})
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}, indent=2))
    return folder
