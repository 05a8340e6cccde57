"""torch._grouped_mm (F.grouped_mm: mixture-of-experts layers) under fmtcheck.torch.emulate, against
torch on integer data whose products and sums are exact in float32: the result is bf16 of each
group's product (the recipe's one rounding, by torch's own cast), the gradients torch's (their
products below 256, exact in bf16); torch's own _grouped_mm gives the same layout. Empty groups,
rows past the last offset, a bias per group, the 3-D form; what is refused; a Hugging Face Mixtral
training step with every expert's GEMMs counted."""

import pytest
import torch

import fmtcheck.torch as ft
from conftest import assert_one_error
from exact_data import bf16, grads, ints

G, K, N = 3, 16, 8
OFFS = torch.tensor([2, 2, 6], dtype=torch.int32)  # group 1 empty; rows 6 and 7 past the last offset


def by_group(a, b, bias=None):
    """Each group's rows times its B, in torch (the independent reference), rows past offs zero."""
    out, start = [], 0
    for g, end in enumerate(OFFS.tolist()):
        out.append(a[start:end] @ b[g] + (0 if bias is None else bias[g]))
        start = end
    return torch.cat(out + [a.new_zeros(a.shape[0] - start, b.shape[2])])


@pytest.mark.parametrize("with_bias", [False, True])
def test_grouped_rows_against_torch(with_bias):
    a, b = ints(8, K, seed=1, hi=3), ints(G, K, N, seed=2, hi=3)
    bias = ints(G, N, seed=3, hi=3) if with_bias else None
    inputs = [a, b] + ([bias] if with_bias else [])
    with ft.emulate("bf16", "hopper") as em:
        y = torch._grouped_mm(a, b, offs=OFFS, bias=bias)
    dy = ints(*y.shape, seed=4, hi=1)
    want, gs = grads(lambda *t: by_group(*t), inputs, dy)
    assert torch.equal(y, bf16(want))
    y.backward(dy)
    for t, g in zip(inputs, gs):
        assert torch.equal(t.grad, g)
    assert {"grouped_mm.group0:input", "grouped_mm.group2:weight"} <= set(em.summary)
    assert "grouped_mm.group1:input" not in em.summary  # an empty group runs no GEMM
    if not with_bias:  # torch's own kernel: the same layout (it leaves the rows past offs unwritten)
        assert torch.equal(y[:6], bf16(torch._grouped_mm(a.detach(), b.detach(), offs=OFFS)[:6]))


def test_three_dimensional_form_against_torch():
    a, b = ints(G, 4, K, seed=5, hi=3), ints(G, K, N, seed=6, hi=3)
    with ft.emulate("bf16", "hopper"):
        y = torch._grouped_mm(a, b)
    assert torch.equal(y, bf16(torch.bmm(a.detach().double(), b.detach().double()).float()))


def test_products_are_rounded_by_the_recipe():
    a, b = ints(8, K, seed=7, hi=20), ints(G, K, N, seed=8, hi=20)  # sums past bf16's 8 bits
    with ft.emulate("bf16", "hopper"):
        y = torch._grouped_mm(a, b, offs=OFFS)
    exact = by_group(a.detach().double(), b.detach().double()).float()
    assert torch.equal(y, bf16(exact)) and not torch.equal(y, exact)


BAD = {
    "two matrices": (lambda: torch._grouped_mm(torch.ones(4, 32), torch.ones(32, 8), offs=torch.tensor(
        [16, 32], dtype=torch.int32)), "emulate takes B as groups x K x N"),
    "no offs": (lambda: torch._grouped_mm(torch.ones(4, K), torch.ones(G, K, N)), "offs must hold 3"),
    "offs past A": (lambda: torch._grouped_mm(torch.ones(4, K), torch.ones(G, K, N), offs=OFFS), "within A"),
    "inner sizes": (lambda: torch._grouped_mm(torch.ones(8, 4), torch.ones(G, K, N), offs=OFFS), "expected K = 16"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_or_unsupported_grouped_mm_is_one_error(case):
    assert_one_error(*BAD[case])


def test_mixtral_trains_with_every_expert_counted():
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    torch.manual_seed(0)
    config = transformers.MixtralConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                        num_key_value_heads=1, intermediate_size=64, vocab_size=100,
                                        num_local_experts=4, num_experts_per_tok=2)
    model = transformers.MixtralForCausalLM(config).train()
    tokens = torch.randint(0, 100, (4, 16), generator=torch.Generator().manual_seed(0))
    with ft.emulate("fp8-current", "hopper", model=model) as em:
        model(input_ids=tokens, labels=tokens).loss.backward()
    experts = "model.layers.0.mlp.experts.grouped_mm"
    routed = {n.split(":")[0] for n in em.summary if n.startswith(experts) and n.endswith(":weight")}
    assert routed == {f"{experts}.group{g}{call}" for g in range(4) for call in ("", "#1")}  # up, then down
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
