"""F.scaled_dot_product_attention under fmtcheck.torch.emulate against torch's own math backend
(SDPBackend.MATH) in float32, on data where every product is exact in any order: integer queries and
keys (the scale's square root a power of two), and values with one nonzero power of two per column,
so each output is one probability times it and checks the whole probability matrix's layout. The
backward runs on equal scores along each row, so the probabilities are 1, 1/2 or 1/4 and every
gradient product is exact too. Masks (bool, float, causal), grouped heads, dropout, a negative scale;
the casts' names under a module."""

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import fmtcheck.torch as ft
from exact_data import ints

F = torch.nn.functional
B, H, L, S, E = 2, 2, 4, 4, 16


def one_hot_values(seed, columns=6):
    g = torch.Generator().manual_seed(seed)
    v = torch.zeros(B, H, S, columns)
    rows = torch.randint(0, S, (B, H, 1, columns), generator=g)
    signs = torch.tensor([-2.0, -1.0, 1.0, 2.0])[torch.randint(0, 4, (B, H, 1, columns), generator=g)]
    return v.scatter_(-2, rows, signs).requires_grad_()


MASK = torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [0, 1, 0, 1]], dtype=torch.bool)  # 1, 2, 4 kept
CASES = {
    "no mask": {},
    "causal": dict(is_causal=True),
    "bool mask": dict(attn_mask=MASK),
    "float mask": dict(attn_mask=torch.where(MASK, 0.5, -3.0)),
    "negative scale": dict(scale=-1 / 64),
    "grouped heads": dict(enable_gqa=True),
    "dropout": dict(dropout_p=0.5, is_causal=True),
}


def torch_math(q, k, v, **kw):
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v, **kw)


def emulated(q, k, v, **kw):
    with ft.emulate("fp32", "hopper"):
        return F.scaled_dot_product_attention(q, k, v, **kw)


@pytest.mark.parametrize("case", CASES)
def test_sdpa_forward_against_torch_math(case):
    kw = CASES[case]
    heads = 1 if kw.get("enable_gqa") else H
    q, k, v = ints(B, H, L, E, seed=1, hi=2), ints(B, heads, S, E, seed=2, hi=2), one_hot_values(3)
    if heads == 1:
        v = v[:, :1].detach()
    torch.manual_seed(7)
    want = torch_math(q, k, v, **kw)
    torch.manual_seed(7)
    got = emulated(q, k, v, **kw)
    assert torch.equal(got, want)
    assert want.abs().gt(0).logical_and(want.abs().log2().frac().ne(0)).any()  # not only powers of two


def test_sdpa_backward_against_torch_math():
    # Queries zero in their last half and keys equal along the sequence in their first: equal scores
    # in each row, yet keys that differ (so the queries' gradient is not zero).
    q = (ints(B, H, L, E, seed=4, hi=2) * (torch.arange(E) < E // 2)).detach().requires_grad_()
    k = ints(B, H, S, E, seed=5, hi=2).detach()
    k[..., :E // 2] = k[..., :1, :E // 2]
    k.requires_grad_()
    v, dy = ints(B, H, S, 5, seed=6, hi=3), ints(B, H, L, 5, seed=7, hi=2)
    want = torch.autograd.grad(torch_math(q, k, v, attn_mask=MASK), (q, k, v), dy)
    got = torch.autograd.grad(emulated(q, k, v, attn_mask=MASK), (q, k, v), dy)
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    assert all(w.ne(0).any() for w in want)


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()

    def forward(self, q, k, v):
        return self.attn(q, k, v)


def test_sdpa_casts_are_named_by_the_module_path():
    model = Block()
    q, k, v = torch.randn(B, H, L, E), torch.randn(B, H, S, E), torch.randn(B, H, S, E)
    with ft.emulate("bf16", "hopper", model=model) as em:
        model(q, k, v)
    assert em.summary["attn.sdpa.scores:output"]["values"] == B * H * L * S
    assert em.summary["attn.sdpa.output:output"]["values"] == B * H * L * E
