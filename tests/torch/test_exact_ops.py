"""fmtcheck.torch's fixed-order float32 ops (softmax, layer_norm, cross_entropy) against two
independent references: a numpy loop written from the documented order (each sum in order from +0,
exp through float64 rounded once to float32: correct rounding but for double-rounding cases, which
these seeded inputs do not hit) for the bits, and torch's own kernels, to a float32 tolerance, for
the semantics (shapes, dims, masks, ignore_index, every gradient). Their bit-exactness inside a
training run is proven against fmtcheck train (test_emulate_train.py)."""

import numpy as np
import pytest
import torch

import fmtcheck.torch as ft

F = torch.nn.functional
f32 = np.float32


def rand(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).requires_grad_()


def softmax_rows_numpy(x):
    out = np.empty_like(x)
    for r, row in enumerate(x):
        top = row.max()
        e = np.array([f32(np.exp(np.float64(f32(v - top)))) for v in row], dtype=f32)
        s = f32(0)
        for v in e:
            s = f32(s + v)
        out[r] = e / s
    return out


def test_softmax_bits_and_gradient():
    x = rand(3, 5, 7, seed=1)
    mask = torch.triu(torch.ones(7, 7, dtype=torch.bool), 1)[:5]
    xm = x.masked_fill(mask, float("-inf"))
    p = ft.softmax(xm, dim=-1)
    want = softmax_rows_numpy(xm.detach().numpy().reshape(-1, 7)).reshape(p.shape)
    assert np.array_equal(p.detach().numpy(), want)
    assert bool((p[:, mask] == 0).all())
    g = rand(3, 5, 7, seed=2).detach()
    (p * g).sum().backward()
    mine = x.grad.clone()
    x.grad = None
    (torch.softmax(x.masked_fill(mask, float("-inf")), -1) * g).sum().backward()
    torch.testing.assert_close(mine, x.grad, rtol=1e-5, atol=1e-6)


def test_softmax_over_another_dim():
    x = rand(4, 6, seed=3)
    torch.testing.assert_close(ft.softmax(x, dim=0), torch.softmax(x, 0), rtol=1e-6, atol=1e-7)


def test_layer_norm_bits_and_gradients():
    x, w, b = rand(6, 2, 4, seed=4), rand(2, 4, seed=5), rand(2, 4, seed=6)
    y = ft.layer_norm(x, (2, 4), w, b, eps=1e-5)
    v = x.detach().numpy().reshape(6, 8)
    gamma, beta = w.detach().numpy().reshape(-1), b.detach().numpy().reshape(-1)
    for r in range(6):
        s = f32(0)
        for c in range(8):
            s = f32(s + v[r, c])
        mean = f32(s / f32(8))
        q = f32(0)
        for c in range(8):
            q = f32(q + f32(f32(v[r, c] - mean) * f32(v[r, c] - mean)))
        rstd = f32(f32(1) / f32(np.sqrt(f32(f32(q / f32(8)) + f32(1e-5)))))
        want = np.array([f32(f32(f32(f32(v[r, c] - mean) * rstd) * gamma[c]) + beta[c]) for c in range(8)], dtype=f32)
        assert np.array_equal(y.detach().numpy().reshape(6, 8)[r], want), r
    g = rand(6, 2, 4, seed=7).detach()
    (y * g).sum().backward()
    mine = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    (F.layer_norm(x, (2, 4), w, b, eps=1e-5) * g).sum().backward()
    for m, t in zip(mine, (x, w, b)):
        torch.testing.assert_close(m, t.grad, rtol=1e-5, atol=1e-5)


def test_layer_norm_without_affine():
    x = rand(5, 8, seed=8)
    torch.testing.assert_close(ft.layer_norm(x, 8), F.layer_norm(x, (8,)), rtol=1e-5, atol=1e-6)


def test_cross_entropy_leaves_ignored_rows_out_as_torch():
    logits, labels = rand(6, 5, seed=9), torch.tensor([0, -100, 4, 2, -100, 1])
    loss = ft.cross_entropy(logits, labels)
    loss.backward()
    mine = logits.grad.clone()
    logits.grad = None
    F.cross_entropy(logits, labels).backward()
    torch.testing.assert_close(loss, F.cross_entropy(logits, labels), rtol=1e-6, atol=0)
    torch.testing.assert_close(mine, logits.grad, rtol=1e-6, atol=1e-7)
    assert bool((mine[1] == 0).all() and (mine[4] == 0).all())


@pytest.mark.parametrize("call,message", [
    (lambda: ft.softmax(torch.ones(2, 3, dtype=torch.float64)), "float32"),
    (lambda: ft.layer_norm(torch.ones(2, 3), 4), r"layer_norm over \(4,\)"),
    (lambda: ft.layer_norm(torch.ones(2, 3), 3, torch.ones(4)), "weight has shape"),
    (lambda: ft.cross_entropy(torch.ones(2, 3), torch.tensor([0, 1]), label_smoothing=0.1), "reduction='mean'"),
    (lambda: ft.cross_entropy(torch.ones(2, 3), torch.tensor([0, 3])), "out of range"),
])
def test_bad_input_is_one_error(call, message):
    with pytest.raises(ft.Error, match=message):
        call()


def test_emulate_routes_torchs_calls_only_when_asked():
    """Under emulate(exact_ops=True) nn.LayerNorm, F.softmax, Tensor.softmax and F.cross_entropy
    give the exact ops' bits; without it, torch's (they differ on these inputs)."""
    x = rand(16, 33, seed=10)
    norm = torch.nn.LayerNorm(33)
    calls = {"layer_norm": lambda: norm(x), "F.softmax": lambda: F.softmax(x, dim=-1),
             "Tensor.softmax": lambda: x.softmax(-1),
             "cross_entropy": lambda: F.cross_entropy(x, torch.arange(16) % 33)}
    exact = {"layer_norm": lambda: ft.layer_norm(x, 33, norm.weight, norm.bias), "F.softmax": lambda: ft.softmax(x),
             "Tensor.softmax": lambda: ft.softmax(x), "cross_entropy": lambda: ft.cross_entropy(x, torch.arange(16) % 33)}
    differs = 0
    for name, call in calls.items():
        with ft.emulate("fp32", exact_ops=True):
            routed = call()
        with ft.emulate("fp32"):
            plain = call()
        assert torch.equal(routed, exact[name]()), name
        differs += not torch.equal(plain, routed)
    assert differs >= 1, "torch's kernels gave the exact ops' bits everywhere: the routing is not shown"
