"""fmtcheck.torch.Optimizer against torch's optimizers: under a float32-master recipe its SGD is torch's
SGD rule computed one float32 operation at a time (equal bits to the rule written in Python), its
Adam tracks torch.optim.Adam to float32 tolerance (torch fuses and reorders); under a pure recipe the
weights stay in the recipe's format and the lost updates are counted. Its bit-exactness under every
pure recipe, stochastic rounding included, is proven against fmtcheck train (test_emulate_train.py)."""

import pytest
import torch

import fmtcheck.torch as ft
from test_emulate_train import TrainSgd


def problem(seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(8, 5, generator=g).requires_grad_()
    x, y = torch.randn(16, 5, generator=g), torch.randn(16, 8, generator=g)
    return w, lambda: ((x @ w.t() - y) ** 2).mean()


def train(opt, w, loss, steps=5):
    for _ in range(steps):
        opt.zero_grad()
        loss().backward()
        opt.step()
    return w.detach().clone()


def test_sgd_is_torchs_rule_in_float32():
    w1, l1 = problem()
    w2, l2 = problem()
    assert torch.equal(train(ft.Optimizer([w1], lr=0.05), w1, l1), train(TrainSgd([w2], lr=0.05), w2, l2))


def test_adam_tracks_torchs_adam():
    w1, l1 = problem()
    w2, l2 = problem()
    torch.testing.assert_close(train(ft.Optimizer([w1], optimizer="adam", lr=1e-2), w1, l1),
                               train(torch.optim.Adam([w2], lr=1e-2), w2, l2), rtol=1e-5, atol=1e-6)


def test_pure_recipe_keeps_weights_in_its_format_and_counts_lost_updates():
    w, loss = problem()
    opt = ft.Optimizer([("w", w)], recipe="bf16-pure", lr=1e-4)
    after = train(opt, w, loss, steps=2)
    assert opt.weights == "bf16"
    assert torch.equal(after, after.to(torch.bfloat16).float())  # torch's own cast: already bf16
    name, nonzero, lost = opt.lost[0]
    assert name == "w" and nonzero == 40 and lost > 0  # lr 1e-4: most updates fall below half a bf16 ulp


@pytest.mark.parametrize("make,message", [
    (lambda w: ft.Optimizer([w], recipe="bf17-pure"), "unknown recipe"),
    (lambda w: ft.Optimizer([w], optimizer="lion"), "unknown optimizer"),
    (lambda w: ft.Optimizer([w.double()]), "float32 CPU tensor"),
    (lambda w: ft.Optimizer([]), "no parameters"),
])
def test_bad_input_is_one_error(make, message):
    w, _ = problem()
    with pytest.raises(ft.Error, match=message):
        make(w)


def test_a_parameter_without_gradient_is_named():
    w, _ = problem()
    with pytest.raises(ft.Error, match="parameter 0 has no gradient"):
        ft.Optimizer([w]).step()
