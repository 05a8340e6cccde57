"""Data on which emulate's results are known without emulating: small integers, whose products and
sums float32 holds exactly in any order, so the only rounding left is the recipe's rounding to its
activation format, which torch's own cast computes independently."""

import torch


def ints(*shape, seed, hi=4):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-hi, hi + 1, shape, generator=g).float().requires_grad_()


def bf16(t):
    """torch's float32 -> bfloat16 rounding (nearest even), the independent reference."""
    return t.float().to(torch.bfloat16).float()


def exact(a, b):
    return (a.double() @ b.double()).float()  # integers well below 2^24: exact


def grads(f, inputs, dy):
    """f's value and the gradients of <f, dy> with respect to `inputs`, by torch in float64, as float32
    (exact on integer data)."""
    d = [t.detach().double().requires_grad_() for t in inputs]
    y = f(*d)
    return y.detach().float(), [g.float() for g in torch.autograd.grad(y, d, dy.double())]
