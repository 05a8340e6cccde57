"""F.cross_entropy under emulate on logits that stand for autocast ones (fmtcheck/torch/low_precision.py):
which tensors emulate takes for low-precision ones, and torch's composition of the loss around the
rounded log-probabilities. That the rounding itself is the GPU's is test_gpu_captures.py's proof (the
H200's loss gradients, bit for bit)."""
import pytest
import torch

import fmtcheck.torch as ft
from fmtcheck.torch import low_precision

F = torch.nn.functional


def logits_and_targets(shape=(6, 5), seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g) * 3
    return x, torch.randint(0, shape[1], (shape[0], *shape[2:]), generator=g)


def assert_torchs(x, target, opts):
    """low_precision.cross_entropy under fp32 (nothing to round to) and its gradient equal torch's
    F.cross_entropy to float32 rounding."""
    ours_x, theirs_x = x.clone().requires_grad_(), x.clone().requires_grad_()
    ours = low_precision.cross_entropy(ft.emulate("fp32", "hopper"), ours_x, target, **opts)
    theirs = F.cross_entropy(theirs_x, target, **opts)
    torch.testing.assert_close(ours, theirs, rtol=2e-6, atol=1e-6)
    ours.sum().backward()
    theirs.sum().backward()
    torch.testing.assert_close(ours_x.grad, theirs_x.grad, rtol=2e-6, atol=1e-6)


CASES = {
    "mean": {},
    "sum": {"reduction": "sum"},
    "none": {"reduction": "none"},
    "weight": {"weight": torch.tensor([0.5, 1.0, 2.0, 0.25, 1.5])},
    "ignore_index": {"ignore_index": 2},
    "weight and ignore_index": {"weight": torch.tensor([0.5, 1.0, 2.0, 0.25, 1.5]), "ignore_index": 2},
    "label smoothing": {"label_smoothing": 0.1},
    "label smoothing, weight, ignore_index, sum": {"label_smoothing": 0.2, "ignore_index": 1, "reduction": "sum",
                                                  "weight": torch.tensor([0.5, 1.0, 2.0, 0.25, 1.5])},
    "label smoothing, none": {"label_smoothing": 0.3, "reduction": "none", "ignore_index": 0},
    "legacy size_average": {"size_average": False},
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("shape", [(6, 5), (3, 5, 4)])
def test_the_composition_is_torchs(case, shape):
    """Without an activation format to round to (fp32's), the loss and its gradient are torch's own
    F.cross_entropy to float32 rounding: class weights, ignore_index, label smoothing, the three
    reductions, the legacy size_average, and extra dimensions after the classes."""
    assert_torchs(*logits_and_targets(shape), CASES[case])


@pytest.mark.parametrize("opts", [{}, {"label_smoothing": 0.1}, {"weight": torch.tensor([0.5, 1.0, 2.0, 0.25, 1.5])},
                                  {"reduction": "none"}, {"reduction": "sum", "label_smoothing": 0.2}])
def test_probability_targets_are_torchs(opts):
    x, _ = logits_and_targets()
    assert_torchs(x, torch.softmax(torch.randn(6, 5, generator=torch.Generator().manual_seed(1)), dim=1), opts)


def test_one_sample_without_a_batch():
    x, y = torch.randn(5), torch.tensor(3)
    ours = low_precision.cross_entropy(ft.emulate("fp32", "hopper"), x, y)
    torch.testing.assert_close(ours, F.cross_entropy(x, y))


def rounded_loss_rows(em):
    return {n for n in em.summary if n.startswith("cross_entropy")}


LOW = {"the head's output": lambda out: out,
       "a view of it": lambda out: out.view(4, 2, 5)[:, 1],
       "indexed, transposed, reshaped": lambda out: out[2:].t().contiguous().t().reshape(6, 5),
       "moved with .to(cpu)": lambda out: out.to("cpu"),
       "through .T and .mT": lambda out: out.T.mT,
       "scaled": lambda out: out * 0.5,
       "plus itself": lambda out: out + out}
FLOAT32 = {".float()": lambda out: out.float(),
           ".to(torch.float32)": lambda out: out.to(torch.float32),
           ".to(dtype=torch.float64)": lambda out: out.to(dtype=torch.float64).float(),
           ".type(torch.float32)": lambda out: out.type(torch.float32),
           "plus a float32 tensor": lambda out: out + torch.zeros(5),
           "through exp (autocast's float32)": lambda out: out.exp().log()}


def loss_under(recipe, reach, exact_ops=False):
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 5)
    x = torch.randn(8, 4)
    with ft.emulate(recipe, "hopper", exact_ops=exact_ops) as em:
        out = reach(layer(x))
        F.cross_entropy(out, torch.arange(out.shape[0]) % 5).backward()
    return em


@pytest.mark.parametrize("reach", list(LOW))
@pytest.mark.parametrize("recipe", ["bf16", "fp16", "fp8-current"])
def test_a_gemms_output_reaches_the_loss_in_low_precision(recipe, reach):
    """A GEMM's output, and what views, indexing, transposes, reshapes and elementwise arithmetic
    among such tensors and numbers make of it, would be a low-precision tensor on the GPU: the loss
    rounds its log-probabilities and its gradient to the activation format (counted as
    cross_entropy:log_probs and :grad_input)."""
    em = loss_under(recipe, LOW[reach])
    assert rounded_loss_rows(em) == {"cross_entropy:log_probs", "cross_entropy:grad_input"}
    values = 6 * 5 if reach == "indexed, transposed, reshaped" else (4 * 5 if reach == "a view of it" else 8 * 5)
    assert em.summary["cross_entropy:log_probs"]["values"] == values


@pytest.mark.parametrize("reach", list(FLOAT32))
def test_a_float32_cast_or_arithmetic_ends_low_precision(reach):
    """`.float()` (Hugging Face's losses), .to/.type to float32 or float64, a float32 tensor operand
    and ops autocast runs in float32 make a float32 tensor on the GPU: the loss runs in float32."""
    assert rounded_loss_rows(loss_under("bf16", FLOAT32[reach])) == set()


@pytest.mark.parametrize("recipe", ["fp32", "tf32", "tf32-rne"])
def test_recipes_without_an_activation_format_keep_float32(recipe):
    assert rounded_loss_rows(loss_under(recipe, lambda out: out)) == set()


def test_exact_ops_keep_trains_loss():
    """exact_ops=True is `fmtcheck train`'s float32 loss, whatever the logits stand for."""
    assert rounded_loss_rows(loss_under("bf16", lambda out: out, exact_ops=True)) == set()


def test_the_rounding_changes_the_gradient():
    """Under fp16 the gradient reaching the logits holds fp16 values computed from fp16 log-probabilities:
    it differs from the float32 loss's (rounded to fp16 as the layer's backward would) on some values,
    and rounding it to fp16 again changes nothing."""
    torch.manual_seed(0)
    logits = torch.randn(64, 50) * 4
    y = torch.randint(0, 50, (64,))
    layer = torch.nn.Linear(50, 50)
    with torch.no_grad():
        layer.weight.copy_(torch.eye(50))
        layer.bias.zero_()
    with ft.emulate("fp16", "hopper"):
        out = layer(logits)
        out.retain_grad()
        (F.cross_entropy(out, y) * 1024).backward()
    plain = out.detach().clone().requires_grad_()
    (F.cross_entropy(plain, y) * 1024).backward()
    assert torch.equal(out.grad, out.grad.half().float())
    assert int((out.grad != plain.grad.half().float()).sum()) > 50



def test_probability_targets_of_another_dtype_are_refused():
    """A target of the logits' shape holds class probabilities (torch's rule): an integer one is an
    Error on one line, not a loss."""
    x = torch.randn(4, 5)
    with pytest.raises(ft.Error, match="takes a floating-point target") as e:
        low_precision.cross_entropy(ft.emulate("fp32", "hopper"), x, torch.ones(4, 5, dtype=torch.long))
    assert "\n" not in str(e.value)
