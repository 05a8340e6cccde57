"""torch._scaled_mm for fmtcheck.torch.emulate: FP8 operands already cast (by torchao, Transformer
Engine or the user), multiplied on the preset's tensor core by fmtcheck.gemm with their per-tensor
scales, as cuBLASLt computes it on an H100 (docs/hardware.md): use_fast_accum=True sums the whole K
on the tensor core, False promotes the partial sum into float32 every 128 products; the scales
are applied once, in the epilogue; a bfloat16 or float16 result is rounded by the library's cast
(torch's NaN). Forward only, as torch's own: _scaled_mm has no autograd formula."""

from __future__ import annotations

import numpy as np
import torch

import fmtcheck

from .unsupported import Unsupported

OP = "_scaled_mm"
PROMOTE_EVERY = 128  # cuBLASLt without FAST_ACCUM on sm_90, measured by `fmtcheck hw gemm`
_FP8 = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "float8_e4m3fnuz": "e4m3fnuz",
        "float8_e5m2fnuz": "e5m2fnuz"}
FP8 = {getattr(torch, n): f for n, f in _FP8.items() if hasattr(torch, n)}
OUT = {torch.bfloat16: ("bf16", np.uint16), torch.float16: ("fp16", np.uint16)}


def _codes(t):
    return t.contiguous().view(torch.uint8).numpy()


def scaled_mm(em, a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False):
    out_dtype = a.dtype if out_dtype is None else out_dtype
    if a.dtype not in FP8 or b.dtype not in FP8 or a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise Unsupported(f"{OP} of {a.dtype} {tuple(a.shape)} and {b.dtype} {tuple(b.shape)}: emulate takes "
                          f"FP8 matrices M x K and K x N")
    if scale_a.numel() != 1 or scale_b.numel() != 1 or scale_a.dtype != torch.float32 or \
            scale_b.dtype != torch.float32:
        raise Unsupported(f"{OP} with scales of {tuple(scale_a.shape)} and {tuple(scale_b.shape)}: emulate takes "
                          f"one float32 scale per tensor")
    if bias is not None or scale_result is not None:
        raise Unsupported(f"{OP} with bias= or scale_result=: that epilogue is not modelled")
    if out_dtype != torch.float32 and out_dtype not in OUT:
        raise Unsupported(f"{OP} into {out_dtype}: emulate returns float32, bfloat16 or float16")
    if a.device.type != "cpu":
        raise Unsupported(f"{OP} on a {a.device.type} tensor")
    d = fmtcheck.gemm(_codes(a), _codes(b), model=em.casts.model, input=FP8[a.dtype], input_b=FP8[b.dtype],
                      scale_a=float(scale_a), scale_b=float(scale_b),
                      promote_every=0 if use_fast_accum else PROMOTE_EVERY, device=em.device)
    if out_dtype == torch.float32:
        return torch.from_numpy(d)
    fmt, codes = OUT[out_dtype]
    rounded = fmtcheck.convert(d, fmt, nan="torch").codes
    return torch.from_numpy(rounded.view(codes).view(np.int16)).view(out_dtype)
