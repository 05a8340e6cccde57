"""fmtcheck's emulator on the GPU, reached from Python: the same bits as the CPU, and how much faster.

    PYTHONPATH=.hwcarry/python python3 cuda/torch/emulator_from_python.py OUTDIR

1. fmtcheck.convert of float32 torch (and CuPy, where installed) arrays on the GPU, and of a
   DLPack producer of no known framework (as a JAX array reaches fmtcheck), into 7 formats under
   6 policies (stochastic rounding with a seed among them): codes and flag counts equal to the
   CPU's conversion of the same values, in the input's framework.
   fmtcheck.decode of those codes on the GPU (unsigned torch tensors, torch's own float8/bf16/fp16
   tensors, the framework-less producer): the CPU's values, bit for bit.
2. fmtcheck.gemm of GPU arrays (float8, bfloat16, float16, float32 as tf32; torch and the
   framework-less producer), on 8 presets: D equal to the CPU's gemm of the same operands, bit for
   bit; and device="cuda" for host arrays.
3. fmtcheck.analyze of a float32 tensor on the GPU under 4 settings: every measure equal to the
   CPU's (the mean and RMS relative errors, sums in another order, to 1e-10).
4. fmtcheck.torch.emulate(device="cuda") against emulate on the CPU: one training step of the
   MLP, the sort transformer and a 2-layer GPT-2 under two recipes, every loss and gradient equal
   bit for bit; the time of each (the GEMMs on the GPU, the casts on the CPU).
Writes OUTDIR/emulator_from_python.txt. Exit 0 when everything is equal, 1 otherwise, 2 without a GPU.
"""
import sys
import time
from pathlib import Path

import numpy as np
import torch

import fmtcheck
import fmtcheck.torch
from fmtcheck import _core

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "torch"))
from models import MODELS  # noqa: E402

FORMATS = ["e4m3", "e5m2", "bf16", "fp16", "e2m1", "binary8p3se", "tf32"]
POLICIES = [dict(), dict(round="rtz", overflow="sat"), dict(round="sr", sr_bits=16), dict(round="rne", nan="cuda"),
            dict(subnormals="ftz"), dict(round="rna", overflow="satprop")]
GEMMS = [("hopper", "e4m3"), ("hopper-wgmma", "e4m3"), ("hopper-wgmma", "bf16"), ("ampere", "fp16"),
         ("ampere", "tf32"), ("mi300x", "bf16"), ("mi250", "fp16"), ("blackwell", "e5m2")]
TORCH_DTYPES = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "bf16": torch.bfloat16, "fp16": torch.float16}
lines = []


def say(text=""):
    print(text, flush=True)
    lines.append(text)


class Foreign:
    """A torch CUDA tensor seen only through DLPack, shape and dtype: an array of a framework
    fmtcheck knows nothing of, as a JAX array is. Results come back as fmtcheck's own DLPack arrays."""

    def __init__(self, t):
        self.t, self.shape, self.dtype = t, tuple(t.shape), str(t.dtype)

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def host(array):
    """A GPU result (torch, CuPy or fmtcheck's own DLPack array) as a numpy array."""
    if isinstance(array, torch.Tensor):
        return array.cpu().numpy()
    if type(array).__module__.startswith("cupy"):
        return array.get()
    return torch.from_dlpack(array).cpu().numpy()


def values(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g) * torch.exp2(torch.randint(-30, 30, (n,), generator=g).float())
    x[:8] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-45, 65504.0, 448.0])
    return x


def check_convert():
    bad = 0
    x = values(1 << 20, 1)
    arrays = [("torch", x.cuda()), ("DLPack", Foreign(x.cuda()))]
    try:
        import cupy
        arrays.append(("cupy", cupy.asarray(x.numpy())))
    except ImportError:
        say("convert: CuPy is not installed here; torch and framework-less DLPack arrays only")
    for fmt in FORMATS:
        for policy in POLICIES:
            cpu = fmtcheck.convert(x.numpy(), fmt, seed=3, **policy)
            want = np.asarray(cpu.codes).view(np.dtype(f"uint{_core.storage_bits(fmt)}"))
            for name, array in arrays:
                gpu = fmtcheck.convert(array, fmt, seed=3, **policy)
                got = host(gpu.codes)
                same = np.array_equal(got.view(want.dtype), want) and gpu.flags == cpu.flags
                bad += not same
                if not same:
                    say(f"convert {fmt} {policy} ({name}): DIFFERENT")
    say(f"convert: {len(FORMATS) * len(POLICIES) * len(arrays)} conversions of 2^20 values on the GPU, "
        f"{bad} differ from the CPU")
    return bad


def check_decode():
    bad = checked = 0
    x = values(1 << 20, 5)
    for fmt in FORMATS:
        cpu_codes = np.asarray(fmtcheck.convert(x.numpy(), fmt).codes).view(f"uint{_core.storage_bits(fmt)}")
        want = fmtcheck.decode(cpu_codes, fmt)
        # Moved as bytes and viewed on the GPU: torch's uint16/uint32 have few kernels.
        as_bytes = torch.from_numpy(cpu_codes.view(np.uint8)).cuda()
        on_gpu = [("codes", as_bytes.view(getattr(torch, f"uint{_core.storage_bits(fmt)}")), fmt)]
        if fmt in TORCH_DTYPES:  # torch's own dtype: the format comes from the tensor
            on_gpu.append((str(TORCH_DTYPES[fmt]), on_gpu[0][1].view(TORCH_DTYPES[fmt]), None))
        on_gpu.append(("DLPack", Foreign(on_gpu[0][1]), fmt))
        for name, codes_on_gpu, given in on_gpu:
            got = host(fmtcheck.decode(codes_on_gpu, given))
            same = got.dtype == want.dtype and np.array_equal(got.view(f"uint{8 * want.itemsize}"),
                                                              want.view(f"uint{8 * want.itemsize}"))
            bad += not same
            checked += 1
            if not same:
                say(f"decode {fmt} ({name}): DIFFERENT")
    say(f"decode: {checked} decodings of 2^20 codes on the GPU, {bad} differ from the CPU")
    return bad


def codes(t):
    """A CPU tensor's containers as unsigned integers (numpy)."""
    size = t.element_size()
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[size]).numpy().view(f"uint{8 * size}")


def check_gemm():
    bad = 0
    g = torch.Generator().manual_seed(2)
    m, n, k = 96, 80, 256
    for model, fmt in GEMMS:
        a32 = torch.randn(m, k, generator=g)
        b32 = torch.randn(k, n, generator=g)
        if fmt in TORCH_DTYPES:
            a, b = a32.to(TORCH_DTYPES[fmt]), b32.to(TORCH_DTYPES[fmt])
        else:  # tf32: float32 containers
            a, b = a32, b32
        host_a, host_b = codes(a), codes(b)
        want = fmtcheck.gemm(host_a, host_b, model=model, input=fmt, promote_every=128)
        got = fmtcheck.gemm(a.cuda(), b.cuda(), model=model, input=None if fmt in TORCH_DTYPES else fmt,
                            promote_every=128).cpu().numpy()
        foreign = host(fmtcheck.gemm(Foreign(a32.cuda()), Foreign(b32.cuda()), model=model, input=fmt,
                                     promote_every=128))
        def rounded(t):  # Foreign's float32 values as the GPU reads them: converted, or tf32's containers
            return codes(t) if fmt == "tf32" else fmtcheck.convert(t.numpy(), fmt).codes

        want32 = fmtcheck.gemm(rounded(a32), rounded(b32), model=model, input=fmt, promote_every=128)
        on_gpu = fmtcheck.gemm(host_a, host_b, model=model, input=fmt, promote_every=128, device="cuda")
        same = np.array_equal(got.view(np.uint32), want.view(np.uint32)) and \
            np.array_equal(on_gpu.view(np.uint32), want.view(np.uint32)) and \
            np.array_equal(foreign.view(np.uint32), want32.view(np.uint32))
        bad += not same
        say(f"gemm {model:<13} {fmt:<5} {m}x{n}x{k}: {'equal' if same else 'DIFFERENT'}")
    return bad


def one_step(name, recipe, device):
    torch.manual_seed(0)
    model, batches, loss_fn = MODELS[name]()
    x, y = next(batches)
    with fmtcheck.torch.emulate(recipe, "hopper", model=model, device=device):
        start = time.perf_counter()
        loss = loss_fn(model(x), y)
        loss.backward()
        seconds = time.perf_counter() - start
    grads = [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]
    return loss.detach(), grads, seconds


def check_analyze():
    """fmtcheck.analyze of a float32 tensor on the GPU against the same values on the CPU: every
    measure equal but the mean and RMS relative errors (sums in another order: to 1e-10)."""
    bad = 0
    x = values(1 << 22, 4)
    for options in (dict(), dict(scale="auto"), dict(scale="amax:1", round="sr", sr_bits=12, seed=9),
                    dict(block=32, scale_rule="ceil")):
        gpu = fmtcheck.analyze({"x": x.cuda()}, "fp16,bf16,e4m3,e5m2,e2m1", **options)
        cpu = fmtcheck.analyze({"x": x.numpy()}, "fp16,bf16,e4m3,e5m2,e2m1", **options)
        for g, c in zip(gpu.results, cpu.results):
            for name, want in c["measures"].items():
                got = g["measures"][name]
                same = got == want or (name in ("mean_rel_error", "rms_rel_error") and abs(got - want) <= 1e-10 * want)
                if not same:
                    bad += 1
                    say(f"analyze {options} {c['format']} {name}: GPU {got!r}, CPU {want!r}")
        bad += gpu.histograms != cpu.histograms
    say(f"analyze: 4 settings x 5 formats of 2^22 values on the GPU, {bad} measures differ from the CPU")
    return bad


def check_emulate():
    bad = 0
    say(f"\n{'emulate one step':<30} {'CPU s':>8} {'GPU s':>8} {'x faster':>9}  verdict")
    for name in ("mlp", "transformer", "gpt2"):
        for recipe in ("fp16", "fp8-delayed"):
            loss_c, grads_c, cpu_s = one_step(name, recipe, "cpu")
            loss_g, grads_g, gpu_s = one_step(name, recipe, "cuda")
            same = torch.equal(loss_c.view(torch.int32), loss_g.view(torch.int32)) and all(
                torch.equal(a.view(torch.int32), b.view(torch.int32)) for a, b in zip(grads_c, grads_g))
            bad += not same
            say(f"{name + ' ' + recipe:<30} {cpu_s:8.2f} {gpu_s:8.2f} {cpu_s / gpu_s:9.1f}  "
                f"{'equal' if same else 'DIFFERENT'}")
    return bad


def main(out: Path):
    if not torch.cuda.is_available():
        print("fmtcheck: no GPU found: torch.cuda.is_available() is False")
        return 2
    if _core.gpu_unavailable():
        print(f"fmtcheck: {_core.gpu_unavailable()}")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    say(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    bad = check_convert() + check_decode() + check_gemm() + check_analyze() + check_emulate()
    say("PASS: the GPU's emulator is the CPU's, bit for bit" if bad == 0 else
        f"FAIL: {bad} comparisons differ between the GPU's emulator and the CPU's")
    (out / "emulator_from_python.txt").write_text("\n".join(lines) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
