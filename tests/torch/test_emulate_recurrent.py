"""Recurrent layers (nn.RNN, nn.LSTM, nn.GRU, their cells) and torch's Python functions that compose
GEMMs (nn.MultiheadAttention's forward, F.linear_cross_entropy) under fmtcheck.torch.emulate.

The recurrent layers are held to torch's own CPU layers bit for bit under the fp32 recipe, on weights
where every GEMM rounds at most once, whatever its order: the first layer's input weights and all
biases small integers (the input's projection exact), every other weight matrix one power of two per
row (each output one exact product, plus its bias). Then a wrong gate order, direction, projection,
layer stacking or dropout placement changes bits, while the order in which torch's BLAS sums does not.
torch's oneDNN LSTM (another algorithm) is switched off for the reference: ATen's own path is the one
emulate follows. Under bf16 the same layers take the recipe's GEMMs, checked through their casts."""

import pytest
import torch

import fmtcheck.torch as ft
from exact_data import ints

F = torch.nn.functional
T, B, IN, H = 5, 3, 6, 4


def one_per_row(rows, cols, seed):
    """A weight with one nonzero per row, +-1/2, 1 or 2: each output of x.W^T is one exact product."""
    g = torch.Generator().manual_seed(seed)
    w = torch.zeros(rows, cols)
    values = torch.tensor([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])[torch.randint(0, 6, (rows,), generator=g)]
    return w.index_put_((torch.arange(rows), torch.randint(0, cols, (rows,), generator=g)), values)


def exact_weights(module):
    """Integer input weights of the first layer and integer biases; one power of two per row elsewhere."""
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            if name.startswith("bias") or name.startswith("weight_ih_l0"):
                p.copy_(ints(*p.shape, seed=100 + i, hi=2))
            else:
                p.copy_(one_per_row(*p.shape, seed=100 + i))
    return module


def run(module, args, recipe="fp32", seed=7, **emulate):
    torch.manual_seed(seed)  # dropout's draws
    if recipe is None:
        with torch.backends.mkldnn.flags(enabled=False, allow_tf32=None):
            return module(*args)
    with ft.emulate(recipe, "hopper", **emulate):
        return module(*args)


def tensors(out):
    """A layer's results as a list: (output, h) or (output, (h, c)) or a cell's h or (h, c)."""
    return [t for t in (out if isinstance(out, tuple) else (out,)) for t in (t if isinstance(t, tuple) else (t,))]


def flat(out):
    return torch.cat([t.reshape(-1) for t in tensors(out)])


LAYERS = {
    "lstm": lambda: torch.nn.LSTM(IN, H),
    "lstm 2 layers bidirectional dropout": lambda: torch.nn.LSTM(IN, H, num_layers=2, bidirectional=True, dropout=0.5),
    "lstm projection batch_first": lambda: torch.nn.LSTM(IN, H, num_layers=2, proj_size=3, batch_first=True),
    "lstm no bias": lambda: torch.nn.LSTM(IN, H, bias=False, bidirectional=True),
    "gru 2 layers bidirectional": lambda: torch.nn.GRU(IN, H, num_layers=2, bidirectional=True),
    "gru dropout": lambda: torch.nn.GRU(IN, H, num_layers=3, dropout=0.5),
    "rnn tanh": lambda: torch.nn.RNN(IN, H, num_layers=2),
    "rnn relu bidirectional": lambda: torch.nn.RNN(IN, H, nonlinearity="relu", bidirectional=True),
}


def inputs(module, seed=1):
    batch_first = getattr(module, "batch_first", False)
    x = ints(B, T, IN, seed=seed, hi=2) if batch_first else ints(T, B, IN, seed=seed, hi=2)
    if isinstance(module, torch.nn.LSTM):
        d = 2 if module.bidirectional else 1
        h_out = module.proj_size or H
        return x, (ints(module.num_layers * d, B, h_out, seed=seed + 1, hi=1),
                   ints(module.num_layers * d, B, H, seed=seed + 2, hi=1))
    return (x,)


@pytest.mark.parametrize("layer", LAYERS)
def test_recurrent_layer_is_torchs_under_fp32(layer):
    """Output, final hidden (and cell) states bit for bit; the gradients as torch's to float32
    rounding (their sums run in BLAS order), so their layout is torch's."""
    module = exact_weights(LAYERS[layer]()).train()
    args = inputs(module)
    want, got = run(module, args, None), run(module, args)
    assert torch.equal(flat(got), flat(want)), layer
    dy = [ints(*t.shape, seed=50 + i, hi=1) for i, t in enumerate(tensors(want))]
    wrt = [args[0], *module.parameters()]
    for w, g in zip(torch.autograd.grad(tensors(want), wrt, dy), torch.autograd.grad(tensors(got), wrt, dy)):
        assert torch.allclose(g, w, rtol=1e-5, atol=1e-5)


CELLS = {
    "lstm_cell": lambda: torch.nn.LSTMCell(IN, H),
    "gru_cell": lambda: torch.nn.GRUCell(IN, H),
    "rnn_tanh_cell": lambda: torch.nn.RNNCell(IN, H),
    "rnn_relu_cell no bias": lambda: torch.nn.RNNCell(IN, H, bias=False, nonlinearity="relu"),
}


@pytest.mark.parametrize("name", CELLS)
def test_cell_is_torchs_under_fp32(name):
    """Three steps of the cell, the hidden state carried: bit for bit."""
    cell = exact_weights(CELLS[name]())
    xs = ints(3, B, IN, seed=3, hi=2)
    hidden = (ints(B, H, seed=4, hi=1), ints(B, H, seed=5, hi=1)) if name == "lstm_cell" else ints(B, H, seed=4, hi=1)

    def steps():
        h = hidden
        for x in xs:
            h = cell(x, h)
        return h

    want = run(lambda: steps(), (), None)
    got = run(lambda: steps(), ())
    assert torch.equal(flat(got), flat(want))


def test_lstm_under_bf16_takes_the_recipes_gemms():
    """Each GEMM is the recipe's: cast and named per layer, direction and step; the result differs
    from float32 and the first step's hidden state is the recipe's F.linear composed by hand."""
    model = torch.nn.Sequential(torch.nn.LSTM(IN, H, bidirectional=True))
    x = torch.randn(T, B, IN)
    with ft.emulate("bf16", "hopper", model=model) as em:
        out, (h, c) = model(x)
    for d in ("l0", "l0_reverse"):
        assert em.summary[f"0.lstm.ih_{d}:input"]["values"] == T * B * IN
        steps = {n for n in em.summary if n.split("#")[0].split(":")[0] == f"0.lstm.hh_{d}" and n.endswith(":input")}
        assert steps == {f"0.lstm.hh_{d}:input"} | {f"0.lstm.hh_{d}#{s}:input" for s in range(1, T)}
    lstm = model[0]
    with ft.emulate("bf16", "hopper"):
        ih, hh = F.linear(x[0], lstm.weight_ih_l0, lstm.bias_ih_l0), F.linear(torch.zeros(B, H), lstm.weight_hh_l0,
                                                                            lstm.bias_hh_l0)
    i, f, g, o = (ih + hh).chunk(4, -1)  # the gates in float32, as the recurrent layers compute them
    first = o.sigmoid() * (i.sigmoid() * g.tanh()).tanh()
    assert torch.equal(out[0, :, :H], first)
    assert not torch.equal(out, model(x)[0])


def test_packed_sequence_is_unsupported():
    lstm = torch.nn.LSTM(IN, H)
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.randn(T, 2, IN), [T, 3])
    with ft.emulate("bf16", "hopper"), pytest.raises(ft.Error, match="lstm of a packed sequence") as e:
        lstm(packed)
    assert "\n" not in str(e.value)
    with ft.emulate("bf16", "hopper", unsupported="warn"), pytest.warns(UserWarning, match="result is torch's"):
        assert lstm(packed)[0].data.shape == (T + 3, H)


def mha_inputs(seed):
    return [torch.randn(4, 2, 8, generator=torch.Generator().manual_seed(seed + i)) for i in range(3)]


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_takes_the_recipes_gemms(need_weights):
    """nn.MultiheadAttention's forward (torch's Python) runs with every product inside emulated: its
    input and output projections, and the scores and weighted values (bmm, or without weights SDPA's
    fused kernel).
    Under fp32 the result is torch's to float32 rounding; under bf16 it differs, by bf16's rounding."""
    model = torch.nn.Sequential()
    model.add_module("attn", torch.nn.MultiheadAttention(8, 2))
    q, k, v = mha_inputs(1)
    want = model.attn(q, k, v, need_weights=need_weights)[0]
    with ft.emulate("fp32", "hopper", model=model):
        fp32 = model.attn(q, k, v, need_weights=need_weights)[0]
    assert torch.allclose(fp32, want, rtol=1e-5, atol=1e-6)
    with ft.emulate("bf16", "hopper", model=model) as em:
        got = model.attn(q, k, v, need_weights=need_weights)[0]
    casts = ("attn.bmm:output", "attn.bmm#1:output") if need_weights else ("attn.sdpa:probs", "attn.sdpa:output")
    assert {"attn:input", "attn#1:input", *casts} <= set(em.summary)
    assert not torch.equal(got, want) and torch.allclose(got, want, rtol=0.05, atol=0.02)


def test_transformer_encoder_layer_in_eval_is_emulated():
    """In eval mode without gradients nn.TransformerEncoderLayer would take torch's fused fast path;
    under emulate it runs the module's Python, every GEMM counted (attention's four, the MLP's two)."""
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16).eval()
    model = torch.nn.Sequential(layer)
    with torch.no_grad(), ft.emulate("bf16", "hopper", model=model) as em:
        model(torch.randn(4, 2, 8))
    assert {"0.self_attn:input", "0.self_attn#1:input", "0.linear1:input", "0.linear2:input"} <= set(em.summary)


def test_linear_cross_entropy_is_the_emulated_linear_then_the_loss():
    x, w, target = torch.randn(6, 8), torch.randn(10, 8), torch.tensor([1, 2, 3, 4, 5, 9])
    with ft.emulate("bf16", "hopper") as em:
        fused = F.linear_cross_entropy(x, w, target)
    with ft.emulate("bf16", "hopper"):
        composed = F.cross_entropy(F.linear(x, w), target)
    assert torch.equal(fused, composed) and "linear:input" in em.summary
    assert not torch.equal(fused, F.cross_entropy(x @ w.t(), target))


def test_cdist_is_not_emulated():
    with ft.emulate("bf16", "hopper"), pytest.raises(ft.Error, match="cdist is not emulated"):
        torch.cdist(torch.randn(30, 8), torch.randn(40, 8))

