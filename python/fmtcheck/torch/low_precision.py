"""Which of emulate's float32 tensors a GPU under torch.autocast would hold in the recipe's activation
format (fp16, bf16), and what the ops on them compute there.

emulate keeps every tensor float32: a GEMM's output holds values of the activation format, but torch's
next op sees float32. On the GPU the same output is a float16 or bfloat16 tensor, and so is what an
elementwise op makes of it: x * 0.125, a GELU, a residual sum of two of them, a dropout, a masked fill,
a mean each round their float32 result to the format (and overflow there: 300 * 300 is inf in fp16).
Ops autocast runs in float32 (sum, softmax, exp, pow, the losses) and ops with a float32 tensor operand
give float32. Backward mirrors it: the gradient of a low-precision tensor is one. Which results stay
low precision torch itself says (dtype_flow.py); this module rounds them (the library's rounding:
recipe_gemm.rounded) and keeps the marks:

  - a GEMM's output is marked (emulate.py); shape ops (views, reshapes, indexing, transposes, clone)
    keep the mark without rounding, as does any op whose result is a view of a marked operand;
  - any other op with a marked operand runs in float32; each result the GPU would hold in the format
    is rounded (_InFormat, counted as OP:output) and marked. The op reads a marked operand through
    its fp16/bf16 twin (_ToFormat, _FromFormat): the op's share of the operand's gradient is rounded
    to the format (counted as OP:grad_input) and autograd sums the shares in the format, as torch's
    autograd sums an fp16 tensor's gradients (GEMMs' shares, already rounded, join in float32);
  - an in-place op on a marked tensor is computed on a copy, rounded and written back;
  - F.cross_entropy of marked logits computes its log_softmax in the format (below): torch's
    cross_entropy_loss calls log_softmax(input, dim, input's dtype), only nll_loss in float32.

Not followed: our own Functions' backward (grad mode off inside backward), ops with out=, and ops that
fake tensors cannot run (data-dependent shapes: masked_select, nonzero), whose results stay unmarked.
Under exact_ops (train's arithmetic) gradients are rounded where train rounds them, at the layers."""

from __future__ import annotations

import inspect
import math
import weakref

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from .dtype_flow import DtypeFlow
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
# Ops that copy their operand's values (to another device, out of autograd): nothing to round.
COPIES = _functions(T, "to cpu cuda type type_as detach")
# In-place ops that write values (a trailing "_" marks the rest: add_, masked_fill_, relu_ ...), and
# in-place ops that change only the shape or autograd state, which write nothing to round.
IN_PLACE = _functions(T, "__iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __setitem__")
NOT_WRITING = {"requires_grad_", "retain_grad", "detach_", "squeeze_", "unsqueeze_", "t_", "transpose_",
               "swapdims_", "swapaxes_", "resize_", "resize_as_", "set_", "share_memory_", "as_strided_",
               "rename_", "record_stream", "register_hook"}
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
# Ops that convert a number to the tensor's dtype with a range check (op names, "_"s stripped).
FILLS = {"masked_fill", "fill", "index_fill", "setitem"}


class _InFormat(torch.autograd.Function):
    """An op's float32 result rounded to the format, as the GPU's kernel stores it (counted as
    name:output). Its gradient comes back in the format from the ops that read it (their shares are
    counted there); rounding it again changes nothing but where they did not (exact_ops)."""

    @staticmethod
    def forward(ctx, y, casts, name):
        ctx.casts = casts
        return rounded(casts, f"{name}:output", y)

    @staticmethod
    def backward(ctx, g):
        return rounded(ctx.casts, "", g), None, None


class _ToFormat(torch.autograd.Function):
    """A marked tensor as the float16/bfloat16 tensor the GPU holds (exact: its values are the
    format's), made once for the ops that read it (LowPrecision._share). Autograd sums their
    gradients for it in the format, each addition rounded in autograd's order, as torch sums an fp16
    tensor's gradients on the GPU; the sum goes back as float32."""

    @staticmethod
    def forward(ctx, y, dtype):
        return y.to(dtype)

    @staticmethod
    def backward(ctx, g):
        return g.float(), None


class _FromFormat(torch.autograd.Function):
    """One op's read of a low-precision tensor: its float32 values for emulate's float32 op; that op's
    share of the gradient rounded to the format by the library (counted as name, OP:grad_input: where
    an fp16 run's scaled gradients overflow) and handed back in it."""

    @staticmethod
    def forward(ctx, y16, casts, name):
        ctx.casts, ctx.dtype, ctx.name = casts, y16.dtype, name
        return y16.float()

    @staticmethod
    def backward(ctx, g):
        return rounded(ctx.casts, ctx.name, g).to(ctx.dtype), None, None


def _writes_in_place(func, args, kwargs) -> bool:
    """Whether func writes new values into its first operand: Tensor.add_, torch.relu_, x += y,
    x[i] = v, F.relu(x, inplace=True) (also nn.Dropout's positional inplace)."""
    if func in IN_PLACE:
        return True
    name = getattr(func, "__name__", "")
    if name.endswith("_") and not name.startswith("_"):
        return name not in NOT_WRITING
    inplace = _INPLACE_PARAMETER.get(func)
    if inplace is None:
        try:
            params = list(inspect.signature(func).parameters)
        except (TypeError, ValueError):  # builtins without a signature take no inplace
            params = []
        inplace = _INPLACE_PARAMETER[func] = params.index("inplace") if "inplace" in params else -1
    if inplace < 0:
        return False
    return bool(kwargs["inplace"] if "inplace" in kwargs else len(args) > inplace and args[inplace])


_INPLACE_PARAMETER = {}


class LowPrecision:
    """The tensors that stand for low-precision ones, held weakly (by identity: a tensor's == is
    elementwise), and the ops on them computed as the GPU would (module docstring)."""

    def __init__(self, casts, shares: bool = True):
        self.casts, self.shares = casts, shares
        self.flow = DtypeFlow(DTYPES[casts.activation])
        self._marked = {}
        self._in_format = {}  # id of a marked tensor -> (its version, its _ToFormat tensor)

    def mark(self, result):
        for t in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(t, torch.Tensor):
                key = id(t)
                self._marked[key] = weakref.ref(t, lambda r, key=key: self._forget(key, r))
        return result

    def _forget(self, key, ref):
        if self._marked.get(key) is ref:
            self._marked.pop(key)
            self._in_format.pop(key, None)

    def _share(self, t, name):
        """What an op reads of operand t: t itself, or for a marked tensor that needs a gradient, its
        values through _ToFormat (made once per tensor and version) and _FromFormat (one per op,
        its gradient counted as `name()`:grad_input)."""
        if not (self.shares and isinstance(t, torch.Tensor) and t.requires_grad and torch.is_grad_enabled()
                and t in self):
            return t
        version, t16 = self._in_format.get(id(t), (None, None))
        if version != t._version:  # first read, or written since (in place, through any view)
            t16 = _ToFormat.apply(t, self.flow.low)
            self._in_format[id(t)] = (t._version, t16)
        return _FromFormat.apply(t16, self.casts, f"{name()}:grad_input")

    def _shares(self, items, name):
        """args or kwargs with each marked operand replaced by its share (in lists and tuples too)."""
        def one(a):
            if isinstance(a, (list, tuple)):
                return type(a)(one(b) for b in a)
            return self._share(a, name)

        if isinstance(items, dict):
            return {k: one(v) for k, v in items.items()}
        return tuple(one(a) for a in items)

    def __contains__(self, t) -> bool:
        r = self._marked.get(id(t))
        return r is not None and r() is t

    def _any_marked(self, items) -> bool:
        """Whether a marked tensor is among items or in their lists and tuples (every torch call
        under emulate asks: a plain loop, several times faster than flattening the arguments)."""
        for a in items:
            if isinstance(a, torch.Tensor):
                if a in self:
                    return True
            elif isinstance(a, (list, tuple)) and self._any_marked(a):
                return True
        return False

    def call(self, name, func, args, kwargs):
        """func(*args, **kwargs) as the GPU would compute it, given which operands stand for
        low-precision tensors; `name(op)` names a rounding for the counts."""
        if not (self._any_marked(args) or self._any_marked(kwargs.values())):
            return func(*args, **kwargs)
        if func in SHAPE_OPS:
            return self.mark(func(*args, **kwargs))
        if kwargs.get("out") is not None:
            return func(*args, **kwargs)
        op = getattr(func, "__name__", "op").strip("_")
        self._check_fill(op, args, kwargs)
        taken = []

        def named():  # the op's name for the counts, taken once and only if something is counted
            if not taken:
                taken.append(name(op))
            return taken[0]

        if _writes_in_place(func, args, kwargs) and isinstance(args[0], torch.Tensor):
            return self._in_place(named, func, args, kwargs)
        results = self.flow.results(func, args, kwargs, self.__contains__)
        if results is None or not any(results):  # torch cannot say, or no tensor comes back
            return func(*args, **kwargs)
        # A view of an operand, or a copy that stays low precision (.to(device), .detach()): the values
        # are the operand's, nothing to round or to share.
        same_values = any(r is not None and r[1] for r in results) or (
            func in COPIES and all(r is None or r[0] == self.flow.low for r in results))
        out = func(*args, **kwargs) if same_values else func(*self._shares(args, named),
                                                              **self._shares(kwargs, named))
        flat, spec = tree_flatten(out)
        for i, (t, r) in enumerate(zip(flat, results)):
            if not isinstance(t, torch.Tensor) or r is None:
                continue
            if r[0] != self.flow.low:
                if t in self:  # float32 on the GPU, yet the operand itself (x.float() of a float32 x)
                    flat[i] = t.view_as(t)
            elif same_values:
                self.mark(t)
            elif t.dtype == torch.float32:
                flat[i] = self.mark(_InFormat.apply(t, self.casts, named()))
        return tree_unflatten(flat, spec)

    def _check_fill(self, op, args, kwargs):
        """torch refuses to fill a float16 or bfloat16 tensor with a number beyond its range (the
        fill kernels convert it with a check: scores.masked_fill(mask, -1e9) raises under fp16 on
        the GPU): so does emulate, with torch's words."""
        if op not in FILLS or not args or args[0] not in self:
            return
        # The value comes last: x[i] = v, masked_fill(mask, v), fill_(v), index_fill(dim, index, v).
        v = kwargs.get("value", args[-1] if len(args) > 1 else None)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and \
                abs(v) > torch.finfo(self.flow.low).max:
            raise Error(f"{op} with {v:g} into a tensor the GPU holds in {self.casts.activation}: torch raises "
                        f"there (value cannot be converted to type {self.flow.low} without overflow)")

    def _in_place(self, named, func, args, kwargs):
        """An in-place op: into a marked tensor, computed on a copy, rounded, written back (the
        result keeps the destination's dtype); into a float32 one, as it is."""
        target, rest, kwargs = args[0], self._shares(args[1:], named), self._shares(kwargs, named)
        if target not in self:
            return func(target, *rest, **kwargs)
        work = self._share(target, named)
        work = target.clone() if work is target else work
        back = func(work, *rest, **kwargs)
        target.copy_(_InFormat.apply(work, self.casts, named()))
        return target if back is work else back


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
