"""fmtcheck.torch.emulate on a model fmtcheck did not write: a Hugging Face GPT-2 from a config
(Conv1D layers through addmm; eager attention through batched matmul, or SDPA attention through
F.scaled_dot_product_attention) trains under bf16 and fp8-current with every GEMM emulated and
counted. Not a bit-exactness claim (torch's own softmax, layer norm and loss run as torch runs
them); that the run goes through, every layer's casts are counted, and the emulation changes the
loss from torch's own float32."""

import pytest
import torch

import fmtcheck.torch as ft
from models import gpt2

pytest.importorskip("transformers", reason="transformers is not installed")


@pytest.mark.parametrize("recipe,attention", [("bf16", "eager"), ("fp8-current", "eager"), ("bf16", "sdpa")])
def test_gpt2_trains_under_emulate(recipe, attention):
    model, batches, loss_fn = gpt2(attention=attention)
    x, y = next(batches)
    plain = float(loss_fn(model(x), y).detach())
    with ft.emulate(recipe, "hopper", model=model) as em:
        loss = loss_fn(model(x), y)
        loss.backward()
    s = em.summary
    layers = [f"model.transformer.h.{i}.{m}" for i in range(2) for m in ("attn.c_attn", "attn.c_proj", "mlp.c_fc",
                                                                      "mlp.c_proj")]
    for layer in layers + ["model.lm_head"]:
        assert s[f"{layer}:input"]["values"] > 0 and s[f"{layer}:grad_weight"]["values"] > 0, layer
    scores = "sdpa.scores" if attention == "sdpa" else "matmul"
    assert s[f"model.transformer.h.0.attn.{scores}:output"]["values"] == 8 * 4 * 32 * 32  # batch, heads, T x T
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    assert float(loss.detach()) != plain and abs(float(loss.detach()) - plain) < 0.05
    assert max(map(len, em.report().splitlines())) <= 100
