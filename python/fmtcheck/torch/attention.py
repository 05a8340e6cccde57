"""F.scaled_dot_product_attention for fmtcheck.torch.emulate, as the kernel torch would run on the GPU.

Under a recipe with an activation format (fp16, bf16; FP8 and MX recipes attend in bf16) torch's
CUDA SDPA runs a fused kernel, FlashAttention-2 or the CUTLASS memory-efficient one (FusedAttention):
the scores stay float32, the softmax's numerator exp(s - rowmax) is rounded to the activation format
for the product with V, and the row sum divides afterwards. On the H200 this is every output and
every gradient of the captured attention of tests/torch/test_gpu_captures.py. Without an activation
format (fp32, tf32), or with torch's math backend chosen (torch.nn.attention.sdpa_kernel), ATen's
math path step for step (math_path), its two products emulated as batched activation matmuls named
path.sdpa.scores and path.sdpa.output; the scaling, mask, softmax (torch's _safe_softmax: a row
with every score masked gives zeros) and dropout are torch's own."""

from __future__ import annotations

import math

import numpy as np
import torch

import fmtcheck

from .errors import Error
from .recipe_gemm import _np, rounded
from .unsupported import Unsupported

OP = "scaled_dot_product_attention"
# The fused kernels are built on mma.sync (FlashAttention-2, CUTLASS's sm80 kernels), not on the
# wgmma or tcgen05 instructions of the recipe's own GEMMs: each preset's mma.sync model.
MMA_SYNC = {"hopper-wgmma": "hopper", "blackwell-tcgen05": "blackwell"}


def sdpa(em, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    em._check(OP, query, key, value)
    if attn_mask is not None and attn_mask.dtype not in (torch.bool, torch.float32):
        raise Unsupported(f"{OP} with a {attn_mask.dtype} mask: emulate takes bool or float32 masks")
    mask = attn_mask
    if is_causal:
        if attn_mask is not None:
            raise Error(f"{OP}: attn_mask and is_causal together (torch refuses them too)")
        mask = torch.ones(query.shape[-2], key.shape[-2], dtype=torch.bool, device=query.device).tril()
    if mask is not None and mask.dtype == torch.bool:
        mask = torch.where(mask.logical_not(), -math.inf, torch.zeros((), dtype=query.dtype, device=query.device))
    if enable_gqa and key.dim() >= 3 and query.shape[-3] != key.shape[-3]:
        if query.shape[-3] % key.shape[-3]:
            raise Error(f"{OP}: {query.shape[-3]} query heads do not share {key.shape[-3]} key heads evenly")
        groups = query.shape[-3] // key.shape[-3]
        key, value = key.repeat_interleave(groups, -3), value.repeat_interleave(groups, -3)
    if em.casts.activation is None or not _fused_backend_enabled():
        return math_path(em, query, key, value, mask, dropout_p, scale)
    scale = scale if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    q, k, v = (t.expand(*batch, *t.shape[-2:]) for t in (query, key, value))
    if mask is not None:
        mask = mask.expand(*batch, query.shape[-2], key.shape[-2])
    return FusedAttention.apply(q, k, v, mask, float(scale), float(dropout_p), em.casts, em._name("sdpa"))


def _fused_backend_enabled() -> bool:
    """Whether torch may pick a fused kernel: sdpa_kernel(SDPBackend.MATH) turns them all off."""
    b = torch.backends.cuda
    return any(getattr(b, f, lambda: False)() for f in ("flash_sdp_enabled", "mem_efficient_sdp_enabled",
                                                        "cudnn_sdp_enabled"))


def math_path(em, query, key, value, mask, dropout_p, scale):
    """ATen's _scaled_dot_product_attention_math: q and k each times the scale's square root (ATen
    scales both before the product, for range; a negative scale's sign goes with q), the product, the
    mask added, _safe_softmax, dropout, the product with V."""
    negative = scale is not None and scale < 0
    root = math.sqrt(abs(scale) if scale is not None else 1.0 / math.sqrt(query.shape[-1]))
    attn = em._product("sdpa.scores", query * (-root if negative else root), key.transpose(-2, -1) * root,
                       layer=False)
    if mask is not None:
        attn = attn + mask
    attn = torch._safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = torch.dropout(attn, dropout_p, True)
    return em._product("sdpa.output", attn, value, layer=False)


class FusedAttention(torch.autograd.Function):
    """A fused attention kernel's arithmetic, per batch and head (q: L x E, k: S x E, v: S x Ev):

    forward   s = (q·kᵀ)·scale + mask, m = the row's maximum, p = exp(s - m), l = the row's sum of p
              o = (p in the activation format)·v / l, rounded to the activation format
    backward  P = exp(s - (m + log l)), D = the row's sum of dO·o, dS = P·(dO·vᵀ - D) rounded to the
              format; dV = (P in the format)ᵀ·dO, dQ = dS·k·scale, dK = dSᵀ·q·scale, each rounded

    The kernel keeps s, p, l, P and D in float32 registers, computed with its own exp, log and sums;
    here they are computed in float64 and taken to float32 where the kernel stores them (p and P on
    their way to the format, l where it divides): its float32 results lie within an ulp or two of
    these, and where one rounds a probability to the format the other way, the outputs differ by a
    unit there. The products of values in the format (P·v, dS·k, dSᵀ·q, Pᵀ·dO) run on the preset's
    mma.sync model with float32 accumulation; s and dO·vᵀ are float64 sums of the exact products.
    q, k, v and the incoming gradient are taken in the activation format first (autocast gives the
    kernel fp16/bf16 tensors). A row with every score masked gives 0 and no gradient. The key
    blocks the kernels walk (their online softmax rescales as the row maximum grows) are not
    followed: within one block (the kernels take 64 keys or more at a time) that changes nothing.
    Dropout keeps p in the format where a mask torch draws says so (the GPU draws its own) and
    divides the products by 1 - dropout_p."""

    @staticmethod
    def forward(ctx, q, k, v, mask, scale, dropout_p, casts, name):
        fmt, preset = casts.activation, MMA_SYNC.get(casts.model, casts.model)
        q, k, v = (rounded(casts, f"{name}:{role}", t) for t, role in ((q, "query"), (k, "key"), (v, "value")))
        s = _scores(q, k, mask, scale)
        m = s.amax(-1, keepdim=True)
        m = torch.where(torch.isinf(m), 0.0, m)  # a row with every score masked: p = 0
        p = torch.exp(s - m)
        total = p.sum(-1, keepdim=True)
        p16 = rounded(casts, f"{name}:probs", p)
        keep = None
        if dropout_p > 0.0:  # the kept probabilities; 1 / (1 - dropout_p) scales the result
            keep = torch.empty_like(p).bernoulli_(1.0 - dropout_p)
            p16 = p16 * keep
        o = _products(p16, v, fmt, preset) / total.float().double() * _kept_scale(dropout_p)
        o = rounded(casts, f"{name}:output", torch.where(total > 0, o, 0.0))
        lse = torch.where(total > 0, m + torch.log(total), math.inf)
        ctx.save_for_backward(q, k, v, o, lse, s, keep)
        ctx.casts, ctx.name, ctx.scale, ctx.fmt, ctx.preset = casts, name, scale, fmt, preset
        ctx.dropout_p = dropout_p
        return o

    @staticmethod
    def backward(ctx, d_o):
        q, k, v, o, lse, s, keep = ctx.saved_tensors
        casts, name, scale, fmt, preset = ctx.casts, ctx.name, ctx.scale, ctx.fmt, ctx.preset
        d_o = rounded(casts, "", d_o)
        p = torch.exp(s - lse).float().double()
        d_p = _exact_products(d_o, v.transpose(-2, -1))
        p16 = rounded(casts, "", p)
        if keep is not None:
            d_p, p16 = d_p * keep * _kept_scale(ctx.dropout_p), p16 * keep
        ds = rounded(casts, f"{name}:grad_scores", p * (d_p - (d_o.double() * o.double()).sum(-1, keepdim=True)))
        dq = rounded(casts, f"{name}:grad_query", _products(ds, k, fmt, preset) * scale)
        dk = rounded(casts, f"{name}:grad_key", _products(ds.transpose(-2, -1), q, fmt, preset) * scale)
        dv = _products(p16.transpose(-2, -1), d_o, fmt, preset) * _kept_scale(ctx.dropout_p)
        return dq, dk, rounded(casts, f"{name}:grad_value", dv), None, None, None, None, None


def _kept_scale(dropout_p):
    """What dropout scales the kept values by (nothing is kept at dropout_p = 1)."""
    return 1.0 / (1.0 - dropout_p) if dropout_p < 1.0 else 0.0


def _scores(q, k, mask, scale):
    """(q·kᵀ)·scale + mask in float64."""
    s = _exact_products(q, k.transpose(-2, -1)) * scale
    return s if mask is None else s + mask.double()


def _exact_products(a, b):
    """a·b per batch in float64: products of values of the format are exact, and their sums all but
    exact (numpy's, not torch's: a backward runs with emulate watching torch's products)."""
    return torch.from_numpy(np.matmul(_np(a.double()), _np(b.double())))


def _products(a, b, fmt, preset):
    """a·b per batch (a ..., m, k; b ..., k, n, both holding values of fmt) on the preset's tensor
    core with float32 accumulation: its float32 results, held as float64 for the steps after."""
    batch = a.shape[:-2]
    a3, b3 = _codes(a.reshape(-1, *a.shape[-2:]), fmt), _codes(b.reshape(-1, *b.shape[-2:]), fmt)
    out = np.empty((a3.shape[0], a3.shape[1], b3.shape[2]), dtype=np.float32)
    for i in range(a3.shape[0]):
        out[i] = fmtcheck.gemm(a3[i], b3[i], model=preset, input=fmt)
    return torch.from_numpy(out).reshape(*batch, a.shape[-2], b.shape[-1]).double()


def _codes(t, fmt):
    """The codes of t's values (which the format holds: no rounding)."""
    return fmtcheck.convert(np.ascontiguousarray(_np(t.float())), fmt).codes
