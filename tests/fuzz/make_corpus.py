"""Writes the fuzz targets' seed corpus (corpus/NAME/) from the bundled real
data: small slices of data/minilm, data/digits, data/digits_mlp_trace and
the published tensor-core files, in each layout the readers accept. Run
from the repository root with the venv's Python and a built CLI (for the
partial result files):
    .venv/bin/python tests/fuzz/make_corpus.py build/tools/fmtcheck
"""
import gzip
import json
import pathlib
import struct
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

root = pathlib.Path(__file__).resolve().parents[2]
out = root / "tests" / "fuzz" / "corpus"
cli = sys.argv[1]
shared = root.parent / "shared" / "data" / "tensor-core"


def put(target, name, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def npy_bytes(array, version=None, fortran=False):
    import io
    buf = io.BytesIO()
    if fortran:
        array = np.asfortranarray(array)
    if version is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


query = np.load(root / "data" / "minilm" / "layer0_query_weight.npy")[:3, :4]
put("npy", "f4.npy", npy_bytes(query.astype("<f4")))
put("npy", "f2-big-endian.npy", npy_bytes(query.astype(">f2")))
put("npy", "f8-fortran.npy", npy_bytes(query.astype("<f8"), fortran=True))
put("npy", "bf16-void.npy", npy_bytes(query.astype(ml_dtypes.bfloat16)))
put("npy", "e5m2.npy", npy_bytes(query.astype(ml_dtypes.float8_e5m2)))
put("npy", "v2-scalar.npy", npy_bytes(query[0, 0].astype("<f4"), version=(2, 0)))
put("npy", "v3-empty.npy", npy_bytes(np.zeros((0, 4), "<f4"), version=(3, 0)))


def safetensors_bytes(tensors, metadata=None):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, array) in tensors.items():
        raw = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


st = {
    "encoder.layer.0.attention.self.query.weight": ("F32", query.astype("<f4")),
    "encoder.layer.0.attention.self.query.bias": ("BF16", query[0].astype(ml_dtypes.bfloat16)),
    "position_ids": ("I64", np.arange(3, dtype="<i8")),
}
put("safetensors", "mixed.safetensors", safetensors_bytes(st, {"format": "pt"}))
put("safetensors", "fp8.safetensors", safetensors_bytes({
    "w": ("F8_E4M3", query.astype(ml_dtypes.float8_e4m3fn)), "g": ("F8_E5M2", query.astype(ml_dtypes.float8_e5m2)),
    "h": ("F16", query.astype("<f2")), "d": ("F64", query[:1].astype("<f8"))}))
put("safetensors", "empty.safetensors", safetensors_bytes({}))
# A real gradient step, cut to its first two tensors' first values.
step = (root / "data" / "digits_mlp_trace" / "step_0000.safetensors").read_bytes()
(n,) = struct.unpack("<Q", step[:8])
real = json.loads(step[8:8 + n])
names = [k for k in real if k != "__metadata__"][:2]
cut = {}
for k in names:
    begin = real[k]["data_offsets"][0]
    cut[k] = ("F32", np.frombuffer(step[8 + n + begin:8 + n + begin + 32], "<f4"))
put("safetensors", "trace-step.safetensors", safetensors_bytes(cut))

# The index beside the fuzz target's two shards ("a", "b" in the first, "c" in the second).
shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
put("safetensors_index", "two-shards.json", json.dumps(
    {"metadata": {"total_size": 12}, "weight_map": {"a": shards[0], "b": shards[0], "c": shards[1]}}, indent=2))
put("safetensors_index", "missing-tensor.json", json.dumps({"weight_map": {"a": shards[0], "b": shards[0]}}))

digits = gzip.open(root / "data" / "digits" / "digits.csv.gz", "rt").read().splitlines()[:6]
columns = ",".join(f"pixel{i}" for i in range(len(digits[0].split(","))))
put("csv", "digits-first-column", "\x00" + "\n".join([columns] + digits[1:]) + "\n")
put("csv", "digits-by-name", "\x02" + "\r\n".join(["x,\"y, quoted\"", "1.5,2", "", " -0x1.8p-3 ,\"3\"", "1e-40,inf"]) + "\r\n")
put("csv", "digits-by-index", "\x01" + "\n".join(digits[:4]) + "\n")

put("raw_options", "fp32-shape", b"fp32\n3,4\n" + query.astype("<f4").tobytes())
put("raw_options", "bf16-no-shape", b"bf16\n\n" + query.astype(ml_dtypes.bfloat16).tobytes())
put("raw_options", "e3m2-custom", b"e3m2\n12\n" + bytes(range(12)))
put("raw_options", "fp64", b"fp64\n2,1\n" + query[0, :2].astype("<f8").tobytes())

for i, text in enumerate(["0.1", "-1e-8", "465", "0x1.8p-3", "-inf", "NaN", "1.0000000000000000000000000001e38",
                          "6.103515625e-05", "123456789012345678901234567890e-30", "+.5e+2", "1/3", "-0.1/3e5"]):
    put("number", f"n{i}", text)
for i, text in enumerate(["fp16", "bf16", "e4m3", "e5m2fnuz", "e4m3fnuz", "e8m0", "e3m2", "e2m1", "tf32", "fp64",
                          "e5m10", "e4m3fn", "binary8p3se", "binary8p4uf", "e11m52", "E4M3"]):
    put("format_name", f"f{i}", text)

put("trace", "manifest", "\x00# step files beside the manifest\nstep_0000.npy\nstep_0001_fc1.npy step_0000.npy\n\n")
put("trace", "folder", "\x01" + "\n".join(["step_0000.safetensors", "step_0001.safetensors", "step-2.npy", "step2_fc1.npy", "notes.txt"]))

for kind, sub, name in [("\x00", "fp16", "a_A100_fp16.txt"), ("\x01", "fp16", "c_A100_fp32.txt")]:
    lines = (shared / "A100" / sub / name).read_text().splitlines()[:6]
    put("mma_files", name, kind + "\n".join(lines) + "\n")
put("mma_files", "instruction.txt",
    "\x02" + (root / "docs/hardware/NVIDIA-H100-80GB-HBM3/cases/wgmma-fp32/e4m3/instruction.txt").read_text())

with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    (tmp / "q.npy").write_bytes(npy_bytes(query.astype("<f4")))
    (tmp / "m.safetensors").write_bytes(safetensors_bytes(st))
    for name, args in [("plain.partial", ["q.npy"]), ("two-files-block.partial", ["q.npy", "m.safetensors", "--block", "4"])]:
        subprocess.run([cli, "analyze", *args, "--formats", "e4m3,fp16", "--partial", str(tmp / name)], check=True, cwd=tmp,
                       stdout=subprocess.DEVNULL)
        put("partial", name, (tmp / name).read_bytes())
