"""fmtcheck.torch.emulate: a model's GEMMs computed as a recipe of `fmtcheck train` on a GPU's tensor
cores would compute them, bit for bit, on CPU tensors; every other op run by torch in float32, its
results rounded where the GPU under autocast would hold them in fp16 or bf16, and F.cross_entropy of
such logits as torch computes it on the GPU (low_precision.py).

A TorchFunctionMode, not a TorchDispatchMode: the recipe casts a layer's incoming gradient to its own
format and reuses the forward's casts in backward, which only the layer-level call can tell apart
(recipe_gemm.py). The mode swaps every GEMM-bearing call it knows (linear, the matmul family,
convolutions, einsum, attention, recurrent layers, grouped GEMMs, _scaled_mm) for autograd
Functions whose forward and backward run in the library; autograd sees ordinary float32 tensors.
torch's own Python functions that compose GEMMs (nn.MultiheadAttention's) run as torch wrote them,
the mode watching the calls inside. A GEMM-bearing call it cannot emulate raises Error, or with
unsupported="warn" runs in torch with a warning: never silently unemulated."""

from __future__ import annotations

import warnings
from functools import partial
from typing import Callable, Dict, Optional

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves, tree_map

from fmtcheck import _core

from . import exact_ops
from . import attention, contractions, conv_gemm, grouped_gemm, low_precision, recurrent, scaled_mm
from .arguments import in_order
from .errors import Error
from .recipe_gemm import ActivationMatmul, BiasAdded, RecipeLinear
from .unsupported import Fallback, Unsupported

F = torch.nn.functional
# A layer's one GEMM takes the module's path as its name; other products add their op to it.
LAYER_OPS = ("linear", "addmm", "conv", "conv_transpose")


def _gemms(em) -> dict:
    """Each call emulate computes, with what computes it; looked up by name so that a torch without
    one of them still imports this module."""
    out = {}

    def add(owner, names, make):
        for n in names.split():
            if hasattr(owner, n):
                out[getattr(owner, n)] = make(n.strip("_"))

    for owner in (torch, torch.Tensor):
        add(owner, "matmul __matmul__ mm bmm mv dot vdot", lambda n: partial(em.product, n))
        add(owner, "addmm", lambda n: em.addmm)
        add(owner, "baddbmm addbmm addmv addr", lambda n: getattr(em, n))
        add(owner, "tensordot", lambda n: partial(contractions.tensordot, em))
        add(owner, "inner", lambda n: partial(contractions.inner, em))
    add(torch, "einsum", lambda n: partial(contractions.einsum, em))
    add(torch, "_scaled_mm", lambda n: partial(scaled_mm.scaled_mm, em))
    add(torch.Tensor, "__rmatmul__", lambda n: lambda b, a: em.matmul("matmul", a, b))
    add(torch.linalg, "matmul", lambda n: partial(em.matmul, n))
    add(F, "linear", lambda n: em.linear)
    add(F, "conv1d conv2d conv3d", lambda n: partial(conv_gemm.conv, em, int(n[4])))
    add(F, "conv_transpose1d conv_transpose2d conv_transpose3d", lambda n: partial(conv_gemm.conv_transpose, em,
                                                                                  int(n[-2])))
    add(F, "scaled_dot_product_attention", lambda n: partial(attention.sdpa, em))
    add(torch, "_grouped_mm", lambda n: partial(grouped_gemm.grouped_mm, em))
    add(torch, "lstm gru rnn_tanh rnn_relu", lambda n: partial(recurrent.sequence, em, n))
    add(torch, "lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell",
        lambda n: partial(recurrent.cell, em, n.removesuffix("_cell")))
    return out


# torch's Python functions whose bodies call GEMMs (nn.MultiheadAttention's forward, the linear layer
# fused with cross-entropy): torch runs them as written, the mode kept active for the calls inside.
COMPOSITES = {getattr(F, n) for n in ("multi_head_attention_forward", "linear_cross_entropy") if hasattr(F, n)}


BACKWARD = {torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad}

# Calls that reduce products which emulate does not compute (in-place forms, chains whose order torch
# chooses, fused kernels): Unsupported, never run unemulated without a word.
_UNEMULATED_NAMES = {
    F: "bilinear conv_tbc",
    torch: "chain_matmul _native_multi_head_attention _transformer_encoder_layer_fwd convolution _convolution "
           "conv_tbc cdist _addmm_activation _scaled_mm_v2 _scaled_addmm _scaled_addmm_ _scaled_grouped_mm "
           "_scaled_grouped_mm_v2",
    torch.Tensor: "addmm_ baddbmm_ addbmm_ addmv_ addr_",
    torch.linalg: "multi_dot vecdot",
}
UNEMULATED = {getattr(owner, n) for owner, names in _UNEMULATED_NAMES.items() for n in names.split()
              if hasattr(owner, n)}


def _softmax(input, dim=None, _stacklevel=3, dtype=None):  # F.softmax's, torch.softmax's and Tensor.softmax's
    if dim is None:
        raise Error("softmax without dim: name the dimension (the exact softmax does not guess one)")
    return exact_ops.softmax(input, dim, dtype)


# exact_ops=True: torch's float32 ops that fmtcheck train defines, computed in its fixed order.
EXACT_OPS = {F.layer_norm: exact_ops.layer_norm, F.cross_entropy: exact_ops.cross_entropy,
             F.softmax: _softmax, torch.softmax: _softmax, torch.Tensor.softmax: _softmax}
MEASURES = ("values", "overflow", "saturated", "underflow_to_zero", "nan_produced")


def _name_of(func) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))


class emulate:
    """Runs the code inside as `recipe` (a recipe of `fmtcheck train`: fp32, tf32, tf32-rne, fp16, bf16,
    fp8-delayed, fp8-current, mxfp8, ...) on `gpu` (train's --gpu names: ampere, ada, hopper,
    blackwell, exact; or any preset of fmtcheck.models()) would compute its GEMMs::

        with fmtcheck.torch.emulate(recipe="bf16", gpu="hopper", model=model) as em:
            loss = loss_fn(model(x), y); loss.backward()
        print(em.report())

    `model` names the casts by module path ("fc1:input", "fc1:grad_output"); each call of it starts a
    step (delayed scaling's amax history advances per step). Without it, a GEMM after a backward
    starts one and names are the op's ("linear", "linear#1", ...). Float32 tensors on the CPU
    (or CUDA, through a host copy).

    `exact_ops=True` also computes layer_norm, softmax and cross_entropy as fmtcheck train does
    (fmtcheck.torch.layer_norm, softmax, cross_entropy: sums in order, exp and log correctly
    rounded) instead of torch's kernels, whose order no one publishes: the whole run is then the
    same bits on every machine, and a model written as train's equals train bit for bit. Without it,
    F.cross_entropy of logits a GPU would hold in the activation format rounds the log-probabilities
    to that format, as torch does on the GPU under autocast. Either way every other op's result the
    GPU would hold in the activation format is rounded to it (low_precision.py).

    torch.autocast to the recipe's activation dtype inside is taken as the recipe (a loop written for
    the GPU runs unchanged); autocast to another dtype is an Error. A GEMM-bearing call emulate
    cannot compute (an op, dtype, device or pattern it does not model) raises Error by default;
    `unsupported="warn"` runs it in torch instead, warning once per op.

    `device="cuda"` runs the emulated GEMMs on the GPU (fmtcheck's emulator compiled for it, the
    same bits; the casts stay on the CPU): a model's step at GPU speed where the GEMMs dominate."""

    def __init__(self, recipe: str = "fp32", gpu: str = "hopper", model: Optional[torch.nn.Module] = None,
                 exact_ops: bool = False, unsupported: str = "error", device: str = "cpu"):
        try:
            self.casts = _core.RecipeCasts(recipe, gpu, device)
        except ValueError as e:
            raise Error(str(e)) from None
        self.device = device
        self._fallback = Fallback(unsupported, f"{recipe} on {gpu}")
        self.recipe, self.gpu, self.model, self.exact_ops = recipe, gpu, model, exact_ops
        self._paths = {m: p for p, m in model.named_modules()} if model is not None else {}
        self._stack = []  # module paths of the forward calls now running
        self._used: Dict[str, int] = {}  # names taken in this step
        self._backward_seen = False
        self._totals: Dict[str, Dict[str, float]] = {}
        self._mode = _Mode(self)
        # The tensors a GPU under autocast would hold in the activation format (low_precision.py).
        # Under exact_ops a gradient is rounded where train rounds it, at the layer (no shares).
        self._low = (low_precision.LowPrecision(self.casts, shares=not exact_ops)
                     if self.casts.activation is not None else None)
        self._in_backward = 0  # backward passes now running (their Functions' own arithmetic is not followed)
        if not hasattr(torch.overrides, "redispatch_function"):
            warnings.warn("emulate: this torch has no torch.overrides.redispatch_function (torch releases from "
                          "2026 on): nn.MultiheadAttention's forward and F.linear_cross_entropy are not emulated, "
                          "and a checkpointed forward is recomputed in backward by torch in float32", stacklevel=2)
        self._hooks = []
        # Called with each ended step's casts, also the steps emulate starts by itself (one per forward
        # under gradient accumulation): how a Recorder sees them all.
        self.on_step: Optional[Callable[[list], None]] = None

    # -- steps and names ---------------------------------------------------------------------------
    def step(self) -> list:
        """Ends the current step: its counts join the totals and its names are free again. Returns the
        ended step's casts, [(name, amax, scale, flag counts)] in the order first cast."""
        stats = self.casts.step_stats()
        self._fold(stats, self._totals)
        if self.on_step is not None:
            self.on_step(stats)
        self.casts.begin_step()
        self._used.clear()
        self._backward_seen = False
        return stats

    def _pre(self, module, _args):
        if module is self.model and not self._stack and self._used:
            self.step()
        self._stack.append(self._paths.get(module, type(module).__name__.lower()))

    def _post(self, _module, _args, _out):
        self._stack.pop()

    def _name(self, op: str) -> str:
        if self._backward_seen and self.model is None:
            self.step()
        path = self._stack[-1] if self._stack else ""  # "" also for the model itself
        base = f"{path}.{op}" if path and op not in LAYER_OPS else (path or op)
        i = self._used.get(base, 0)
        self._used[base] = i + 1
        return base if i == 0 else f"{base}#{i}"

    # -- the counts --------------------------------------------------------------------------------
    @staticmethod
    def _fold(stats, into):
        for name, amax, _scale, flags in stats:
            t = into.setdefault(name, {m: 0 for m in MEASURES} | {"amax": 0.0})
            for m in MEASURES:
                t[m] += flags["tiny_to_zero" if m == "underflow_to_zero" else m]
            t["amax"] = amax if amax != amax else max(t["amax"], amax)  # NaN sticks

    @property
    def summary(self) -> Dict[str, Dict[str, float]]:
        """Per cast tensor ("module.path:role"), over every step so far: values cast, overflow,
        saturated, underflow_to_zero (nonzero values rounded to zero), nan_produced, and amax."""
        out = {n: dict(t) for n, t in self._totals.items()}
        self._fold(self.casts.step_stats(), out)
        return out

    def report(self, width: int = 100) -> str:
        """The summary as a table within `width` columns, the tensors that lost values first, and a
        last line on what was lost in all."""
        rows = sorted(self.summary.items(), key=lambda kv: -(kv[1]["overflow"] + kv[1]["underflow_to_zero"]))
        name_w = max([len("tensor")] + [len(n) for n, _ in rows])
        name_w = min(name_w, width - 52)
        lines = [f"emulated {self.recipe} on {self.gpu}: what each cast did",
                 f"{'tensor':<{name_w}} {'values':>10} {'overflow':>9} {'saturated':>9} {'to zero':>9} {'amax':>10}"]
        for n, t in rows:
            n = n if len(n) <= name_w else "…" + n[-(name_w - 1):]
            lines.append(f"{n:<{name_w}} {t['values']:>10} {t['overflow']:>9} {t['saturated']:>9} "
                         f"{t['underflow_to_zero']:>9} {t['amax']:>10.3g}")
        total = {m: sum(t[m] for _, t in rows) for m in MEASURES}
        losing = sum(1 for _, t in rows if t["overflow"] + t["saturated"] + t["underflow_to_zero"] + t["nan_produced"])
        if not losing:
            end = (f"no value lost at {total['values']} casts: nothing overflowed, saturated, underflowed to zero "
                   f"or became NaN")
        else:
            end = (f"{total['overflow']} overflowed, {total['saturated']} saturated, {total['underflow_to_zero']} "
                   f"underflowed to zero, {total['nan_produced']} became NaN of {total['values']} values cast, in "
                   f"{losing} of {len(rows)} tensors (the first rows): where this recipe loses the model's values")
        return "\n".join([line[:width] for line in lines] +
                         _core.wrap(f"{self.recipe} on {self.gpu}: ", end, width).rstrip("\n").splitlines())

    # -- entering and leaving ----------------------------------------------------------------------
    def __enter__(self):
        self._hooks = [torch.nn.modules.module.register_module_forward_pre_hook(self._pre),
                       torch.nn.modules.module.register_module_forward_hook(self._post, always_call=True)]
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        for h in self._hooks:
            h.remove()
        self._hooks = []
        self._stack.clear()
        return False

    # -- the GEMMs ---------------------------------------------------------------------------------
    def _check_autocast(self, op: str, devices) -> None:
        """torch.autocast on `devices` inside emulate: fine when it casts to the recipe's activation
        format (a loop written for the GPU, `with torch.autocast("cuda", torch.float16)` under
        emulate("fp16")), as that is what the recipe computes; any other autocast is an Error."""
        want = low_precision.DTYPES.get(self.casts.activation)
        for d in devices:
            dtype = torch.get_autocast_dtype(d)
            if dtype != want:
                fits = f"autocast to {want} or leave it off" if want else "leave autocast off"
                raise Error(f"{op} under torch.autocast({d!r}, {dtype}) in emulate({self.recipe!r}), whose "
                            f"activations are {self.casts.activation or 'float32'}: {fits}")

    def _check(self, op: str, *tensors) -> None:
        for t in tensors:
            if t is None:
                continue
            if t.device.type != "cpu":  # CUDA tensors arrive here as host copies (_on_host)
                raise Unsupported(f"{op} on a {t.device.type} tensor: emulate computes CPU and CUDA tensors")
            if t.dtype != torch.float32:
                raise Unsupported(f"{op} of a {t.dtype} tensor: emulate takes float32 (the recipe does the casts)")

    def _product(self, op: str, a, b, layer: bool):
        """A (..., m, k) . B (..., k, n). A layer's product (B a k x n matrix, acting as a weight): the
        recipe's GEMM with B^T as the weight. Else batched activations: operands and result in the
        activation format, batch shapes broadcast as torch.matmul does."""
        if a.shape[-1] != b.shape[-2]:
            raise Error(f"{op} of shapes {tuple(a.shape)} and {tuple(b.shape)}: inner sizes differ")
        if layer:
            return RecipeLinear.apply(a, b.t(), None, self.casts, self._name(op))
        try:
            batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except RuntimeError:
            raise Error(f"{op} of shapes {tuple(a.shape)} and {tuple(b.shape)}: batch shapes do not broadcast") \
                from None
        a, b = a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:])
        return ActivationMatmul.apply(a, b, self.casts, self._name(op))

    # Each entry point takes torch's parameter names: models call them by name too (BLOOM's baddbmm).
    def linear(self, input, weight, bias=None):
        self._check("linear", input, weight, bias)
        if bias is not None and input.dim() >= 3 and not input.is_contiguous():
            # torch's linear fuses the bias into the GEMM's epilogue only for a contiguous input (or a
            # matrix); else it runs matmul, then adds the bias to the rounded product.
            self._check_layer("linear", weight, bias)
            name = self._name("linear")
            return BiasAdded.apply(self.layer_gemm("linear", input, weight, None, name), bias, self.casts, name)
        return self.layer_gemm("linear", input, weight, bias)

    @staticmethod
    def _check_layer(op, weight, bias):
        if weight.dim() != 2 or (bias is not None and bias.numel() != weight.shape[0]):
            raise Error(f"{op} with weight {tuple(weight.shape)} and bias "
                        f"{None if bias is None else tuple(bias.shape)}: expected n x k and n values")

    def layer_gemm(self, op, x, weight, bias, name=None):
        """x.W^T + b, the recipe's layer GEMM (train's Linear), named after op (or `name`)."""
        self._check_layer(op, weight, bias)
        return RecipeLinear.apply(x, weight, bias, self.casts, name or self._name(op))

    _DIMS = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1), "addmv": (2, 1), "dot": (1, 1), "vdot": (1, 1)}
    # torch's name of each product's second operand
    _OTHER = {"matmul": "other", "__matmul__": "other", "mm": "mat2", "bmm": "mat2", "mv": "vec", "dot": "tensor",
              "vdot": "other"}

    def product(self, op, *args, out_dtype=None, **kwargs):
        """torch.<op>(input, other) with its operands by position or by torch's names."""
        if out_dtype is not None:
            raise Unsupported(f"{op} with out_dtype: emulate computes float32")
        return self.matmul(op, *in_order(op, ("input", self._OTHER[op]), args, kwargs))

    def matmul(self, op, a, b):
        """torch.matmul's semantics: a vector operand is a one-row (left) or one-column (right) matrix,
        removed again from the result; a 2-D right operand is a layer's product (train's Linear)."""
        self._check(op, a, b)
        dims = self._DIMS.get(op)
        if (dims and (a.dim(), b.dim()) != dims) or a.dim() == 0 or b.dim() == 0:
            raise Error(f"{op} of shapes {tuple(a.shape)} and {tuple(b.shape)}: "
                        f"expected {dims or 'at least 1-D'} dimensions")
        left, right = a.dim() == 1, b.dim() == 1
        y = self._product(op, a.unsqueeze(0) if left else a, b.unsqueeze(-1) if right else b, layer=b.dim() <= 2)
        y = y.squeeze(-1) if right else y
        return y.squeeze(-1 if right else -2) if left else y

    def addmm(self, input, mat1, mat2, beta=1, alpha=1):
        c, a, b = input, mat1, mat2
        self._check("addmm", c, a, b)
        if a.dim() != 2 or b.dim() != 2:
            raise Error(f"addmm of shapes {tuple(a.shape)} and {tuple(b.shape)}: expected matrices")
        if beta == 1 and alpha == 1 and c.numel() == b.shape[1] and c.shape[-1] == b.shape[1]:
            # A bias row: train's Linear with its fused bias epilogue (HF Conv1D, nn.Linear's old path).
            return RecipeLinear.apply(a, b.t(), c, self.casts, self._name("addmm"))
        return _scaled_sum(beta, c, alpha, self._product("addmm", a, b, layer=True))

    def baddbmm(self, input, batch1, batch2, beta=1, alpha=1):
        c, a, b = input, batch1, batch2
        self._check("baddbmm", c, a, b)
        if a.dim() != 3 or b.dim() != 3:
            raise Error(f"baddbmm of shapes {tuple(a.shape)} and {tuple(b.shape)}: expected 3-D operands")
        return _scaled_sum(beta, c, alpha, self._product("baddbmm", a, b, layer=False))

    def addbmm(self, input, batch1, batch2, beta=1, alpha=1):
        """The sum over the batch of A_i.B_i is one product with K = batch x k: A (n, batch x k) x
        B (batch x k, p), batch-major, as an activation matmul (neither operand is a weight)."""
        c, a, b = input, batch1, batch2
        self._check("addbmm", c, a, b)
        if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0]:
            raise Error(f"addbmm of shapes {tuple(a.shape)} and {tuple(b.shape)}: expected 3-D, equal batches")
        rows = a.transpose(0, 1).reshape(a.shape[1], -1)
        return _scaled_sum(beta, c, alpha, self._product("addbmm", rows, b.reshape(-1, b.shape[2]), layer=False))

    def addmv(self, input, mat, vec, beta=1, alpha=1):
        self._check("addmv", input)
        return _scaled_sum(beta, input, alpha, self.matmul("addmv", mat, vec))

    def addr(self, input, vec1, vec2, beta=1, alpha=1):
        """The outer product vec1.vec2^T as a layer GEMM with K = 1 (autocast runs addr in the low
        format)."""
        self._check("addr", input, vec1, vec2)
        if vec1.dim() != 1 or vec2.dim() != 1:
            raise Error(f"addr of shapes {tuple(vec1.shape)} and {tuple(vec2.shape)}: expected vectors")
        return _scaled_sum(beta, input, alpha, self._product("addr", vec1.unsqueeze(1), vec2.unsqueeze(0), layer=True))


def _scaled_sum(beta, c, alpha, product):
    """beta.C + alpha.product in float32 by torch, as torch's add* ops define it (beta = 0 ignores C,
    NaN included). Not a GEMM epilogue: the product is already rounded to the activation format."""
    product = product if alpha == 1 else product * alpha
    return product if beta == 0 else (c if beta == 1 else c * beta) + product


def _on_host(compute, args, kwargs):
    """CUDA tensors are computed on a host copy and the results returned to their device (autograd
    carries the gradients across both copies). Tensors on any other device are Unsupported."""
    devices = {t.device for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and t.device.type != "cpu"}
    if not devices:
        return compute(*args, **kwargs)
    device = next(iter(devices))
    if len(devices) > 1 or device.type != "cuda":
        raise Unsupported(f"tensors on {', '.join(sorted(map(str, devices)))}: emulate computes CPU and CUDA tensors")
    args, kwargs = tree_map(lambda t: t.cpu() if isinstance(t, torch.Tensor) else t, (args, kwargs))
    return tree_map(lambda t: t.to(device) if isinstance(t, torch.Tensor) else t, compute(*args, **kwargs))


class _Mode(TorchFunctionMode):
    def __init__(self, em: emulate):
        super().__init__()
        self.em = em
        self.gemms = _gemms(em)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        on = [d for d in ("cpu", "cuda") if torch.is_autocast_enabled(d)]
        if not on:
            return self._handle(func, types, args, kwargs)
        # Autocast to the recipe's format: emulate computes what it would, so torch's own autocast
        # is off for the call (its fp16 tensors would bypass the recipe).
        self.em._check_autocast(_name_of(func), on)
        for d in on:
            torch.set_autocast_enabled(d, False)
        try:
            return self._handle(func, types, args, kwargs)
        finally:
            for d in on:
                torch.set_autocast_enabled(d, True)

    def _handle(self, func, types, args, kwargs):
        low = self.em._low
        if self.em.exact_ops and func in EXACT_OPS:
            return EXACT_OPS[func](*args, **kwargs)
        if func is F.cross_entropy and low is not None and (args[0] if args else kwargs.get("input")) in low:
            return low_precision.cross_entropy(self.em, *args, **kwargs)
        if func in COMPOSITES:
            return self._composite(func, types, args, kwargs)
        compute = self.gemms.get(func)
        if compute is not None or func in UNEMULATED:
            op = _name_of(func)
            try:
                if compute is None:
                    raise Unsupported(f"{op} is not emulated")
                if kwargs.get("out") is not None:
                    raise Unsupported(f"{op} with out=")
                out = _on_host(compute, args, {k: v for k, v in kwargs.items() if k != "out"})
                return low.mark(out) if low is not None else out
            except Unsupported as e:
                return self.em._fallback(op, e, lambda: func(*args, **kwargs))
        if func in BACKWARD:
            # The backward pass runs with the mode on, so that what runs Python inside it is emulated
            # too: gradient checkpointing recomputes its forward there (as a GPU recomputes it under
            # the recipe). A step without model= ends at the next GEMM after it.
            self.em._backward_seen = True
            self.em._in_backward += 1
            try:
                return self._inside(func, types, args, kwargs, lambda: func(*args, **kwargs))
            finally:
                self.em._backward_seen = True
                self.em._in_backward -= 1
        if low is None or (self.em._in_backward and not torch.is_grad_enabled()):
            # Inside backward with grad mode off runs our Functions' own arithmetic, not the model's
            # (a checkpointed forward is recomputed with grad mode on, and followed).
            return func(*args, **kwargs)
        return low.call(self.em._name, func, args, kwargs)

    def _composite(self, func, types, args, kwargs):
        op = _name_of(func)
        unsupported = Unsupported(f"{op} is not emulated by a torch without torch.overrides.redispatch_function")
        return self._inside(func, types, args, kwargs, lambda: self.em._fallback(op, unsupported,
                                                                                 lambda: func(*args, **kwargs)))

    def _inside(self, func, types, args, kwargs, without):
        """func's own body with this mode active again for the calls inside it (the mode is off while
        its handler runs, and func would run every GEMM in it unseen); `without()` on a torch that
        cannot skip the handler (torch.overrides.redispatch_function)."""
        redispatch = getattr(torch.overrides, "redispatch_function", None)
        if redispatch is None:
            return without()
        with self:
            return redispatch(func, types, args, kwargs)
