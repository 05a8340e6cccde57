"""fmtcheck.torch.emulate: a model's GEMMs computed as a recipe of `fmtcheck train` on a GPU's tensor
cores would compute them, bit for bit, on CPU tensors; every other op run by torch.

A TorchFunctionMode, not a TorchDispatchMode: the recipe casts a layer's incoming gradient to its own
format and reuses the forward's casts in backward, which only the layer-level call can tell apart
(recipe_gemm.py). The mode swaps linear, matmul, mm, addmm and bmm for autograd Functions whose
forward and backward run in the library; autograd sees ordinary float32 tensors. GEMM-bearing calls
it does not emulate raise Error instead of running unemulated."""

from __future__ import annotations

from typing import Callable, Dict, Optional

import torch
from torch.overrides import TorchFunctionMode

from fmtcheck import _core

from . import exact_ops
from .errors import Error
from .recipe_gemm import ActivationMatmul, RecipeLinear

F = torch.nn.functional
LINEAR = {F.linear}
MATMUL = {torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.mm, torch.Tensor.mm, torch.bmm,
          torch.Tensor.bmm}
ADDMM = {torch.addmm, torch.Tensor.addmm}
RMATMUL = {torch.Tensor.__rmatmul__}
# Calls that reduce products (a GEMM, a convolution, a dot product) which emulate does not model yet;
# looked up by name so that a torch without one of them still imports this module.
_UNEMULATED_NAMES = {
    F: "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d bilinear "
       "scaled_dot_product_attention",
    torch: "einsum tensordot baddbmm addbmm addmv mv dot vdot inner chain_matmul _scaled_mm "
           "_native_multi_head_attention",
    torch.Tensor: "baddbmm baddbmm_ addmm_ addmv mv dot",
    torch.linalg: "matmul multi_dot",
}
UNEMULATED = {getattr(owner, n) for owner, names in _UNEMULATED_NAMES.items() for n in names.split()
              if hasattr(owner, n)}


def _softmax(x, dim=None, _stacklevel=3, dtype=None):  # F.softmax's, torch.softmax's and Tensor.softmax's
    if dim is None:
        raise Error("softmax without dim: name the dimension (the exact softmax does not guess one)")
    return exact_ops.softmax(x, dim, dtype)


# exact_ops=True: torch's float32 ops that fmtcheck train defines, computed in its fixed order.
EXACT_OPS = {F.layer_norm: exact_ops.layer_norm, F.cross_entropy: exact_ops.cross_entropy,
             F.softmax: _softmax, torch.softmax: _softmax, torch.Tensor.softmax: _softmax}
MEASURES = ("values", "overflow", "saturated", "underflow_to_zero", "nan_produced")


def _name_of(func) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))


class emulate:
    """Runs the code inside as `recipe` (a recipe of `fmtcheck train`: fp32, tf32, fp16, bf16,
    fp8-delayed, fp8-current, mxfp8, ...) on `gpu` (train's --gpu names: ampere, ada, hopper,
    blackwell, exact; or any preset of fmtcheck.models()) would compute its GEMMs::

        with fmtcheck.torch.emulate(recipe="bf16", gpu="hopper", model=model) as em:
            loss = loss_fn(model(x), y); loss.backward()
        print(em.report())

    `model` names the casts by module path ("fc1:input", "fc1:grad_output"); each call of it starts a
    step (delayed scaling's amax history advances per step). Without it, a GEMM after a backward
    starts one and names are the op's ("linear", "linear#1", ...). CPU float32 tensors only.

    `exact_ops=True` also computes layer_norm, softmax and cross_entropy as fmtcheck train does
    (fmtcheck.torch.layer_norm, softmax, cross_entropy: sums in order, exp and log correctly
    rounded) instead of torch's kernels, whose order no one publishes: the whole run is then the
    same bits on every machine, and a model written as train's equals train bit for bit."""

    def __init__(self, recipe: str = "fp32", gpu: str = "hopper", model: Optional[torch.nn.Module] = None,
                 exact_ops: bool = False):
        try:
            self.casts = _core.RecipeCasts(recipe, gpu)
        except ValueError as e:
            raise Error(str(e)) from None
        self.recipe, self.gpu, self.model, self.exact_ops = recipe, gpu, model, exact_ops
        self._paths = {m: p for p, m in model.named_modules()} if model is not None else {}
        self._stack = []  # module paths of the forward calls now running
        self._used: Dict[str, int] = {}  # names taken in this step
        self._backward_seen = False
        self._totals: Dict[str, Dict[str, float]] = {}
        self._mode = _Mode(self)
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
        base = self._stack[-1] if self._stack and self._stack[-1] else op
        if op not in ("linear", "addmm") and self._stack:  # a layer's one GEMM takes its path
            base = f"{base}.{op}"
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
        """The summary as a table within `width` columns: the tensors that lost values first."""
        rows = sorted(self.summary.items(), key=lambda kv: -(kv[1]["overflow"] + kv[1]["underflow_to_zero"]))
        name_w = max([len("tensor")] + [len(n) for n, _ in rows])
        name_w = min(name_w, width - 52)
        lines = [f"emulated {self.recipe} on {self.gpu}: what each cast did",
                 f"{'tensor':<{name_w}} {'values':>10} {'overflow':>9} {'saturated':>9} {'to zero':>9} {'amax':>10}"]
        for n, t in rows:
            n = n if len(n) <= name_w else "…" + n[-(name_w - 1):]
            lines.append(f"{n:<{name_w}} {t['values']:>10} {t['overflow']:>9} {t['saturated']:>9} "
                         f"{t['underflow_to_zero']:>9} {t['amax']:>10.3g}")
        return "\n".join(line[:width] for line in lines)

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
    def _check(self, op: str, *tensors) -> None:
        if torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda"):
            raise Error(f"{op} under torch.autocast: emulate's recipe decides the casts; leave autocast off")
        for t in tensors:
            if t is None:
                continue
            if t.device.type != "cpu":
                raise Error(f"{op} on a {t.device.type} tensor: emulate computes on CPU tensors only")
            if t.dtype != torch.float32:
                raise Error(f"{op} of a {t.dtype} tensor: emulate takes float32 tensors (the recipe does the casts)")

    def linear(self, x, weight, bias=None):
        self._check("linear", x, weight, bias)
        if weight.dim() != 2 or (bias is not None and bias.numel() != weight.shape[0]):
            raise Error(f"linear with weight {tuple(weight.shape)} and bias "
                        f"{None if bias is None else tuple(bias.shape)}: expected n x k and n values")
        return RecipeLinear.apply(x, weight, bias, self.casts, self._name("linear"))

    def matmul(self, op, a, b):
        self._check(op, a, b)
        if a.dim() < 2 or b.dim() < 2:
            raise Error(f"{op} of shapes {tuple(a.shape)} and {tuple(b.shape)}: emulate takes no vectors")
        if b.dim() == 2:  # a layer's product: the recipe's GEMM, b as the weight
            return RecipeLinear.apply(a, b.t(), None, self.casts, self._name(op))
        if a.shape[:-2] != b.shape[:-2]:
            raise Error(f"{op} of shapes {tuple(a.shape)} and {tuple(b.shape)}: batch shapes must be equal")
        return ActivationMatmul.apply(a, b, self.casts, self._name(op))

    def addmm(self, c, a, b, beta=1, alpha=1):
        self._check("addmm", c, a, b)
        if beta != 1 or alpha != 1 or c.numel() != b.shape[-1] or a.dim() != 2 or b.dim() != 2:
            raise Error("addmm: emulate takes a bias row (n values) and beta = alpha = 1")
        return RecipeLinear.apply(a, b.t(), c, self.casts, self._name("addmm"))


class _Mode(TorchFunctionMode):
    def __init__(self, em: emulate):
        super().__init__()
        self.em = em

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.em.exact_ops and func in EXACT_OPS:
            return EXACT_OPS[func](*args, **kwargs)
        if func in LINEAR:
            return self.em.linear(*args, **kwargs)
        if func in MATMUL:
            return self.em.matmul(_name_of(func).split(".")[-1].strip("_"), *args)
        if func in RMATMUL:
            return self.em.matmul("matmul", args[1], args[0])
        if func in ADDMM:
            return self.em.addmm(*args, **kwargs)
        if func in UNEMULATED:
            raise Error(f"{_name_of(func)} is not emulated yet (emulate computes linear, matmul, mm, addmm "
                        f"and bmm); run it outside emulate")
        if func is torch.Tensor.backward or func is torch.autograd.backward:
            self.em._backward_seen = True
        return func(*args, **kwargs)
