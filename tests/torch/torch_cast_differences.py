"""Where torch's CPU casts x.to(dtype) differ from IEEE 754 and from ml_dtypes, on every float32 input:
the counts behind docs/formats.md's "torch's casts" table.

    PYTHONPATH=build/python .venv/bin/python tests/torch/torch_cast_differences.py [dtype...]

IEEE here is fmtcheck's nearest-even, no saturation, `nan="ieee"` (F16C's NaN rule: quiet, sign and top
payload bits kept); ml_dtypes is that library's own astype (numpy's float16 for fp16, which ml_dtypes
leaves to numpy). Each differing input is counted in one class: NaN input, infinite input, or finite
input (an overflow, where the other side saturates or not). 8 to 25 s a dtype on 2 cores, fp16 four
minutes (numpy's float16 cast is slow); test_casts_every_float32.py is the test that torch and fmtcheck's
torch convention agree.
"""
import sys
import time

import ml_dtypes
import numpy as np
import torch

import fmtcheck

CHUNK = 1 << 24
# dtype name: (torch dtype, fmtcheck format, the library's dtype, the library's name)
DTYPES = {
    "fp16": (torch.float16, "fp16", np.float16, "numpy"),
    "bf16": (torch.bfloat16, "bf16", ml_dtypes.bfloat16, "ml_dtypes"),
    "e4m3fn": (torch.float8_e4m3fn, "e4m3", ml_dtypes.float8_e4m3fn, "ml_dtypes"),
    "e5m2": (torch.float8_e5m2, "e5m2", ml_dtypes.float8_e5m2, "ml_dtypes"),
    "e4m3fnuz": (torch.float8_e4m3fnuz, "e4m3fnuz", ml_dtypes.float8_e4m3fnuz, "ml_dtypes"),
    "e5m2fnuz": (torch.float8_e5m2fnuz, "e5m2fnuz", ml_dtypes.float8_e5m2fnuz, "ml_dtypes"),
}
CLASSES = ("nan", "inf", "finite")


def differences(name):
    dtype, fmt, library, library_name = DTYPES[name]
    bits = np.arange(CHUNK, dtype=np.uint32)
    values = bits.view(np.float32)
    source = torch.from_numpy(values)
    result = torch.empty(CHUNK, dtype=dtype)
    width = result.element_size()
    uint = {1: np.uint8, 2: np.uint16}[width]
    theirs = result.view({1: torch.uint8, 2: torch.int16}[width]).numpy().view(uint)
    ieee = np.empty(CHUNK, dtype=uint)
    lib = np.empty(CHUNK, dtype=library)
    counts = {other: dict.fromkeys(CLASSES, 0) for other in ("ieee", library_name)}
    examples = {other: {} for other in counts}
    for _ in range((1 << 32) // CHUNK):
        result.copy_(source)
        fmtcheck.convert(values, fmt, overflow="nosat", nan="ieee", out=ieee)
        with np.errstate(all="ignore"):
            lib[...] = values
        for other, bits_other in (("ieee", ieee), (library_name, lib.view(uint))):
            differ = theirs != bits_other
            if not differ.any():
                continue
            masks = {"nan": np.isnan(values), "inf": np.isinf(values)}
            masks["finite"] = ~(masks["nan"] | masks["inf"])
            for cls in CLASSES:
                where = np.flatnonzero(differ & masks[cls])
                counts[other][cls] += where.size
                if where.size and cls not in examples[other]:
                    i = where[0]
                    examples[other][cls] = (int(bits[i]), int(theirs[i]), int(bits_other[i]))
        bits += np.uint32(CHUNK)
    return counts, examples


def main(names):
    for name in names:
        start = time.perf_counter()
        counts, examples = differences(name)
        hexw = 2 + 2 * DTYPES[name][0].itemsize
        for other in counts:
            total = sum(counts[other].values())
            parts = ", ".join(f"{cls} {n:,}" for cls, n in counts[other].items() if n)
            first = "; ".join(f"{cls}: {x:#010x} -> torch {t:#0{hexw}x}, {other} {o:#0{hexw}x}"
                              for cls, (x, t, o) in examples[other].items())
            print(f"{name} vs {other}: {total:,} ({parts or 'none'}) {first}")
        print(f"  ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or list(DTYPES))
