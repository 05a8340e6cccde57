"""einsum, tensordot, inner, mv, dot, vdot, vector and broadcast matmul, baddbmm, addbmm, addmv, addr
and addmm with beta and alpha under fmtcheck.torch.emulate, against torch's own ops in float64 on
integer data: each product is exact in float32, so emulate's result is bf16 of torch's product (the
recipe's one rounding, by torch's cast), combined with beta and alpha by torch. The gradients'
products are kept below 256 (exact in bf16), so they are torch's: their layout is what is checked."""

import pytest
import torch

import fmtcheck.torch as ft
from conftest import assert_one_error
from exact_data import bf16, grads, ints

EINSUM = {  # equation, operand shapes
    "bhqd,bhkd->bhqk": ((2, 2, 3, 20), (2, 2, 4, 20)),  # attention scores: batched
    "bld,dh->blh": ((2, 3, 20), (20, 5)),  # a layer's product: the right operand as a weight
    "ij,kj": ((3, 20), (4, 20)),  # implicit output
    "...ij,...jk->...ik": ((2, 1, 3, 20), (3, 20, 2)),  # ellipsis, broadcast batch
    "bij,bkj->kbi": ((1, 3, 20), (2, 4, 20)),  # output permuted, batch of 1 broadcast
    "i,j->ij": ((3,), (4,)),  # outer product: k = 1
}


def check(f, inputs, seed):
    """f under emulate: its value bf16(torch's) and its gradients torch's (their products exact)."""
    with ft.emulate("bf16", "hopper"):
        y = f(*inputs)
    dy = ints(*y.shape, seed=seed, hi=1)
    want, gs = grads(f, inputs, dy)
    y.backward(dy)
    assert y.shape == want.shape and torch.equal(y, bf16(want))
    for t, g in zip(inputs, gs):
        assert torch.equal(t.grad, g)  # dy in {-1, 0, 1}, operands below 21, at most 12 terms: below 256


@pytest.mark.parametrize("equation", EINSUM)
def test_einsum_against_torch(equation):
    a, b = (ints(*s, seed=i, hi=20) for i, s in enumerate(EINSUM[equation]))
    check(lambda p, q: torch.einsum(equation, p, q), (a, b), seed=9)


CALLS = {  # call, operand shapes
    "tensordot": (lambda a, b: torch.tensordot(a, b, dims=([1, 0], [0, 2])), ((20, 3, 4), (3, 5, 20))),
    "inner": (lambda a, b: torch.inner(a, b), ((2, 3, 20), (4, 20))),
    "mv": (lambda a, b: torch.mv(a, b), ((3, 20), (20,))),
    "dot": (lambda a, b: torch.dot(a, b), ((20,), (20,))),
    "vdot": (lambda a, b: a.vdot(b), ((20,), (20,))),
    "vector @ batch": (lambda a, b: a @ b, ((20,), (2, 20, 3))),
    "batch @ vector": (lambda a, b: torch.matmul(a, b), ((2, 3, 20), (20,))),
    "broadcast matmul": (lambda a, b: a @ b, ((2, 1, 3, 20), (4, 20, 2))),
}


@pytest.mark.parametrize("call", CALLS)
def test_products_against_torch(call):
    f, shapes = CALLS[call]
    check(f, [ints(*s, seed=i, hi=20) for i, s in enumerate(shapes)], seed=9)


SUMS = {  # call of (c, a, b), shapes of c, a, b; torch's value is beta.c + alpha.(a.b)
    "baddbmm": (lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2), ((2, 3, 4), (2, 3, 20), (2, 20, 4))),
    "addbmm": (lambda c, a, b: torch.addbmm(c, a, b, alpha=-1), ((3, 4), (2, 3, 20), (2, 20, 4))),
    "addmm full c": (lambda c, a, b: torch.addmm(c, a, b), ((3, 4), (3, 20), (20, 4))),
    "addmm beta 0": (lambda c, a, b: torch.addmm(c, a, b, beta=0, alpha=4), ((3, 4), (3, 20), (20, 4))),
    "addmv": (lambda c, a, b: torch.addmv(c, a, b, beta=2), ((3,), (3, 20), (20,))),
    "addr": (lambda c, a, b: torch.addr(c, a, b, beta=2, alpha=0.5), ((6, 7), (6,), (7,))),  # K = 1
}


@pytest.mark.parametrize("call", SUMS)
def test_scaled_sums_against_torch(call):
    f, shapes = SUMS[call]
    c, a, b = (ints(*s, seed=i, hi=20) for i, s in enumerate(shapes))
    with ft.emulate("bf16", "hopper"):
        y = f(c, a, b)
    product = bf16(f(torch.zeros_like(c), a.detach(), b.detach()))  # alpha.(a.b): alpha a power of two
    assert torch.equal(y, f(c.detach(), torch.zeros_like(a), b.detach()) + product)
    assert product.ne(f(torch.zeros_like(c), a.detach(), b.detach())).any()
    if call == "addmm beta 0":  # torch ignores C, NaN included
        with ft.emulate("bf16", "hopper"):
            assert not torch.isnan(f(torch.full_like(c, float("nan")), a, b)).any()


BAD = {
    "einsum diagonal": (lambda: torch.einsum("ii,ij->j", torch.ones(3, 3), torch.ones(3, 2)), "'ii,ij->j'.*diagonal"),
    "einsum sum within": (lambda: torch.einsum("ij,jk->k", torch.ones(2, 3), torch.ones(3, 2)), "within one operand"),
    "einsum 3 operands": (lambda: torch.einsum("ij,jk,kl->il", *[torch.ones(2, 2)] * 3), "3 operands"),
    "batch shapes": (lambda: torch.matmul(torch.ones(2, 3, 4), torch.ones(3, 4, 5)), "do not broadcast"),
    "mm of vectors": (lambda: torch.mm(torch.ones(4), torch.ones(4, 3)), "mm of shapes"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_or_unsupported_contraction_is_one_error(case):
    assert_one_error(*BAD[case])
