"""F.scaled_dot_product_attention under fmtcheck.torch.emulate. Its math path (fp32 and tf32 recipes,
or torch's math backend chosen) against torch's own math backend
(SDPBackend.MATH) in float32, on data where every product is exact in any order: integer queries and
keys (the scale's square root a power of two), and values with one nonzero power of two per column,
so each output is one probability times it and checks the whole probability matrix's layout. The
backward runs on equal scores along each row, so the probabilities are 1, 1/2 or 1/4 and every
gradient product is exact too. Masks (bool, float, causal), grouped heads, dropout, a negative scale;
the casts' names under a module. The fused kernel's model (recipes with an activation format): its
layout against torch in float64 to the format's rounding, masked rows, dropout, names; that its
arithmetic is the GPU's is test_gpu_captures.py's proof (the H200's attention, bit for bit)."""

import math

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


def test_the_math_path_casts_are_named_by_the_module_path():
    """Under bf16 with torch's math backend chosen, the math path: its two products' casts."""
    model = Block()
    q, k, v = torch.randn(B, H, L, E), torch.randn(B, H, S, E), torch.randn(B, H, S, E)
    with sdpa_kernel(SDPBackend.MATH), ft.emulate("bf16", "hopper", model=model) as em:
        model(q, k, v)
    assert em.summary["attn.sdpa.scores:output"]["values"] == B * H * L * S
    assert em.summary["attn.sdpa.output:output"]["values"] == B * H * L * E


def test_the_fused_kernels_casts_are_named_by_the_module_path():
    model = Block()
    q, k, v = (torch.randn(B, H, n, E, requires_grad=True) for n in (L, S, S))
    with ft.emulate("bf16", "hopper", model=model) as em:
        model(q, k, v).sum().backward()
    sizes = {"query": L * E, "key": S * E, "value": S * E, "probs": L * S, "output": L * E,
             "grad_scores": L * S, "grad_query": L * E, "grad_key": S * E, "grad_value": S * E}
    assert {n: em.summary[f"attn.sdpa:{n}"]["values"] for n in sizes} == {n: B * H * v for n, v in sizes.items()}


DEAD_ROW = MASK.clone()
DEAD_ROW[1] = False  # a query that sees no key
FUSED = {k: v for k, v in CASES.items() if k != "dropout"} | {"a fully masked row": dict(attn_mask=DEAD_ROW),
                                                                "longer keys": {}}


@pytest.mark.parametrize("recipe", ["bf16", "fp16", "fp8-current"])
@pytest.mark.parametrize("case", FUSED)
def test_the_fused_kernel_is_attention_to_the_formats_rounding(recipe, case):
    """Against torch's SDPA in float64 on data of the format: every output and gradient within the
    few roundings to the format the kernel makes (bf16: 2^-8 relative), so the layout (heads, masks,
    causal rows, grouped heads, the scale) is torch's; a row with every key masked gives 0 and no
    gradient, as torch's does.
    """
    kw = FUSED[case]
    heads = 1 if kw.get("enable_gqa") else H
    g = torch.Generator().manual_seed(11)
    s = 70 if case == "longer keys" else S
    q, k, v = (torch.randn(B, h, n, E, generator=g).bfloat16().float() for h, n in ((H, L), (heads, s), (heads, s)))
    dy = torch.randn(B, H, L, E, generator=g).bfloat16().float()
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    with ft.emulate(recipe, "hopper") as em:
        got = F.scaled_dot_product_attention(*leaves, **kw)
        got.backward(dy)
    assert not math.isnan(em.summary["sdpa:probs"]["amax"])  # a masked row's numerators are 0, not NaN
    wide = [t.double().requires_grad_() for t in (q, k, v)]
    kw64 = {n: (a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a) for n, a in kw.items()}
    want = F.scaled_dot_product_attention(*wide, **kw64)
    want.backward(dy.double())
    tol = 2.0 ** -8 if recipe != "fp16" else 2.0 ** -10
    if case == "a fully masked row":
        assert torch.equal(got[:, :, 1], torch.zeros_like(got[:, :, 1])) and bool(leaves[0].grad[:, :, 1].eq(0).all())
    torch.testing.assert_close(got.double(), want, rtol=4 * tol, atol=4 * tol)
    for ours, theirs in zip(leaves, wide):
        scale = float(theirs.grad.abs().max())
        torch.testing.assert_close(ours.grad.double(), theirs.grad, rtol=8 * tol, atol=8 * tol * scale)


def test_the_fused_kernels_dropout_keeps_its_draw():
    """Dropout: torch's generator draws which probabilities stay (the GPU draws its own); the same seed
    gives the same output, dropout_p = 1 gives zeros, and the backward uses the forward's draw (the
    gradient of the sum of outputs is zero for a value whose keys were all dropped)."""
    q, k, v = torch.randn(B, H, L, E), torch.randn(B, H, S, E), torch.randn(B, H, S, E)

    def run(p, seed):
        torch.manual_seed(seed)
        vv = v.clone().requires_grad_()
        with ft.emulate("bf16", "hopper"):
            o = F.scaled_dot_product_attention(q, k, vv, dropout_p=p)
            o.sum().backward()
        return o.detach(), vv.grad

    a, b, other, none = run(0.5, 1), run(0.5, 1), run(0.5, 2), run(0.0, 1)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) and not torch.equal(a[0], other[0])
    assert not torch.equal(a[0], none[0])
    zeros = run(1.0, 1)
    assert torch.equal(zeros[0], torch.zeros_like(zeros[0])) and torch.equal(zeros[1], torch.zeros_like(zeros[1]))
