"""`fmtcheck train`'s float32 softmax, layer norm and cross-entropy as torch functions: every sum in
order, exp and log correctly rounded (fmtcheck/train/normalize.hpp, layers.hpp). torch's own kernels
reduce in an order no one publishes and use their own exp and log, so their bits differ from one
build or machine to the next; these give the same bits everywhere, and hold a torch model to
`fmtcheck train` bit for bit. Called directly, or in place of torch's under
`emulate(..., exact_ops=True)`. float32 CPU tensors; forward and backward in the library."""

from __future__ import annotations

import math

import numpy as np
import torch

from fmtcheck import _core

from .errors import Error
from .recipe_gemm import _np


def _check(what: str, t: torch.Tensor) -> None:
    if t.dtype != torch.float32 or t.device.type != "cpu":
        raise Error(f"{what} takes float32 CPU tensors, not {t.dtype} on {t.device.type}")


class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # softmax over the last dimension
        p = torch.from_numpy(_core.softmax_rows(_np(x), x.shape[-1])).reshape(x.shape)
        ctx.save_for_backward(p)
        return p

    @staticmethod
    def backward(ctx, dp):
        (p,) = ctx.saved_tensors
        return torch.from_numpy(_core.softmax_rows_backward(_np(p), _np(dp), p.shape[-1])).reshape(p.shape)


def softmax(input: torch.Tensor, dim: int = -1, dtype=None) -> torch.Tensor:
    """Softmax over `dim` (max subtracted, exp correctly rounded, the row summed in order, each value
    divided by the sum); -inf entries (masked positions) give 0. Backward: p·(dp - sum(dp·p)).
    Parameters named as torch names them (here and below): calls may use the names."""
    x = input
    _check("softmax", x)
    if dtype not in (None, torch.float32):
        raise Error(f"softmax with dtype={dtype}: the exact softmax computes in float32")
    if x.dim() == 0 or x.numel() == 0:
        raise Error(f"softmax of shape {tuple(x.shape)}: nothing to normalize")
    last = x.movedim(dim, -1)
    return _Softmax.apply(last).movedim(-1, dim)


class _LayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, width, eps):
        g = _np(weight) if weight is not None else np.ones(width, np.float32)
        b = _np(bias) if bias is not None else np.zeros(width, np.float32)
        y, xhat, rstd = _core.layer_norm(_np(x).reshape(-1), g.reshape(-1), b.reshape(-1), eps)
        ctx.g, ctx.xhat, ctx.rstd, ctx.shapes = g.reshape(-1), xhat, rstd, (x.shape, None if weight is None else
                                                                           weight.shape)
        return torch.from_numpy(y).reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        dx, dgamma, dbeta = _core.layer_norm_backward(_np(dy).reshape(-1), ctx.g, ctx.xhat, ctx.rstd)
        x_shape, w_shape = ctx.shapes
        want = ctx.needs_input_grad
        return (torch.from_numpy(dx).reshape(x_shape),
                torch.from_numpy(dgamma).reshape(w_shape) if want[1] else None,
                torch.from_numpy(dbeta).reshape(w_shape) if want[2] else None, None, None)


def layer_norm(input: torch.Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> torch.Tensor:
    """torch.nn.functional.layer_norm over the last len(normalized_shape) dimensions, in fmtcheck
    train's order: mean, biased variance of (x - mean), rstd = 1/sqrt(var + eps) in float32, each sum
    in order; gamma's and beta's gradients summed over rows in order."""
    x = input
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    _check("layer_norm", x)
    if tuple(x.shape[x.dim() - len(shape):]) != shape or not shape:
        raise Error(f"layer_norm over {shape} of a tensor of shape {tuple(x.shape)}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None:
            _check(f"layer_norm's {name}", p)
            if tuple(p.shape) != shape:
                raise Error(f"layer_norm's {name} has shape {tuple(p.shape)}, not {shape}")
    return _LayerNorm.apply(x, weight, bias, math.prod(shape), float(eps))


class _ExactCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, labels):
        ctx.l = _np(logits)
        ctx.y = np.ascontiguousarray(labels.detach().numpy().astype(np.int32))
        loss, _ = _core.softmax_cross_entropy(ctx.l, ctx.y, ctx.l.shape[1], 1.0)
        return torch.tensor(loss, dtype=torch.float32)

    @staticmethod
    def backward(ctx, grad):
        # The gradient of loss x g for the incoming g (GradScaler's scale), as train computes it:
        # g / rows times the probabilities, minus that at the label.
        _, d = _core.softmax_cross_entropy(ctx.l, ctx.y, ctx.l.shape[1], float(grad))
        return torch.from_numpy(d), None


def cross_entropy(input: torch.Tensor, target: torch.Tensor, weight=None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> torch.Tensor:
    """Mean cross-entropy of rows x classes float32 CPU logits against integer labels, as train
    computes it (log-sum-exp per row with correctly rounded exp and log, rows summed in order).
    Rows labelled `ignore_index` are left out, as torch leaves them; class weights, label smoothing
    and other reductions are refused."""
    logits, labels = input, target
    if weight is not None or size_average is not None or reduce is not None or reduction != "mean" \
            or label_smoothing != 0.0:
        raise Error("the exact cross_entropy takes reduction='mean' only: no class weights, label "
                    "smoothing or legacy size_average/reduce")
    if logits.dim() != 2 or logits.dtype != torch.float32 or logits.device.type != "cpu":
        raise Error(f"cross_entropy takes rows x classes float32 CPU logits, not {logits.dtype} "
                    f"{tuple(logits.shape)} on {logits.device.type}")
    if labels.shape != logits.shape[:1] or labels.is_floating_point():
        raise Error(f"cross_entropy takes one integer label per row, not {labels.dtype} {tuple(labels.shape)}")
    kept = labels != ignore_index
    if not bool(kept.all()):
        logits, labels = logits[kept], labels[kept]
    try:
        return _ExactCrossEntropy.apply(logits, labels)
    except ValueError as e:
        raise Error(str(e)) from None
