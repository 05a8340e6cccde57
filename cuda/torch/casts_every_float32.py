"""torch's CUDA casts, x.to(dtype) on the GPU, against fmtcheck.convert on every float32 input (2^32 per
dtype): the GPU counterpart of tests/torch/test_casts_every_float32.py, run on a lent GPU.

    PYTHONPATH=.hwcarry/python python3 cuda/torch/casts_every_float32.py OUTDIR

Non-NaN inputs are compared under nearest-even and the overflow mode below (NaN conventions differ
only on NaN inputs); where they differ, the report says which overflow mode gives the GPU's codes. The 2 x (2^23 - 1) NaN inputs are then compared under every NaN
convention fmtcheck has, and the ones that give the GPU's bits on all of them are reported. torch is the
oracle: nothing expected comes from fmtcheck. Writes OUTDIR/casts.txt (the report) and
OUTDIR/casts-cases.npz: per dtype a sample of inputs with the GPU's codes (uniform bit patterns, the
overflow and underflow ranges, NaNs, and every input that differed), which
tests/torch/test_gpu_captures.py replays in CI. Exit 2 without a GPU."""
import sys
import time
from pathlib import Path

import numpy as np
import torch

import fmtcheck

CHUNK = 1 << 28
ALL = 1 << 32
# dtype name: (torch dtype, fmtcheck format, the overflow mode of torch's CUDA cast). Unlike its CPU
# cast, torch's CUDA cast into float8_e4m3fn does not saturate: overflow and infinities become NaN
# (measured on an H200, docs/hardware/NVIDIA-H200/torch/casts.txt).
CASTS = {
    "fp16": (torch.float16, "fp16", "nosat"),
    "bf16": (torch.bfloat16, "bf16", "nosat"),
    "e4m3fn": (torch.float8_e4m3fn, "e4m3", "nosat"),
    "e5m2": (torch.float8_e5m2, "e5m2", "nosat"),
    "e4m3fnuz": (torch.float8_e4m3fnuz, "e4m3fnuz", "nosat"),
    "e5m2fnuz": (torch.float8_e5m2fnuz, "e5m2fnuz", "nosat"),
}
CONVENTIONS = ("torch", "cuda", "ieee", "x86", "arm", "arm-dn", "riscv", "numpy", "ml_dtypes", "canonical")
SAMPLE = 1 << 14


def uint(dtype):
    return {1: (torch.uint8, np.uint8), 2: (torch.int16, np.uint16)}[torch.empty(0, dtype=dtype).element_size()]


def gpu_cast(bits: np.ndarray, dtype) -> np.ndarray:
    """The GPU's codes of float32 bit patterns cast to dtype."""
    torch_int, np_int = uint(dtype)
    x = torch.from_numpy(bits.view(np.int32)).cuda().view(torch.float32)
    return x.to(dtype).view(torch_int).cpu().numpy().view(np_int)


def nan_inputs() -> np.ndarray:
    payload = np.arange(1, 1 << 23, dtype=np.uint32)
    return np.concatenate([np.uint32(0x7F800000) | payload, np.uint32(0xFF800000) | payload])


def sample_inputs(fmt: str, rng) -> np.ndarray:
    """Uniform bit patterns, then values around the format's largest finite (overflow, saturation)
    and its smallest subnormal to smallest normal (underflow), both signs, then NaNs."""
    info = fmtcheck.ranges(fmt)[0]
    top, tiny = float(info["max_finite"]), float(info["min_subnormal"])

    def log_uniform(lo, hi):
        v = np.exp(rng.uniform(np.log(lo), np.log(min(hi, 3e38)), SAMPLE)).astype(np.float32)
        v[rng.random(SAMPLE) < 0.5] *= -1
        return v.view(np.uint32)

    nans = nan_inputs()
    return np.concatenate([rng.integers(0, ALL, SAMPLE, dtype=np.uint64).astype(np.uint32),
                           log_uniform(top / 2, top * 4), log_uniform(tiny / 8, tiny * 2 ** 12),
                           nans[rng.integers(0, nans.size, SAMPLE // 4)]])


def sweep(name):
    dtype, fmt, overflow = CASTS[name]
    torch_int, np_int = uint(dtype)
    ours = np.empty(CHUNK, dtype=np_int)
    count, differing, infinite, smallest = 0, [], 0, np.inf
    for start in range(0, ALL, CHUNK):
        signed = start - ALL if start >= ALL // 2 else start  # the chunk's bit patterns as int32
        x = torch.arange(signed, signed + CHUNK, dtype=torch.int32, device="cuda")
        theirs = x.view(torch.float32).to(dtype).view(torch_int).cpu().numpy().view(np_int)
        bits = np.arange(start, start + CHUNK, dtype=np.uint64).astype(np.uint32)
        values = bits.view(np.float32)
        fmtcheck.convert(values, fmt, overflow=overflow, nan="torch", out=ours)
        differ = (theirs != ours) & ~np.isnan(values)
        if differ.any():
            where = np.flatnonzero(differ)
            count += where.size
            infinite += int(np.isinf(values[where]).sum())
            smallest = min(smallest, float(np.abs(values[where]).min()))
            differing.append(bits[where[:4096]])
    # NaN inputs, under every convention.
    nans = nan_inputs()
    theirs = gpu_cast(nans, dtype)
    matches = []
    for c in CONVENTIONS:
        ours = fmtcheck.convert(nans.view(np.float32), fmt, overflow=overflow, nan=c).codes.view(np_int)
        if np.array_equal(ours, theirs):
            matches.append(c)
    outputs = sorted({int(v) for v in np.unique(theirs)})
    differing = np.concatenate(differing) if differing else np.empty(0, np.uint32)
    where = ""
    if count:  # which overflow mode gives the GPU's codes on the differing inputs (a sample of each chunk's)
        theirs = gpu_cast(differing, dtype)
        modes = [m for m in ("sat", "nosat", "satprop")
                 if np.array_equal(fmtcheck.convert(differing.view(np.float32), fmt, overflow=m,
                                                    nan="torch").codes.view(np_int), theirs)]
        where = (f"{infinite} of them infinite, the smallest |x| {smallest:g}; "
                 f"overflow={' or '.join(modes) or 'no mode of fmtcheck'} gives them")
    return count, where, differing, matches, outputs


def main(out: Path):
    if not torch.cuda.is_available():
        print("fmtcheck: no GPU found: torch.cuda.is_available() is False")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2026)
    lines = [f"torch {torch.__version__} on {torch.cuda.get_device_name()}: x.to(dtype) of every float32 input "
             f"vs fmtcheck.convert (rne)"]
    cases, failed = {}, False
    for name, (dtype, fmt, overflow) in CASTS.items():
        start = time.perf_counter()
        try:
            count, where, differing, matches, outputs = sweep(name)
        except RuntimeError as e:  # a dtype the CUDA build does not cast
            lines.append(f"{name}: not run on the GPU ({str(e).splitlines()[0][:60]})")
            continue
        hexw = 2 + 2 * torch.empty(0, dtype=dtype).element_size()
        nan_codes = " ".join(f"{v:#0{hexw}x}" for v in outputs[:4]) + (" ..." if len(outputs) > 4 else "")
        conventions = ("every NaN convention" if len(matches) == len(CONVENTIONS)
                       else "nan=" + (", ".join(matches) or "no convention of fmtcheck"))
        new_lines = [f"{name}, overflow={overflow}: {count} of {ALL - 2 * ((1 << 23) - 1)} non-NaN inputs differ "
                     f"({time.perf_counter() - start:.0f} s)"] + ([f"  {where}"] if where else []) + \
                    [f"  NaN inputs give {nan_codes} ({conventions})"]
        lines += new_lines
        failed |= count > 0 or not matches
        inputs = np.unique(np.concatenate([sample_inputs(fmt, rng), differing]))
        cases[f"{name}_inputs"] = inputs
        cases[f"{name}_codes"] = gpu_cast(inputs, dtype)
        cases[f"{name}_nan"] = np.array(matches[0] if matches else "")
        print("\n".join(new_lines), flush=True)
    np.savez_compressed(out / "casts-cases.npz", torch=np.array(torch.__version__),
                        device=np.array(torch.cuda.get_device_name()), **cases)
    lines.append("FAIL: torch's CUDA casts differ from fmtcheck under the policies above" if failed else
                 "PASS: every CUDA cast is fmtcheck's, bit for bit, on all 2^32 inputs")
    (out / "casts.txt").write_text("\n".join(lines) + "\n")
    print(lines[-1])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("torch-on-gpu")))
