"""fmtcheck.torch.emulate on the elementwise ops between GEMMs (low_precision.py, dtype_flow.py): a
GEMM's output stands for a float16 or bfloat16 tensor of the GPU, and so does what an elementwise op
makes of it. Checked against torch itself:

  - which results stay low precision: torch's type promotion and the op lists of its autocast
    documentation ("CUDA Ops that can autocast to float32", "promote to the widest input type"),
    written out here from the documentation, not asked of torch as emulate asks;
  - the values: torch's own float16/bfloat16 CPU kernels on real half tensors, bit for bit, for ops
    whose result is the exact one rounded once (arithmetic, masks, clamps, ReLU: the float32 result
    rounded is the correctly rounded one, so every implementation agrees). For transcendental ops the
    GPU's kernels compute in float32 and round the result (what emulate does); torch's CPU fp16
    kernels do not (GELU differs on 4.5% of random inputs on this machine's AVX-512 build), so
    those are held to torch's float32 op followed by torch's own cast;
  - gradients through chains of such ops and in-place ops, and of a tensor several ops read (shares
    summed in the format), against torch's fp16 autograd;
  - an overflow born in an fp16 intermediate, counted where it is born."""

import contextlib
import io
import os
import runpy
from pathlib import Path

import numpy as np
import pytest
import torch

import fmtcheck.torch as ft

F = torch.nn.functional
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def layer(v):
    """v through an identity layer: a GEMM's output (exact products and sums), v rounded to the
    format (a -0 becoming +0): under emulate, a tensor that stands for a low-precision one. The
    references below start from its values."""
    return F.linear(v, torch.eye(v.shape[-1]).requires_grad_())


def half(y, recipe, grad=False):
    """y's values as torch's own tensor of the format."""
    h = y.detach().to(DTYPES[recipe])
    return h.requires_grad_() if grad else h


def values(seed=0, shape=(16, 32)):
    """Normal values over a wide range: some large enough that squares overflow fp16, some small
    enough to be fp16 subnormals."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g) * 2.0 ** torch.randint(-20, 10, shape, generator=g).float()


MASK = torch.rand(16, 32, generator=torch.Generator().manual_seed(9)) > 0.5
FLOAT32 = torch.randn(16, 32, generator=torch.Generator().manual_seed(8))

# Ops on y (standing for a low-precision tensor) whose result is low precision on the GPU: elementwise
# ops and reductions autocast leaves alone, with Python numbers or zero-dimensional float32 tensors
# (which do not widen: torch's type promotion).
STAYS_LOW = {
    "y * 0.1": lambda y: y * 0.1, "y + y": lambda y: y + y, "y - 3": lambda y: y - 3,
    "y / 7": lambda y: y / 7, "y / 0-dim float32": lambda y: y / torch.tensor(7.0), "-y": lambda y: -y,
    "y * y": lambda y: y * y, "abs": lambda y: y.abs(), "relu": F.relu, "gelu": F.gelu, "silu": F.silu,
    "tanh": torch.tanh, "sigmoid": torch.sigmoid, "masked_fill": lambda y: y.masked_fill(MASK, float("-inf")),
    "where(m, y, y)": lambda y: torch.where(MASK, y, -y), "where(m, y, 0.0)": lambda y: torch.where(MASK, y, 0.0),
    "clamp": lambda y: y.clamp(-1, 1), "maximum": lambda y: torch.maximum(y, -y), "mean": lambda y: y.mean(-1),
    "sqrt": lambda y: y.abs().sqrt(), "dropout": lambda y: F.dropout(y, 0.5), "amax": lambda y: y.amax(-1),
}
# ... and whose result is float32: ops autocast runs in float32, a dimensioned float32 operand, casts.
BECOMES_FLOAT32 = {
    "sum": lambda y: y.sum(), "softmax": lambda y: y.softmax(-1), "log_softmax": lambda y: F.log_softmax(y, -1),
    "exp": torch.exp, "pow": lambda y: y.pow(2), "y ** 2": lambda y: y ** 2, "1 / y": lambda y: 1 / y,
    "rsqrt": lambda y: y.abs().rsqrt(), "log": lambda y: y.abs().log(), "mse_loss": lambda y: F.mse_loss(y, -y),
    "layer_norm": lambda y: F.layer_norm(y, (32,)), "cumsum": lambda y: y.cumsum(-1), "norm": lambda y: y.norm(),
    "y + float32 tensor": lambda y: y + FLOAT32, "cat with float32": lambda y: torch.cat([y, FLOAT32]),
    "where(m, y, float32)": lambda y: torch.where(MASK, y, FLOAT32), ".float()": lambda y: y.float(),
    ".to(float32)": lambda y: y.to(torch.float32),
}


def low_after(recipe, op):
    with ft.emulate(recipe, "hopper") as em:
        out = op(layer(values()))
    return out in em._low


@pytest.mark.parametrize("recipe", ["fp16", "bf16"])
def test_which_results_stay_low_precision_is_autocasts(recipe):
    stays = [n for n, op in STAYS_LOW.items() if not low_after(recipe, op)]
    widens = [n for n, op in BECOMES_FLOAT32.items() if low_after(recipe, op)]
    assert stays == [] and widens == [], (stays, widens)


# Ops whose float32 result rounded to the format is the correctly rounded one (exact arithmetic on
# two format values, masks, clamps; + - * / by the double-rounding bound, float32 having 24 >= 2 x 11
# + 2 bits): torch's half kernels, however they compute, must give the same bits.
EXACTLY_ROUNDED = {n: STAYS_LOW[n] for n in ("y * 0.1", "y + y", "y - 3", "y / 7", "y / 0-dim float32", "-y",
                                             "y * y", "abs", "relu", "masked_fill", "where(m, y, y)",
                                             "where(m, y, 0.0)", "clamp", "maximum", "amax")}
EXACTLY_ROUNDED["y * y2 + y3 / y4"] = lambda y: y * y.flip(0) + y.flip(1) / (y.abs() + 1)


def bits(t):
    return t.detach().float().numpy().view(np.uint32)


@pytest.mark.parametrize("op", EXACTLY_ROUNDED)
@pytest.mark.parametrize("recipe", ["fp16", "bf16"])
def test_values_are_torchs_half_kernels(recipe, op):
    with ft.emulate(recipe, "hopper"):
        y = layer(values())
        ours = EXACTLY_ROUNDED[op](y)
    theirs = EXACTLY_ROUNDED[op](half(y, recipe))
    assert theirs.dtype == DTYPES[recipe]
    assert np.array_equal(bits(ours), bits(theirs))


@pytest.mark.parametrize("op", ["gelu", "silu", "tanh", "sigmoid", "sqrt", "mean"])
@pytest.mark.parametrize("recipe", ["fp16", "bf16"])
def test_other_values_are_the_float32_op_rounded(recipe, op):
    """As the GPU's kernels compute them: the op in float32, its result cast to the format (torch's
    own cast here, emulate's is the library's)."""
    with ft.emulate(recipe, "hopper"):
        y = layer(values(1))
        ours = STAYS_LOW[op](y)
    theirs = STAYS_LOW[op](half(y, recipe).float()).to(DTYPES[recipe])
    assert np.array_equal(bits(ours), bits(theirs))


def chain(y, y2):
    """Elementwise ops between GEMMs, each result read once: a scale, a mask, a sum of two GEMM
    outputs, a ReLU, a division, a product large enough to overflow fp16."""
    h = (y * 0.3).masked_fill(MASK, 0.0) + y2
    return (F.relu(h) / 3).masked_fill(~MASK & (h > 100), 60000.0) * 1.5


@pytest.mark.parametrize("recipe", ["fp16", "bf16"])
def test_gradients_are_torchs_half_autograd(recipe):
    """The forward's values and the gradients reaching both GEMM outputs, as the GEMMs' backward rounds
    them (torch's own cast here; loss scaled by 2^14, some fp16 gradients overflow, some underflow),
    are those of the same chain on torch's half tensors."""
    g = torch.randn(16, 32, generator=torch.Generator().manual_seed(4)) * 2.0 ** 14
    with ft.emulate(recipe, "hopper"):
        y, y2 = layer(values(2)), layer(values(3))
        y.retain_grad()
        y2.retain_grad()
        out = chain(y, y2)
        (out.float() * g).sum().backward()
    h, h2 = half(y, recipe, grad=True), half(y2, recipe, grad=True)
    theirs = chain(h, h2)
    (theirs.float() * g).sum().backward()
    assert np.array_equal(bits(out), bits(theirs))
    for ours, theirs in ((y.grad, h.grad), (y2.grad, h2.grad)):
        assert np.array_equal(bits(ours.to(DTYPES[recipe])), bits(theirs))
    if recipe == "fp16":  # the case is not vacuous: the scaled gradient overflows in the format
        assert torch.isinf(h2.grad).any() and torch.isinf(out).any()


def new_gelu(y, upcast=lambda t: t):
    """GPT-2's activation (Hugging Face's NewGELU) as written: y read by three ops, 0.5 * y in the
    format, pow (autocast's float32: `upcast` writes the cast out for torch's own half tensors) and
    a sum with a float32 tensor in float32; its gradient is the sum of three shares."""
    return 0.5 * y * (1.0 + torch.tanh(0.7978845608 * (y + 0.044715 * torch.pow(upcast(y), 3.0))))


def casts(y, upcast=None):
    """y read by two casts to float32 and an op in the format, the casts' gradients rounded."""
    return y.float() * 3 + y.to(torch.float32) / 7 + (y * 0.25).float()


@pytest.mark.parametrize("reads", [new_gelu, casts])
@pytest.mark.parametrize("recipe", ["fp16", "bf16"])
def test_a_tensor_read_by_several_ops_sums_their_gradients_in_the_format(recipe, reads):
    """Each op's share of the gradient rounded to the format and the shares summed in it, one
    rounding per addition in autograd's order: torch's half autograd, bit for bit."""
    g = torch.randn(16, 32, generator=torch.Generator().manual_seed(13)) * 64
    with ft.emulate(recipe, "hopper"):
        y = layer(values(14, (16, 32)) * 2.0 ** -8)
        y.retain_grad()
        out = reads(y)
        (out * g).sum().backward()
    h = half(y, recipe, grad=True)
    theirs = reads(h, upcast=lambda t: t.float())
    (theirs * g).sum().backward()
    assert out.dtype == torch.float32 and theirs.dtype == torch.float32
    assert np.array_equal(bits(out), bits(theirs))
    assert np.array_equal(bits(y.grad.to(DTYPES[recipe])), bits(h.grad))


def in_place(y, y2):
    """In-place ops on a GEMM's output: scale, add another, elements set from a float32 tensor beyond
    fp16's range, a ReLU (nn.ReLU(inplace=True)'s call)."""
    y.mul_(1.1)
    y += y2
    y[0, :4] = torch.tensor(70000.0)
    F.relu(y, inplace=True)
    return y


@pytest.mark.parametrize("recipe", ["fp16", "bf16"])
def test_in_place_ops_are_torchs_half_ops(recipe):
    g = torch.randn(16, 32, generator=torch.Generator().manual_seed(7))
    with ft.emulate(recipe, "hopper") as em:
        x2 = values(6).requires_grad_()
        y, y2 = layer(values(5)), layer(x2)
        h, h2 = half(y, recipe), half(y2, recipe, grad=True)
        out = in_place(y, y2)
        (out.float() * g).sum().backward()
    theirs = in_place(h * 1, h2)
    (theirs.float() * g).sum().backward()
    assert out in em._low
    assert np.array_equal(bits(out), bits(theirs)) and np.array_equal(bits(x2.grad), bits(h2.grad))
    assert bool(torch.isinf(out[0, :4]).all()) == (recipe == "fp16")


def test_an_overflow_is_counted_where_it_is_born():
    """y * y of a GEMM's output in fp16: every square of 65520 or more is inf (counted under
    mul:output); the sum after it (float32 under autocast) then is inf too. bf16 holds them all."""
    x = values(7)
    squares = x.to(torch.float16).double() ** 2
    for recipe, want in (("fp16", int((squares >= 65520).sum())), ("bf16", 0)):
        with ft.emulate(recipe, "hopper") as em:
            total = (layer(x) * layer(x)).sum()
        assert want == 0 or want > 5
        assert em.summary["mul:output"]["overflow"] == want
        assert bool(torch.isinf(total)) == (want > 0)


@pytest.mark.parametrize("recipe", ["fp32", "tf32"])
def test_recipes_without_an_activation_format_round_nothing(recipe):
    with ft.emulate(recipe, "hopper") as em:
        y = layer(values(8))
        out = F.gelu(y) * 0.1
    assert torch.equal(out, F.gelu(y.detach()) * 0.1)
    assert [n for n in em.summary if not n.startswith("linear")] == []


def test_asking_torch_leaves_its_random_numbers_and_autocast_alone():
    """The fake run that tells a result's dtype draws no random numbers: dropout under emulate keeps
    torch's own mask for the same seed (its values rounded), and autocast stays off."""
    with ft.emulate("bf16", "hopper"):
        y = layer(values(9))
        torch.manual_seed(3)
        ours = F.dropout(y, 0.3)
    torch.manual_seed(3)
    theirs = F.dropout(y.detach(), 0.3).to(torch.bfloat16)
    assert np.array_equal(bits(ours), bits(theirs))
    assert not torch.is_autocast_enabled("cuda") and not torch.is_autocast_enabled("cpu")


def test_what_fake_tensors_cannot_run_is_run_unmarked():
    """masked_select's shape depends on the data: torch cannot tell its dtype without them, so its
    result runs as torch computes it, unmarked (its values are the operand's anyway)."""
    with ft.emulate("fp16", "hopper") as em:
        y = layer(values(10))
        picked = y.masked_select(MASK)
    assert torch.equal(picked, y.detach().masked_select(MASK)) and picked not in em._low


def test_views_and_copies_keep_the_mark_without_a_rounding():
    """A view (detach, indexing) or a copy (.to(device)) holds the operand's values: marked, nothing
    counted."""
    with ft.emulate("fp16", "hopper") as em:
        y = layer(values(11))
        kept = [y.detach(), y.to("cpu"), y.diagonal(), y[::2]]
    assert all(t in em._low for t in kept)
    assert [n for n in em.summary if not n.startswith("linear")] == []


@pytest.mark.parametrize("fill", [lambda y: y.masked_fill(MASK, -1e9), lambda y: y.masked_fill_(MASK, value=1e5),
                                  lambda y: y.__setitem__(0, -7e4), lambda y: y.fill_(1e6),
                                  lambda y: y.index_fill(1, torch.tensor([3]), 7e4)])
def test_a_fill_beyond_fp16_is_refused_as_torch_refuses_it(fill):
    """torch raises on a float16 tensor filled with a number beyond its range (a -1e9 attention mask
    under fp16: the GPU run stops); so does emulate, in one line. bf16 holds it; -inf is fine."""
    with ft.emulate("fp16", "hopper"):
        y = layer(values(12))
        with pytest.raises(ft.Error, match="torch raises there") as e:
            fill(y)
        y.masked_fill(MASK, float("-inf"))
    assert "\n" not in str(e.value)
    with pytest.raises(RuntimeError, match="without overflow"):
        fill(half(y, "fp16"))
    with ft.emulate("bf16", "hopper"):
        fill(layer(values(12)))


def test_the_docs_example_of_an_overflow_between_gemms():
    """docs/examples/overflow_between_gemms.py prints what docs/pytorch.md shows, line for line: under
    fp16 the hand-written RMS norm's squares overflow (the report's first row) and every row is lost;
    bf16 loses none."""
    source = Path(os.environ.get("FMTCHECK_SOURCE_DIR", Path(__file__).resolve().parents[2]))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(source / "docs" / "examples" / "overflow_between_gemms.py"), run_name="__main__")
    text = out.getvalue()
    assert "tensor            values  overflow saturated   to zero       amax\n1.mul:output        8192      1148" \
        in text
    assert "fp16: 32 of 32 rows" in text and "bf16: 0 of 32 rows" in text
    assert max(map(len, text.splitlines())) <= 100
    doc = (source / "docs" / "pytorch.md").read_text()
    assert all(f"    {line}\n" in doc for line in text.splitlines() if line)  # the docs show this run
