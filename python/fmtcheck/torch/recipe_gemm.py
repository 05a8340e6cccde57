"""The GEMMs of fmtcheck.torch.emulate as autograd Functions: forward and backward computed by the
library's training emulator (fmtcheck/train/autocast.hpp, layers.hpp) under one recipe and GPU.

A Function, not an aten-level substitution, because the recipe needs what only the layer knows: which
operand is the incoming gradient (cast to the gradient format: e5m2 under FP8 HYBRID) and which casts
the backward reuses (the forward's cast of x and W, transposed, with the forward's scale). Below
autograd, a dispatch mode sees three anonymous mm calls per linear layer and could tell neither.
The composition below is `fmtcheck train`'s Linear (layers.cpp) step for step; every rounding happens
in the library (fmtcheck._core.RecipeCasts)."""

from __future__ import annotations

import numpy as np
import torch

from fmtcheck import _core


def _np(t: torch.Tensor) -> np.ndarray:
    return np.ascontiguousarray(t.detach().numpy())


def _t(a: np.ndarray, shape) -> torch.Tensor:
    """A tensor of its own, not a view (autograd forbids writing in place into a Function's view)."""
    return torch.from_numpy(np.asarray(a).reshape(shape))


def rounded(casts, name: str, t: torch.Tensor) -> torch.Tensor:
    """t rounded to the recipe's activation format through float32 (counted under name; "" counts
    nothing): how the loss and attention store what a GPU kernel keeps in float32 registers."""
    return _t(casts.to_activation(name, _np(t.float()).reshape(-1)), t.shape)


class RecipeLinear(torch.autograd.Function):
    """y = x.W^T + b as train's Linear: x and W cast to the forward format (scaled per tensor under FP8),
    the tensor-core GEMM of the preset, the bias rounded to the activation format and added in float32,
    the sum rounded to the activation format. Under fp32 the product is train's FMA chain.
    Backward: dy rounded to the activation format (the output lived there, so its gradient does, as
    under torch autocast), cast to the gradient format; dx = dy.W and dW = dy^T.x on the tensor core,
    db the in-order float32 column sum, each rounded to the activation format."""

    @staticmethod
    def forward(ctx, x, weight, bias, casts, name):
        k = x.shape[-1]
        n = weight.shape[0]
        x2, w = _np(x.reshape(-1, k)), _np(weight)
        m = x2.shape[0]
        if casts.float32:
            qx = qw = None
            y = _core.matmul_fma(x2, w, m, n, k)
        else:
            qx = casts.operand(f"{name}:input", "forward", x2)
            qw = casts.operand(f"{name}:weight", "forward", w)
            y = casts.gemm(qx, qw)
        if bias is not None:
            # The bias (n values) in the activation format, then one float32 add per element, as
            # cuBLASLt's bias epilogue.
            y = y + casts.to_activation("", _np(bias).reshape(-1)).reshape(bias.shape)
        y = casts.to_activation(f"{name}:output", np.ascontiguousarray(y, dtype=np.float32).reshape(-1))
        ctx.casts, ctx.name, ctx.qx, ctx.qw, ctx.x2, ctx.w = casts, name, qx, qw, x2, w
        ctx.x_shape = x.shape
        ctx.bias_shape = None if bias is None else bias.shape
        return _t(y, (*x.shape[:-1], n))

    @staticmethod
    def backward(ctx, dy):
        casts, name, x2, w = ctx.casts, ctx.name, ctx.x2, ctx.w
        m, k = x2.shape
        n = w.shape[0]
        dy2 = casts.to_activation(f"{name}:output.grad", _np(dy.reshape(-1)).astype(np.float32, copy=False))
        dy2 = dy2.reshape(m, n)
        want_dx, want_dw, want_db = ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2]
        dx = dw = db = None
        if casts.float32:
            if want_dx:
                dx = _core.matmul_fma(dy2, np.ascontiguousarray(w.T), m, k, n)
            if want_dw:
                dw = _core.matmul_fma(np.ascontiguousarray(dy2.T), np.ascontiguousarray(x2.T), n, k, m)
        else:
            qdy = casts.operand(f"{name}:grad_output", "gradient", dy2)
            if want_dx:
                w_t = casts.columnwise(f"{name}:weight", "forward", ctx.qw, w)
                dx = casts.to_activation(f"{name}:grad_input", casts.gemm(qdy, w_t).reshape(-1))
            if want_dw:
                dy_t = casts.columnwise(f"{name}:grad_output", "gradient", qdy, dy2)
                x_t = casts.columnwise(f"{name}:input", "forward", ctx.qx, x2)
                dw = casts.to_activation(f"{name}:grad_weight", casts.gemm(dy_t, x_t).reshape(-1))
        if want_db:
            db = casts.to_activation(f"{name}:grad_bias", _core.column_sums(dy2, m, n))
            db = _t(db, ctx.bias_shape)  # n values: (n,) or addmm's (1, n)
        return (None if dx is None else _t(dx, ctx.x_shape), None if dw is None else _t(dw, (n, k)), db, None, None)


class BiasAdded(torch.autograd.Function):
    """y + b after the product, as torch's linear adds the bias when it cannot fuse it (an input that
    is not contiguous, of 3 or more dimensions: matmul, then add_): y and the bias in the activation
    format, added in float32, the sum rounded to the format. Backward: dy rounded to the format goes to
    y; the bias's gradient is the in-order float32 column sum, rounded to the format."""

    @staticmethod
    def forward(ctx, y, bias, casts, name):
        b = casts.to_activation("", _np(bias).reshape(-1))
        out = casts.to_activation("", (_np(y).reshape(-1, b.size) + b).reshape(-1))
        ctx.casts, ctx.name, ctx.bias_shape = casts, name, bias.shape
        return _t(out, y.shape)

    @staticmethod
    def backward(ctx, dy):
        n = ctx.bias_shape.numel()
        dy2 = ctx.casts.to_activation("", _np(dy.reshape(-1)).astype(np.float32, copy=False))
        db = ctx.casts.to_activation(f"{ctx.name}:grad_bias", _core.column_sums(dy2, dy2.size // n, n))
        return _t(dy2, dy.shape), _t(db, ctx.bias_shape), None, None


class ActivationMatmul(torch.autograd.Function):
    """C = A.B for batched A (..., m, k) and B (..., k, n) of equal batch shape, as train's attention
    products (autocast's bmm, kept out of FP8): operands and result in the activation format, a
    float32 tensor-core GEMM (an FMA chain under fp32); its gradients the same way."""

    @staticmethod
    def forward(ctx, a, b, casts, name):
        ctx.casts, ctx.name = casts, name
        ctx.save_for_backward(a, b)
        return _batched(casts, f"{name}:output", a, b.transpose(-1, -2))

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        casts, name = ctx.casts, ctx.name
        da = _batched(casts, f"{name}:grad_a", dy, b) if ctx.needs_input_grad[0] else None
        db = None
        if ctx.needs_input_grad[1]:
            db = _batched(casts, f"{name}:grad_b", a.transpose(-1, -2), dy.transpose(-1, -2))
        return da, db, None, None


def _batched(casts, name, a, b_nk):
    """A.B^T per batch (A ..., m, k; B ..., n, k) through casts.activation_matmul."""
    batch = a.shape[:-2]
    m, k = a.shape[-2:]
    n = b_nk.shape[-2]
    a3, b3 = _np(a.reshape(-1, m, k)), _np(b_nk.reshape(-1, n, k))
    out = np.empty((a3.shape[0], m, n), dtype=np.float32)
    for i in range(a3.shape[0]):
        out[i] = casts.activation_matmul(name, np.ascontiguousarray(a3[i]), np.ascontiguousarray(b3[i]), m, n, k)
    return torch.from_numpy(out).reshape(*batch, m, n)
