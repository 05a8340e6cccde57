"""fmtcheck.torch.emulate on models fmtcheck did not write: a Hugging Face GPT-2 from a config
(Conv1D layers through addmm; eager attention through batched matmul, or SDPA attention through
F.scaled_dot_product_attention) trains under bf16 and fp8-current with every GEMM emulated and
counted, and so do small models of seven other families (BERT, Llama, BLOOM, T5, Whisper, ViT,
ResNet). Not a bit-exactness claim (torch's own softmax, layer norm and loss run as torch runs
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
    scores = "sdpa:probs" if attention == "sdpa" else "matmul:output"  # SDPA: the fused kernel's
    assert s[f"model.transformer.h.0.attn.{scores}"]["values"] == 8 * 4 * 32 * 32  # batch, heads, T x T
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    assert float(loss.detach()) != plain and abs(float(loss.detach()) - plain) < 0.05
    assert max(map(len, em.report().splitlines())) <= 100


def _families():
    import transformers as tr
    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, vocab_size=100)
    tokens = dict(input_ids=torch.randint(0, 100, (2, 7), generator=torch.Generator().manual_seed(0)))
    text = dict(tokens, labels=tokens["input_ids"])
    return {  # config, model class, inputs
        "bert": (tr.BertConfig(**small), tr.BertForMaskedLM, text),
        "llama": (tr.LlamaConfig(**small, num_key_value_heads=1), tr.LlamaForCausalLM, text),
        "bloom": (tr.BloomConfig(hidden_size=32, n_layer=2, n_head=2, vocab_size=100), tr.BloomForCausalLM, text),
        "t5": (tr.T5Config(d_model=32, d_ff=64, num_layers=2, num_heads=2, d_kv=16, vocab_size=100,
                           decoder_start_token_id=0, pad_token_id=0), tr.T5ForConditionalGeneration, text),
        "whisper": (tr.WhisperConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                     vocab_size=100, num_mel_bins=8, max_source_positions=16, pad_token_id=0,
                                     bos_token_id=1, eos_token_id=2, decoder_start_token_id=1),
                    tr.WhisperForConditionalGeneration,
                    dict(input_features=torch.randn(2, 8, 32), decoder_input_ids=tokens["input_ids"],
                         labels=tokens["input_ids"])),
        "vit": (tr.ViTConfig(**{k: v for k, v in small.items() if k != "vocab_size"}, image_size=16, patch_size=4),
                tr.ViTForImageClassification,
                dict(pixel_values=torch.randn(2, 3, 16, 16), labels=torch.tensor([0, 1]))),
        "resnet": (tr.ResNetConfig(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], embedding_size=8, num_labels=3),
                   tr.ResNetForImageClassification,
                   dict(pixel_values=torch.randn(2, 3, 32, 32), labels=torch.tensor([0, 2]))),
    }


FAMILIES = ["bert", "llama", "bloom", "t5", "whisper", "vit", "resnet"]


@pytest.mark.parametrize("family", FAMILIES)
def test_hugging_face_families_train_with_every_layer_counted(family):
    """A training step of small models of other families (encoder, decoder, encoder-decoder, speech,
    vision, convolutional; BLOOM's baddbmm by keyword, T5 without scaling, Whisper's convolutions)
    under bf16: no GEMM-bearing call is refused, and every linear and convolution layer that took
    part (its weight has a gradient) has its forward and weight-gradient casts counted."""
    import transformers as tr
    config, cls, inputs = _families()[family]
    torch.manual_seed(0)
    model = cls(config).train()
    with ft.emulate("bf16", "hopper", model=model) as em:
        model(**inputs).loss.backward()
    kinds = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, tr.pytorch_utils.Conv1D)
    layers = [p for p, m in model.named_modules() if isinstance(m, kinds) and m.weight.grad is not None]
    assert len(layers) >= 4
    for layer in layers:
        assert em.summary[f"{layer}:input"]["values"] > 0 and em.summary[f"{layer}:grad_weight"]["values"] > 0, layer


class _Checkpointed(torch.nn.Module):
    """Two layers with GELU between, the first (and the GELU) recomputed in backward when asked."""

    def __init__(self, reentrant=None):
        super().__init__()
        self.a, self.b, self.reentrant = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8), reentrant

    def forward(self, x):
        first = lambda t: torch.nn.functional.gelu(self.a(t))  # noqa: E731
        if self.reentrant is None:
            return self.b(first(x))
        return self.b(torch.utils.checkpoint.checkpoint(first, x, use_reentrant=self.reentrant))


def _gradients(model, x, recipe, steps=2):
    """Each step's parameter gradients under emulate (delayed scaling's history runs across steps)."""
    out = []
    with ft.emulate(recipe, "hopper", model=model):
        for _ in range(steps):
            model.zero_grad()
            model(x).square().sum().backward()
            out.append([p.grad.clone() for p in model.parameters()])
    return out


@pytest.mark.parametrize("recipe", ["bf16", "fp8-current", "fp8-delayed"])
@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpointing_recomputes_under_the_recipe(recipe, reentrant):
    """Gradient checkpointing recomputes its forward inside the backward pass, where torch turns the
    mode off: emulate keeps it on there, so the recomputed activations are the recipe's and the
    gradients equal the run without checkpointing, bit for bit (torch's float32 recompute differs)."""
    torch.manual_seed(0)
    plain, checkpointed = _Checkpointed(), _Checkpointed(reentrant)
    checkpointed.load_state_dict(plain.state_dict())
    x = torch.randn(4, 16, requires_grad=reentrant)  # the reentrant form needs an input with a gradient
    for want, got in zip(_gradients(plain, x, recipe), _gradients(checkpointed, x, recipe)):
        assert all(torch.equal(w, g) for w, g in zip(want, got))


def test_hugging_face_gradient_checkpointing_is_emulated():
    config, cls, inputs = _families()["llama"]
    torch.manual_seed(0)
    plain = cls(config).train()
    checkpointed = cls(config).train()
    checkpointed.load_state_dict(plain.state_dict())
    checkpointed.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    grads, recomputed = [], []
    for model in (plain, checkpointed):
        with ft.emulate("bf16", "hopper", model=model) as em:
            model(**inputs).loss.backward()
        grads.append([p.grad for p in model.parameters()])
        recomputed.append([n for n in em.summary if n.startswith("model.layers.0.mlp.up_proj#1:")])
    assert all(torch.equal(w, g) for w, g in zip(*grads))
    assert not recomputed[0] and recomputed[1]  # the checkpointed layers' casts again, in backward


def test_a_torch_that_cannot_redispatch_is_told(monkeypatch):
    """Before torch.overrides.redispatch_function, emulate cannot keep its mode on inside torch's own
    Python functions or the backward pass: it says so when made, and refuses MultiheadAttention."""
    monkeypatch.delattr(torch.overrides, "redispatch_function")
    with pytest.warns(UserWarning, match="checkpointed forward is recomputed in backward by torch"):
        em = ft.emulate("bf16", "hopper")
    attention = torch.nn.MultiheadAttention(4, 2)
    x = torch.randn(3, 2, 4)
    with em, pytest.raises(ft.Error, match="multi_head_attention_forward is not emulated by a torch without"):
        attention(x, x, x)
