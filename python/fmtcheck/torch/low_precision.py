"""Which of emulate's float32 tensors a GPU under torch.autocast would hold in the recipe's activation
format (fp16, bf16), and the one op emulate computes differently for them: F.cross_entropy.

emulate keeps every tensor float32: a GEMM's output holds values of the activation format, but torch's
next op sees float32. On the GPU the same output is a float16 or bfloat16 tensor. That changes
nothing for an op whose result goes on to a GEMM (which casts its input to the format either way),
but F.cross_entropy computes its log_softmax in the dtype of its input (torch's cross_entropy_loss calls
log_softmax(input, dim, input's dtype); autocast runs only nll_loss in float32): fp16 logits give
log-probabilities rounded once to fp16, whose exp the backward reads. The H200's gradients of the
captured steps are exactly that (tests/torch/test_gpu_captures.py), and differ from the float32
loss's on 60% of the logits; `logits.float()` first (Hugging Face's losses) keeps them float32.

So emulate follows which tensors stand for low-precision ones: a GEMM's output, and what the shape
ops (views, reshapes, indexing, transposes) make of it. A cast to float32 or float64 gives an unmarked
alias (`.float()` returns the tensor itself when it is float32 already). Any other op's result is
unmarked: the GPU's elementwise arithmetic in fp16 is not followed."""

from __future__ import annotations

import inspect
import weakref

import torch

from .errors import Error
from .recipe_gemm import rounded

F = torch.nn.functional
T = torch.Tensor


def _functions(owner, names: str) -> set:
    return {getattr(owner, n) for n in names.split() if hasattr(owner, n)}


# Ops whose result holds the same values as their first operand, rearranged: still low precision.
SHAPE_OPS = (_functions(T, "__getitem__ view view_as reshape reshape_as flatten unflatten contiguous transpose "
                           "permute squeeze unsqueeze t movedim narrow select expand expand_as clone split chunk "
                           "unbind")
             | _functions(torch, "reshape flatten transpose permute squeeze unsqueeze t movedim narrow select split "
                                 "chunk unbind")
             | {T.T.__get__, T.mT.__get__})
WIDE = (torch.float32, torch.float64)


class LowPrecision:
    """The tensors that stand for low-precision ones, held weakly (by identity: a tensor's == is
    elementwise)."""

    def __init__(self):
        self._marked = {}

    def mark(self, result):
        for t in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(t, torch.Tensor):
                key = id(t)
                self._marked[key] = weakref.ref(t, lambda r, key=key: self._marked.get(key) is r and
                                                self._marked.pop(key))
        return result

    def __contains__(self, t) -> bool:
        r = self._marked.get(id(t))
        return r is not None and r() is t

    def follow(self, func, args, kwargs, result):
        """`result` of func(*args, **kwargs), marked when a shape op made it of a marked tensor; a
        widening cast of a marked tensor that returned the tensor itself gives an unmarked alias."""
        if not args or args[0] not in self:
            return result
        if func in SHAPE_OPS:
            return self.mark(result)
        if result is args[0] and _widens(func, args, kwargs, self):
            return result.view_as(result)
        return result


def _widens(func, args, kwargs, low: LowPrecision) -> bool:
    """Whether a Tensor.float/double/to/type call asks for float32 or float64 (a GPU's fp16 tensor
    would become one)."""
    if func in (T.float, T.double):
        return True
    if func not in (T.to, T.type):
        return False
    for a in (*args[1:], *kwargs.values()):
        if isinstance(a, torch.dtype):
            return a in WIDE
        if isinstance(a, torch.Tensor):  # .to(other): other's dtype, low if other stands for it
            return a.dtype in WIDE and a not in low
        if isinstance(a, str) and func is T.type:
            return a in ("torch.FloatTensor", "torch.DoubleTensor")
    return False


class _LogSoftmax(torch.autograd.Function):
    """log_softmax over dim of a low-precision input as torch's GPU kernel computes it: in float32, its
    accumulate type, the log-probabilities rounded once to the activation format. The float32 values
    are taken from float64 (the GPU's own exp and log are within an ulp or two of them, and which way
    they err is not published). Backward as torch's kernel: the incoming gradient in the format (the
    log-probabilities' dtype), dx = g - exp(ls)·Σg in float32, rounded once to the format."""

    @staticmethod
    def forward(ctx, x, dim, casts, name):
        ls = rounded(casts, f"{name}:log_probs", torch.log_softmax(x.double(), dim))
        ctx.save_for_backward(ls)
        ctx.dim, ctx.casts, ctx.name = dim, casts, name
        return ls

    @staticmethod
    def backward(ctx, g):
        (ls,) = ctx.saved_tensors
        g = rounded(ctx.casts, "", g).double()
        dx = g - torch.exp(ls.double()) * g.sum(ctx.dim, keepdim=True)
        return rounded(ctx.casts, f"{ctx.name}:grad_input", dx), None, None, None


_CROSS_ENTROPY = inspect.signature(F.cross_entropy)


def cross_entropy(em, *args, **kwargs) -> torch.Tensor:
    """F.cross_entropy of logits that stand for low-precision ones, as torch on a GPU computes it: the
    log-probabilities in the activation format (_LogSoftmax), then torch's own composition in float32
    (nll_loss; label smoothing and probability targets as LossNLL.cpp combines them)."""
    a = _CROSS_ENTROPY.bind(*args, **kwargs)
    a.apply_defaults()
    x, target, weight = a.arguments["input"], a.arguments["target"], a.arguments["weight"]
    reduction, smoothing = a.arguments["reduction"], a.arguments["label_smoothing"]
    if a.arguments["size_average"] is not None or a.arguments["reduce"] is not None:
        reduction = torch.nn._reduction.legacy_get_string(a.arguments["size_average"], a.arguments["reduce"])
    dim = 0 if x.dim() == 1 else 1
    ls = _LogSoftmax.apply(x, dim, em.casts, em._name("cross_entropy"))
    classes = ls.shape[dim]
    weights = None if weight is None else weight.reshape([classes if d == dim else 1 for d in range(ls.dim())])
    if target.shape == x.shape:  # class probabilities, as torch tells them apart
        if not target.is_floating_point() or a.arguments["ignore_index"] >= 0:
            raise Error("cross_entropy with class probabilities takes a floating-point target and no "
                        f"ignore_index, not {target.dtype} and ignore_index={a.arguments['ignore_index']}")
        if smoothing > 0:
            target = target * (1 - smoothing) + smoothing / classes
        loss = -(ls * target if weights is None else ls * target * weights)
        if reduction == "none":
            return loss.sum(dim)
        return loss.sum() / (ls.numel() / classes) if reduction == "mean" else loss.sum()
    ignore_index = a.arguments["ignore_index"]
    nll = F.nll_loss(ls, target, weight, ignore_index=ignore_index, reduction=reduction)
    if smoothing == 0:
        return nll
    ignored = target == ignore_index
    smooth = (-(ls if weights is None else ls * weights).sum(dim)).masked_fill(ignored, 0.0)
    if reduction == "mean":
        kept = (~ignored).sum() if weight is None else weight.gather(0, target.masked_select(~ignored)).sum()
        smooth = smooth.sum() / kept
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - smoothing) * nll + smooth * (smoothing / classes)
