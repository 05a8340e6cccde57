"""Convolutions for fmtcheck.torch.emulate as im2col GEMMs through the recipe's layer GEMM
(RecipeLinear), so a conv layer's casts are named and scaled as a Linear's: the input unfolded to
one row per output position (C_in/groups x kernel values), the weight to C_out x (C_in/groups x
kernel). The unfolding is torch's (pad, unfold, slicing), so autograd carries the GEMM's gradients
back to the input's layout; the GEMM and its backward are the library's.

A transposed convolution is the convolution of the input spread out by the stride (zeros between
its values) with the flipped, transposed weight: one GEMM per output value, rather than scattered
partial GEMM results summed outside the GEMM (col2im)."""

from __future__ import annotations

import math

import torch

from .errors import Error
from .recipe_gemm import RecipeLinear

F = torch.nn.functional


def _tuple(v, nd: int, what: str, op: str):
    t = tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
    if len(t) != nd or not all(isinstance(i, int) and i >= 0 for i in t):
        raise Error(f"{op}: {what}={v!r}, expected {nd} non-negative integers")
    return t


def _padding(padding, kernel, dilation, stride, op):
    """(low, high) zeros per spatial dimension; "same" pads as torch does (the odd one high)."""
    nd = len(kernel)
    if padding == "valid":
        return [(0, 0)] * nd
    if padding == "same":
        if any(s != 1 for s in stride):
            raise Error(f"{op}: padding='same' needs stride 1, as in torch")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return [(t // 2, t - t // 2) for t in total]
    return [(p, p) for p in _tuple(padding, nd, "padding", op)]


def _rows(x, kernel, stride, pads, dilation):
    """x (N, C, *S) -> (N * prod(L), C * prod(kernel)), one row per output position, and L."""
    nd = len(kernel)
    x = F.pad(x, [p for lo_hi in reversed(pads) for p in lo_hi])
    for i in range(nd):
        x = x.unfold(2 + i, dilation[i] * (kernel[i] - 1) + 1, stride[i])  # window appended last
    x = x[(slice(None),) * (2 + nd) + tuple(slice(None, None, d) for d in dilation)]
    out = x.shape[2:2 + nd]
    x = x.permute(0, *range(2, 2 + nd), 1, *range(2 + nd, 2 + 2 * nd))  # N, L..., C, kernel...
    return x.reshape(-1, x.shape[1 + nd] * math.prod(kernel)), out


def conv(em, nd, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, op=None):
    x, op = input, op or f"conv{nd}d"  # torch's parameter names, calls may use them
    em._check(op, x, weight, bias)
    if x.dim() not in (nd + 1, nd + 2) or weight.dim() != nd + 2:
        raise Error(f"{op} of input {tuple(x.shape)} and weight {tuple(weight.shape)}: expected "
                    f"(N, C, {nd} sizes) and (C_out, C_in/groups, {nd} sizes)")
    if x.dim() == nd + 1:  # unbatched
        return conv(em, nd, x.unsqueeze(0), weight, bias, stride, padding, dilation, groups, op).squeeze(0)
    kernel = tuple(weight.shape[2:])
    stride = _tuple(stride, nd, "stride", op)
    dilation = _tuple(dilation, nd, "dilation", op)
    pads = _padding(padding, kernel, dilation, stride, op)
    c_out, c_group = weight.shape[:2]
    if groups < 1 or x.shape[1] != c_group * groups or c_out % groups:
        raise Error(f"{op} of input {tuple(x.shape)} and weight {tuple(weight.shape)} in {groups} groups: "
                    f"the channels do not divide")
    name = em._name("conv_transpose" if "transpose" in op else "conv")
    per = c_out // groups
    outs = []
    for g in range(groups):
        # Each group is a GEMM of its own: under FP8 its input and weight get scales of their own.
        rows, size = _rows(x[:, g * c_group:(g + 1) * c_group], kernel, stride, pads, dilation)
        w = weight[g * per:(g + 1) * per].reshape(per, -1)
        b = None if bias is None else bias[g * per:(g + 1) * per]
        outs.append(RecipeLinear.apply(rows, w, b, em.casts, name if groups == 1 else f"{name}.group{g}"))
    y = outs[0] if groups == 1 else torch.cat(outs, dim=1)
    return y.reshape(x.shape[0], *size, c_out).movedim(-1, 1)


def conv_transpose(em, nd, input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                   dilation=1):
    x, op = input, f"conv_transpose{nd}d"
    em._check(op, x, weight, bias)
    if x.dim() not in (nd + 1, nd + 2) or weight.dim() != nd + 2 or groups < 1 or weight.shape[0] % groups:
        raise Error(f"{op} of input {tuple(x.shape)} and weight {tuple(weight.shape)} in {groups} groups: "
                    f"expected (N, C_in, {nd} sizes) and (C_in, C_out/groups, {nd} sizes)")
    if x.dim() == nd + 1:
        return conv_transpose(em, nd, x.unsqueeze(0), weight, bias, stride, padding, output_padding, groups,
                              dilation).squeeze(0)
    kernel = tuple(weight.shape[2:])
    stride, dilation = _tuple(stride, nd, "stride", op), _tuple(dilation, nd, "dilation", op)
    padding, extra = _tuple(padding, nd, "padding", op), _tuple(output_padding, nd, "output_padding", op)
    spread = x.new_zeros(*x.shape[:2], *[(n - 1) * s + 1 for n, s in zip(x.shape[2:], stride)])
    spread[(slice(None),) * 2 + tuple(slice(None, None, s) for s in stride)] = x
    # Negative padding crops: where `padding` exceeds the kernel's reach.
    reach = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding)]
    spread = F.pad(spread, [v for r, e in reversed(list(zip(reach, extra))) for v in (r, r + e)])
    c_in, per = weight.shape[:2]
    w = weight.reshape(groups, c_in // groups, per, *kernel).transpose(1, 2).reshape(groups * per, c_in // groups,
                                                                                    *kernel)
    w = w.flip(list(range(2, 2 + nd)))
    return conv(em, nd, spread, w, bias, 1, 0, dilation, groups, op)
