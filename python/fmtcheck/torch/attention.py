"""F.scaled_dot_product_attention for fmtcheck.torch.emulate: ATen's math path
(_scaled_dot_product_attention_math) step for step, its two products emulated as batched
activation matmuls named path.sdpa.scores and path.sdpa.output; the scaling, mask, softmax
(torch's _safe_softmax: a row with every score masked gives zeros) and dropout are torch's own.
Not what a GPU's fused attention kernel computes (flash attention keeps the scores in registers
and rescales as it goes); what the math path computes with the preset's GEMMs."""

from __future__ import annotations

import math

import torch

from .errors import Error
from .unsupported import Unsupported

OP = "scaled_dot_product_attention"


def sdpa(em, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    em._check(OP, query, key, value)
    if attn_mask is not None and attn_mask.dtype not in (torch.bool, torch.float32):
        raise Unsupported(f"{OP} with a {attn_mask.dtype} mask: emulate takes bool or float32 masks")
    # sdp::calculate_scale in double, its square root applied to q and to k (ATen scales both
    # before the product, for range); a negative scale's sign goes with q.
    negative = scale is not None and scale < 0
    root = math.sqrt(abs(scale) if scale is not None else 1.0 / math.sqrt(query.shape[-1]))
    q = query * (-root if negative else root)
    mask = attn_mask
    if is_causal:
        if attn_mask is not None:
            raise Error(f"{OP}: attn_mask and is_causal together (torch refuses them too)")
        mask = torch.ones(query.shape[-2], key.shape[-2], dtype=torch.bool, device=query.device).tril()
    if mask is not None and mask.dtype == torch.bool:
        mask = torch.where(mask.logical_not(), -math.inf, torch.zeros((), dtype=q.dtype, device=q.device))
    if enable_gqa and key.dim() >= 3 and query.shape[-3] != key.shape[-3]:
        if query.shape[-3] % key.shape[-3]:
            raise Error(f"{OP}: {query.shape[-3]} query heads do not share {key.shape[-3]} key heads evenly")
        groups = query.shape[-3] // key.shape[-3]
        key, value = key.repeat_interleave(groups, -3), value.repeat_interleave(groups, -3)
    attn = em._product("sdpa.scores", q, key.transpose(-2, -1) * root, layer=False)
    if mask is not None:
        attn = attn + mask
    attn = torch._safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = torch.dropout(attn, dropout_p, True)
    return em._product("sdpa.output", attn, value, layer=False)
