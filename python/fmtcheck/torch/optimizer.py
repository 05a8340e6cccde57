"""fmtcheck.torch.Optimizer: a recipe's optimizer as `fmtcheck train` runs it, in place of torch's, so
that the pure low-precision recipes train a torch model as they would on the GPU: weights and
gradients stored in bf16 or fp16 (no float32 master), the update rounded to nearest, stochastically
from the library's seeded stream (the same bits on every machine), or Kahan-compensated, and the
optimizer states in float32 or the recipe's format. Under the other recipes it is torch's SGD or
Adam on float32 masters, one float32 operation per step of the formula (torch's CPU SGD fuses
p + (-lr)·buf into one FMA; train does not). Every rounding happens in the library
(fmtcheck/train/optimizer.hpp)."""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

import numpy as np
import torch

from fmtcheck import _core

from .errors import Error


class Optimizer(torch.optim.Optimizer):
    """`recipe`'s weight storage with `optimizer` ("sgd": momentum, no dampening or weight decay;
    "adam": no weight decay or amsgrad)::

        opt = fmtcheck.torch.Optimizer(model.named_parameters(), recipe="bf16-pure-sr")
        with fmtcheck.torch.emulate("bf16-pure-sr", "hopper", model=model):
            ...; loss.backward(); opt.step(); opt.zero_grad()
        print(opt.lost)   # per parameter: updates that left the stored weight unchanged

    `params`: parameters or (name, parameter) pairs, float32 CPU tensors; their order fixes the
    stochastic stream's positions (train's: parameter after parameter). Construction rounds the
    weights to the recipe's format; each step rounds the gradients to it first. Works under
    torch.amp.GradScaler (its unscale_ and skip run before this step). `lr`: train's defaults,
    0.05 for SGD and 0.001 for Adam."""

    def __init__(self, params: Iterable, recipe: str = "fp32", optimizer: str = "sgd", lr: Optional[float] = None,
                 momentum: float = 0.9, betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 sr_bits: int = 16, sr_seed: int = 0):
        items = list(params)
        named = [(n, p) if isinstance(n, str) else (str(i), p) for i, (n, p) in
                 enumerate(x if isinstance(x, tuple) else (None, x) for x in items)]
        if not named:
            raise Error("Optimizer: no parameters given")
        for n, p in named:
            if not isinstance(p, torch.Tensor) or p.dtype != torch.float32 or p.device.type != "cpu":
                raise Error(f"Optimizer: parameter {n} must be a float32 CPU tensor")
        lr = lr if lr is not None else 0.05 if optimizer == "sgd" else 1e-3
        super().__init__([p for _, p in named], {"lr": lr})
        self.names = [n for n, _ in named]
        try:
            self._core = _core.RecipeOptimizer(recipe, optimizer, lr, momentum, betas[0], betas[1], eps, sr_bits,
                                               sr_seed, self.names, [p.numel() for _, p in named])
        except ValueError as e:
            raise Error(str(e)) from None
        self.weights = self._core.weights  # "bf16", "fp16" or None (float32 masters)
        self.lost: List[Tuple[str, int, int]] = []  # the last step's (name, nonzero updates, lost)
        with torch.no_grad():
            for _, p in named:
                p.copy_(self._stored(p))

    def _stored(self, t: torch.Tensor) -> torch.Tensor:
        flat = np.ascontiguousarray(t.detach().numpy().reshape(-1))
        return torch.from_numpy(self._core.stored(flat)).reshape(t.shape)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        params = [p for g in self.param_groups for p in g["params"]]
        for n, p in zip(self.names, params):
            if p.grad is None:
                raise Error(f"Optimizer: parameter {n} has no gradient (pass only the parameters you train)")
        values = [np.ascontiguousarray(p.detach().numpy().reshape(-1)) for p in params]
        grads = [self._stored(p.grad).numpy().reshape(-1) for p in params]
        new, self.lost = self._core.step(values, grads)
        for p, v in zip(params, new):
            p.copy_(torch.from_numpy(v).reshape(p.shape))
        return loss
