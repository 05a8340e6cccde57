"""Captures the GEMMs and casts of real torch training steps on the GPU, with the cuBLAS settings they
ran under, for tests/torch/test_gpu_captures.py to replay through fmtcheck.torch.emulate in CI.

    PYTHONPATH=.hwcarry/python python3 cuda/torch/capture_steps.py OUTDIR

Recipes: autocast fp16 with a GradScaler, autocast bf16, float32 with TF32 matmuls
(torch.backends.cuda.matmul.allow_tf32), each a step of the digits MLP, the sort transformer and
a 2-layer GPT-2 (tests/torch/models.py); and FP8 through torch._scaled_mm: the MLP's forward with
per-tensor current scaling, e4m3 operands into bf16 and float32, fast accumulation on and off.
A TorchDispatchMode sees the aten calls below autograd, so the backward's GEMMs are captured too.
Writes OUTDIR/captures-RECIPE.pt (a list of calls: op, operands, scalars, the GPU's output, all on
the CPU) and OUTDIR/captures.json (the settings). Exit 2 without a GPU."""
import ctypes
import json
import sys
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "torch"))
from models import MODELS, train  # noqa: E402

aten = torch.ops.aten
GEMMS = {aten.mm.default: "mm", aten.addmm.default: "addmm", aten.bmm.default: "bmm",
         aten.baddbmm.default: "baddbmm", aten._scaled_mm.default: "_scaled_mm"}
CAST_VALUES = 4096  # of each captured cast: enough to replay, small enough to commit


class Capture(TorchDispatchMode):
    """Records every GEMM (operands, scalars, output) and every float32 -> fp16/bf16 cast."""

    def __init__(self, model_name):
        super().__init__()
        self.model_name, self.calls = model_name, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in GEMMS:
            self.calls.append({"model": self.model_name, "op": GEMMS[func],
                               "args": [a.detach().cpu().clone() if isinstance(a, torch.Tensor) else a
                                        for a in args],
                               "kwargs": {k: v.detach().cpu().clone() if isinstance(v, torch.Tensor) else v
                                          for k, v in kwargs.items()},
                               "strides": [tuple(a.stride()) for a in args if isinstance(a, torch.Tensor)],
                               "out": out.detach().cpu().clone()})
        elif func is aten._to_copy.default and isinstance(args[0], torch.Tensor) and \
                args[0].dtype == torch.float32 and out.dtype in (torch.float16, torch.bfloat16):
            x = args[0].detach().reshape(-1)[:CAST_VALUES]
            self.calls.append({"model": self.model_name, "op": "cast", "args": [x.cpu().clone()],
                               "out": out.detach().reshape(-1)[:CAST_VALUES].cpu().clone()})
        return out


def steps(name, recipe, count=1):
    torch.manual_seed(0)
    # GPT-2 with 2 sequences of 32 tokens: its captures stay a few MB.
    model, batches, loss_fn = MODELS[name](**({"batch": 2} if name == "gpt2" else {}))
    # Without dropout (GPT-2's 0.1): the GPU draws its own masks, and a step without them can be held
    # to emulate's whole, the ops between the GEMMs included.
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    half = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(recipe)
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 12) if recipe == "fp16" else None
    capture = Capture(name)
    # The whole step: the optimizer's and the scaler's ops hold no GEMM and no cast to fp16/bf16.
    with capture:
        train(model, opt, batches, loss_fn, count, autocast=half, scaler=scaler, device="cuda")
    return capture.calls


def fp8_forward():
    """The MLP's two layers as FP8 GEMMs: x and W cast to e4m3 with per-tensor current scales (amax /
    448), torch._scaled_mm into bf16 and float32, fast accumulation on and off."""
    torch.manual_seed(0)
    model, batches, _ = MODELS["mlp"]()
    x, _ = next(batches)
    capture = Capture("mlp")
    layers = [(x.cuda(), model.fc1.weight.detach().cuda()),
              (torch.relu(model.fc1(x)).detach().cuda(), model.fc2.weight.detach().cuda())]
    # fc2 has 10 outputs; _scaled_mm wants multiples of 16: the weight padded with zero rows.
    for a, w in layers:
        if w.shape[0] % 16:
            w = torch.cat([w, w.new_zeros(16 - w.shape[0] % 16, w.shape[1])])
        sa = (a.abs().max() / 448).float().reshape(())
        sw = (w.abs().max() / 448).float().reshape(())
        qa = (a / sa).to(torch.float8_e4m3fn)
        qw = (w / sw).to(torch.float8_e4m3fn)
        for out_dtype in (torch.bfloat16, torch.float32):
            for fast in (False, True):
                with capture:
                    torch._scaled_mm(qa, qw.t(), scale_a=sa, scale_b=sw, out_dtype=out_dtype, use_fast_accum=fast)
    return capture.calls


def cublaslt_version():
    for name in ("libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"):
        try:
            return ctypes.CDLL(name).cublasLtGetVersion()
        except OSError:
            continue
    return None


def main(out: Path):
    if not torch.cuda.is_available():
        print("fmtcheck: no GPU found: torch.cuda.is_available() is False")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    m = torch.backends.cuda.matmul
    settings = {"torch": torch.__version__, "cuda": torch.version.cuda, "cublasLt": cublaslt_version(),
                "device": torch.cuda.get_device_name(), "capability": list(torch.cuda.get_device_capability()),
                "allow_fp16_reduced_precision_reduction": m.allow_fp16_reduced_precision_reduction,
                "allow_bf16_reduced_precision_reduction": m.allow_bf16_reduced_precision_reduction,
                "preferred_blas_library": str(torch.backends.cuda.preferred_blas_library()), "recipes": {}}
    for recipe in ("fp16", "bf16", "tf32"):
        m.allow_tf32 = recipe == "tf32"
        calls = [c for name in ("mlp", "transformer", "gpt2") for c in steps(name, recipe)]
        settings["recipes"][recipe] = {"allow_tf32": m.allow_tf32, "calls": len(calls)}
        torch.save(calls, out / f"captures-{recipe}.pt")
        print(f"{recipe}: {sum(c['op'] != 'cast' for c in calls)} GEMMs, "
              f"{sum(c['op'] == 'cast' for c in calls)} casts captured", flush=True)
    m.allow_tf32 = False
    calls = fp8_forward()
    settings["recipes"]["fp8"] = {"allow_tf32": False, "calls": len(calls)}
    torch.save(calls, out / "captures-fp8.pt")
    print(f"fp8: {len(calls)} _scaled_mm calls captured")
    (out / "captures.json").write_text(json.dumps(settings, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("torch-on-gpu")))
