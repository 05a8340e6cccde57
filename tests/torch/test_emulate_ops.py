"""fmtcheck.torch.emulate's routing against torch itself: every GEMM entry point (F.linear, nn.Linear,
matmul, @, mm, addmm, bmm) forward and backward, on integer-valued tensors whose products and sums
are exact in float32, so the only rounding left is the recipe's rounding to its activation format,
which torch's own .to(bfloat16) computes independently. Shapes, transposes, the bias epilogue and
every gradient's layout are checked this way; the rounding inside the GEMMs is proven against
`fmtcheck train` (test_emulate_train.py). Also: the counts' names and the report's width, and what is
not emulated: one Error, or with unsupported="warn" torch's result and one warning per op; every op
torch.autocast runs in float16 is either emulated or refused."""

import numpy as np
import pytest
import torch

import fmtcheck
import fmtcheck.torch as ft
from conftest import assert_one_error
from exact_data import bf16, exact, ints

F = torch.nn.functional

ROUTES = {
    "F.linear": lambda x, w, b: F.linear(x, w, b),
    "matmul": lambda x, w, b: torch.matmul(x, w.t()) + b,
    "@": lambda x, w, b: x @ w.t() + b,
    "mm": lambda x, w, b: torch.mm(x.reshape(-1, x.shape[-1]), w.t()).reshape(*x.shape[:-1], -1) + b,
    "addmm": lambda x, w, b: torch.addmm(b, x.reshape(-1, x.shape[-1]), w.t()).reshape(*x.shape[:-1], -1),
}


@pytest.mark.parametrize("route", ROUTES)
def test_layer_gemm_forward_and_backward_against_torch(route):
    x, w, b, dy = ints(3, 5, 64, seed=1), ints(24, 64, seed=2), ints(24, seed=3), ints(3, 5, 24, seed=4, hi=3)
    with ft.emulate("bf16", "hopper"):
        y = ROUTES[route](x, w, b)
        y.backward(dy)
    # train's Linear: bf16 operands (exact here), an exact float32 GEMM, the bias in bf16, one float32
    # add, the sum rounded to bf16; without a fused bias (matmul, @, mm) torch adds b afterwards.
    fused = route in ("F.linear", "addmm")
    want = bf16(exact(x, w.t()) + b) if fused else bf16(exact(x, w.t())) + b
    assert y.dtype == torch.float32 and torch.equal(y, want.detach())
    g = bf16(dy)  # the incoming gradient, in the activation format
    assert torch.equal(x.grad, bf16(exact(g, w)))
    assert torch.equal(w.grad, bf16(exact(g.reshape(-1, 24).t(), x.reshape(-1, 64))))
    assert torch.equal(b.grad, bf16(g.reshape(-1, 24).sum(0)) if fused else g.reshape(-1, 24).sum(0))


@pytest.mark.parametrize("route", ["bmm", "matmul", "@"])
def test_batched_product_against_torch(route):
    a, c, dy = ints(2, 3, 6, 40, seed=5), ints(2, 3, 40, 7, seed=6), ints(2, 3, 6, 7, seed=7, hi=3)
    op = {"bmm": lambda p, q: torch.bmm(p.reshape(6, 6, 40), q.reshape(6, 40, 7)).reshape(2, 3, 6, 7),
          "matmul": torch.matmul, "@": lambda p, q: p @ q}[route]
    with ft.emulate("bf16", "hopper"):
        out = op(a, c)
        out.backward(dy)
    assert torch.equal(out, bf16(exact(a, c)).detach())
    assert torch.equal(a.grad, bf16(exact(dy, c.transpose(-1, -2))))
    assert torch.equal(c.grad, bf16(exact(a.transpose(-1, -2), dy)))


def test_fp32_recipe_is_torch_on_exact_data():
    x, w, b = ints(8, 32, seed=8), ints(16, 32, seed=9), ints(16, seed=10)
    with ft.emulate("fp32"):
        y = F.linear(x, w, b)
    assert torch.equal(y, (exact(x, w.t()) + b).detach())


def test_counts_are_named_by_module_path_and_role():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    with ft.emulate("fp8-current", "hopper", model=model) as em:
        for _ in range(2):
            model(torch.randn(5, 16) * 1e4).sum().backward()
    s = em.summary
    assert {"0:input", "0:weight", "0:output", "0:grad_output", "0:grad_weight", "2:grad_input"} <= set(s)
    assert s["0:input"]["values"] == 2 * 5 * 16  # two steps
    assert s["0:input"]["amax"] > 1e4
    lines = em.report().splitlines()
    assert lines[0].startswith("emulated fp8-current on hopper") and max(map(len, lines)) <= 100


def test_the_report_ends_with_what_was_lost():
    """The report's last line sums the table: values cast and lost, in how many tensors; a run that
    loses nothing says so."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(8, 8)
    with ft.emulate("fp16", "hopper") as em:
        y = layer(torch.randn(4, 8) * 1e3)
        y * y  # squares beyond 65504: inf in fp16
    text = em.report()
    over = em.summary["mul:output"]["overflow"]
    assert over > 0 and all(len(line) <= 100 for line in text.splitlines())
    assert f"fp16 on hopper: {over} overflowed, 0 saturated, 0 underflowed to zero, 0 became NaN of " \
           f"{sum(t['values'] for t in em.summary.values())} values cast, in 1 of 4 tensors" in " ".join(text.split())
    with ft.emulate("bf16", "hopper") as em:
        layer(torch.randn(4, 8))
    assert " ".join(em.report().split()).endswith("bf16 on hopper: no value lost at 128 casts: nothing overflowed, "
                                                  "saturated, underflowed to zero or became NaN")


def test_fp8_cast_counts_underflow():
    """e4m3 under current scaling: values 2^-20 of the tensor's amax fall below e4m3's smallest
    subnormal after scaling and are counted as underflow to zero, by the library's cast."""
    x = torch.ones(4, 32)
    x[:, 1] = 2.0 ** -20
    with ft.emulate("fp8-current", "hopper") as em:
        F.linear(x, torch.ones(2, 32))
    assert em.summary["linear:input"]["underflow_to_zero"] == 4
    assert em.summary["linear:weight"]["underflow_to_zero"] == 0


BAD = {
    "unknown recipe": (lambda: ft.emulate("fp7"), "unknown recipe 'fp7'"),
    "unknown gpu": (lambda: ft.emulate("bf16", "h900"), "unknown gpu 'h900'"),
    "mxfp8 on hopper": (lambda: ft.emulate("mxfp8", "hopper"), "block-scaled"),
    "a device that is not one": (lambda: ft.emulate("bf16", device="tpu"), "device='tpu': expected cpu or cuda"),
}
if fmtcheck._core.gpu_unavailable():  # without a GPU, asking for one says why
    BAD["no GPU"] = (lambda: ft.emulate("bf16", device="cuda"), "device='cuda': (no GPU found|this fmtcheck was built)")


@pytest.mark.parametrize("case", BAD)
def test_bad_recipe_or_gpu_is_one_error(case):
    make, words = BAD[case]
    with pytest.raises(ft.Error, match=words) as e:
        make()
    assert "\n" not in str(e.value)


OPS = {
    "float16": (lambda: F.linear(torch.ones(2, 4, dtype=torch.float16), torch.ones(3, 4, dtype=torch.float16)),
                "float16"),
    "float64": (lambda: torch.mm(torch.ones(2, 4, dtype=torch.float64), torch.ones(4, 3, dtype=torch.float64)),
                "float64"),
    "bilinear": (lambda: F.bilinear(torch.ones(2, 3), torch.ones(2, 4), torch.ones(5, 3, 4)), "bilinear is not"),
    "in place": (lambda: torch.ones(2, 3).addmm_(torch.ones(2, 4), torch.ones(4, 3)), "addmm_ is not"),
    "meta": (lambda: F.linear(torch.ones(2, 4, device="meta"), torch.ones(3, 4, device="meta")), "on meta"),
    "out=": (lambda: torch.matmul(torch.ones(2, 4), torch.ones(4, 3), out=torch.empty(2, 3)), "with out="),
}


@pytest.mark.parametrize("case", OPS)
def test_unsupported_op_or_dtype_is_one_error(case):
    assert_one_error(*OPS[case])


@pytest.mark.parametrize("case", OPS)
def test_unsupported_warn_runs_torch_and_warns_once_per_op(case):
    call, _ = OPS[case]
    want = call()
    with ft.emulate("bf16", "hopper", unsupported="warn"), pytest.warns(UserWarning) as w:
        got = [call(), call()]
    assert all(g.shape == want.shape and g.dtype == want.dtype for g in got)
    if want.device.type != "meta":
        assert all(torch.equal(g, want) for g in got)
    ours = [str(m.message) for m in w if str(m.message).startswith("emulate:")]
    assert len(ours) == 1 and "result is torch's, not bf16 on hopper's" in ours[0], ours


def _m(*shape):
    return torch.ones(*shape)


def _e4m3(*shape):
    return torch.ones(*shape).to(torch.float8_e4m3fn)


# torch.autocast's list of CUDA ops that run in float16 (torch's AMP docs), one call each; prelu, the
# one elementwise op there, left out. Each must be emulated or refused, never run unseen.
AUTOCAST_LOW_PRECISION = {
    "__matmul__": lambda: _m(2, 3) @ _m(3, 4),
    "addbmm": lambda: torch.addbmm(_m(2, 4), _m(2, 2, 3), _m(2, 3, 4)),
    "addmm": lambda: torch.addmm(_m(2, 4), _m(2, 3), _m(3, 4)),
    "addmv": lambda: torch.addmv(_m(2), _m(2, 3), _m(3)),
    "addr": lambda: torch.addr(_m(2, 3), _m(2), _m(3)),
    "baddbmm": lambda: torch.baddbmm(_m(2, 2, 4), _m(2, 2, 3), _m(2, 3, 4)),
    "bmm": lambda: torch.bmm(_m(2, 2, 3), _m(2, 3, 4)),
    "chain_matmul": lambda: torch.chain_matmul(_m(2, 3), _m(3, 4), _m(4, 2)),
    "multi_dot": lambda: torch.linalg.multi_dot([_m(2, 3), _m(3, 4), _m(4, 2)]),
    "conv1d": lambda: F.conv1d(_m(1, 2, 5), _m(3, 2, 2)),
    "conv2d": lambda: F.conv2d(_m(1, 2, 5, 5), _m(3, 2, 2, 2)),
    "conv3d": lambda: F.conv3d(_m(1, 2, 4, 4, 4), _m(3, 2, 2, 2, 2)),
    "conv_transpose1d": lambda: F.conv_transpose1d(_m(1, 2, 5), _m(2, 3, 2)),
    "conv_transpose2d": lambda: F.conv_transpose2d(_m(1, 2, 4, 4), _m(2, 3, 2, 2)),
    "conv_transpose3d": lambda: F.conv_transpose3d(_m(1, 2, 3, 3, 3), _m(2, 3, 2, 2, 2)),
    "GRUCell": lambda: torch.nn.GRUCell(3, 4)(_m(2, 3)),
    "linear": lambda: F.linear(_m(2, 3), _m(4, 3)),
    "LSTMCell": lambda: torch.nn.LSTMCell(3, 4)(_m(2, 3)),
    "matmul": lambda: torch.matmul(_m(2, 3), _m(3, 4)),
    "mm": lambda: torch.mm(_m(2, 3), _m(3, 4)),
    "mv": lambda: torch.mv(_m(2, 3), _m(3)),
    "RNNCell": lambda: torch.nn.RNNCell(3, 4)(_m(2, 3)),
    # and the layers and fused calls built on them
    "LSTM": lambda: torch.nn.LSTM(3, 4)(_m(5, 2, 3)),
    "GRU": lambda: torch.nn.GRU(3, 4)(_m(5, 2, 3)),
    "RNN": lambda: torch.nn.RNN(3, 4)(_m(5, 2, 3)),
    "MultiheadAttention": lambda: torch.nn.MultiheadAttention(4, 2)(_m(3, 2, 4), _m(3, 2, 4), _m(3, 2, 4)),
    "scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(_m(1, 2, 3, 4), _m(1, 2, 3, 4),
                                                                           _m(1, 2, 3, 4)),
    "einsum": lambda: torch.einsum("ij,jk->ik", _m(2, 3), _m(3, 4)),
    "bilinear": lambda: F.bilinear(_m(2, 3), _m(2, 4), _m(5, 3, 4)),
    "cdist": lambda: torch.cdist(_m(30, 4), _m(30, 4)),
    # torch 2.15's grouped (mixture-of-experts) and scaled (FP8) GEMM APIs, and a fused addmm
    "F.grouped_mm": lambda: F.grouped_mm(_m(2, 3, 4), _m(2, 4, 5)),
    "_grouped_mm": lambda: torch._grouped_mm(_m(2, 3, 4), _m(2, 4, 5)),
    "F.scaled_mm": lambda: F.scaled_mm(_e4m3(2, 16), _e4m3(3, 16).t(), _m(1), F.ScalingType.TensorWise, _m(1),
                                       F.ScalingType.TensorWise),
    "F.scaled_addmm": lambda: F.scaled_addmm(_m(2, 3), _e4m3(2, 16), _e4m3(3, 16).t(), _m(1),
                                             F.ScalingType.TensorWise, _m(1), F.ScalingType.TensorWise),
    "_addmm_activation": lambda: torch._addmm_activation(_m(3), _m(2, 4), _m(4, 3)),
}


@pytest.mark.parametrize("op", AUTOCAST_LOW_PRECISION)
def test_every_autocast_gemm_is_emulated_or_refused(op):
    with ft.emulate("bf16", "hopper") as em:
        try:
            AUTOCAST_LOW_PRECISION[op]()
        except ft.Error as e:
            assert "is not emulated" in str(e)
            return
    assert em.summary, f"{op} ran with no cast counted: torch computed it unseen"


def _r(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed + len(shape)))


M, K, N = _r(3, 5), _r(5, 4, seed=1), _r(4, 5, seed=2)
V3, B1, B2 = _r(5, seed=3), _r(2, 3, 5), _r(2, 5, 4)
LSTM_W = [_r(8, 5, seed=4), _r(8, 2, seed=5), _r(8, seed=6), _r(8, seed=7)]
# Each GEMM entry point called with its operands named as torch names them (models do: BLOOM calls
# baddbmm(input=, batch1=, batch2=)) against the same call by position.
BY_NAME = {
    "linear": (lambda: F.linear(M, N), lambda: F.linear(input=M, weight=N)),
    "mm": (lambda: torch.mm(M, K), lambda: torch.mm(input=M, mat2=K)),
    "Tensor.mm": (lambda: M.mm(K), lambda: M.mm(mat2=K)),
    "bmm": (lambda: torch.bmm(B1, B2), lambda: torch.bmm(input=B1, mat2=B2)),
    "mv": (lambda: torch.mv(M, V3), lambda: torch.mv(input=M, vec=V3)),
    "dot": (lambda: torch.dot(V3, V3), lambda: torch.dot(input=V3, tensor=V3)),
    "vdot": (lambda: torch.vdot(V3, V3), lambda: torch.vdot(input=V3, other=V3)),
    "matmul": (lambda: torch.matmul(M, K), lambda: torch.matmul(input=M, other=K)),
    "addmm": (lambda: torch.addmm(_r(3, 4), M, K, beta=0.5), lambda: torch.addmm(input=_r(3, 4), mat1=M, mat2=K,
                                                                                beta=0.5)),
    "baddbmm": (lambda: torch.baddbmm(_r(2, 3, 4), B1, B2, alpha=2),
                lambda: torch.baddbmm(input=_r(2, 3, 4), batch1=B1, batch2=B2, alpha=2)),
    "addbmm": (lambda: torch.addbmm(_r(3, 4), B1, B2), lambda: torch.addbmm(input=_r(3, 4), batch1=B1, batch2=B2)),
    "addmv": (lambda: torch.addmv(_r(3), M, V3), lambda: torch.addmv(input=_r(3), mat=M, vec=V3)),
    "addr": (lambda: torch.addr(_r(5, 5), V3, V3), lambda: torch.addr(input=_r(5, 5), vec1=V3, vec2=V3)),
    "inner": (lambda: torch.inner(M, N), lambda: torch.inner(input=M, other=N)),
    "tensordot": (lambda: torch.tensordot(M, K, 1), lambda: torch.tensordot(a=M, b=K, dims=1)),
    "conv1d": (lambda: F.conv1d(_r(1, 2, 6), _r(3, 2, 2), None, 2),
               lambda: F.conv1d(input=_r(1, 2, 6), weight=_r(3, 2, 2), stride=2)),
    "conv_transpose1d": (lambda: F.conv_transpose1d(_r(1, 2, 6), _r(2, 3, 2)),
                         lambda: F.conv_transpose1d(input=_r(1, 2, 6), weight=_r(2, 3, 2))),
    "lstm_cell": (lambda: torch.lstm_cell(M, [_r(3, 2), _r(3, 2)], *LSTM_W),
                  lambda: torch.lstm_cell(input=M, hx=[_r(3, 2), _r(3, 2)], w_ih=LSTM_W[0], w_hh=LSTM_W[1],
                                          b_ih=LSTM_W[2], b_hh=LSTM_W[3])),
}


@pytest.mark.parametrize("op", BY_NAME)
def test_operands_by_torchs_names(op):
    results = []
    for call in BY_NAME[op]:
        with ft.emulate("bf16", "hopper") as em:
            out = call()
        results.append((out if isinstance(out, tuple) else (out,), em.summary))
    (by_position, counts), (by_name, named_counts) = results
    assert all(torch.equal(a, b) for a, b in zip(by_position, by_name)) and counts == named_counts and counts


def test_exact_ops_by_torchs_names():
    x, target = _r(3, 5), torch.tensor([0, 4, 2])
    with ft.emulate("fp32", "hopper", exact_ops=True):
        assert torch.equal(F.softmax(input=x, dim=1), F.softmax(x, 1))
        assert torch.equal(F.layer_norm(input=x, normalized_shape=(5,)), F.layer_norm(x, (5,)))
        assert torch.equal(F.cross_entropy(input=x, target=target), F.cross_entropy(x, target))


def test_mm_into_another_dtype_is_unsupported():
    with ft.emulate("bf16", "hopper"), pytest.raises(ft.Error, match="mm with out_dtype"):
        torch.mm(M, K, out_dtype=torch.bfloat16)


def test_unsupported_takes_error_or_warn():
    with pytest.raises(ft.Error, match="unsupported='ignore': expected one of error, warn"):
        ft.emulate("bf16", unsupported="ignore")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: torch.cuda.is_available() is false")
def test_cuda_tensors_are_computed_on_a_host_copy():
    x, w = (ints(*s, seed=i).detach().cuda().requires_grad_() for i, s in enumerate([(3, 64), (8, 64)]))
    with ft.emulate("bf16", "hopper"):
        y = F.linear(x, w)
        y.backward(torch.ones_like(y))
    with ft.emulate("bf16", "hopper"):
        want = F.linear(x.detach().cpu(), w.detach().cpu())
    assert y.device == x.device and torch.equal(y.cpu(), want) and x.grad.device == x.device


def test_subnormal_results_survive_torch_flushing_subnormals():
    """torch.set_flush_denormal(True) turns on flush-to-zero and denormals-are-zero in the caller's
    thread; fmtcheck still computes as the emulated hardware does (it keeps subnormals) and gives
    torch its setting back. 2^-70 . 2^-70 summed over k = 64 is 2^-134 exactly: float32 bits 2^15."""
    if not torch.set_flush_denormal(True):
        pytest.skip("this CPU cannot flush subnormals (torch.set_flush_denormal needs SSE3)")
    try:
        tiny = torch.full((2, 64), 2.0**-70), torch.full((3, 64), 2.0**-70)
        with ft.emulate("fp32", "hopper"):
            y = F.linear(*tiny)  # the recipe's FMA chain
        codes = np.full((2, 64), 57 << 7, np.uint16), np.full((64, 3), 57 << 7, np.uint16)  # bf16 2^-70
        d = fmtcheck.gemm(*codes, model="hopper-wgmma", input="bf16")  # the tensor-core GEMM and its epilogue
        assert y.view(torch.int32).eq(1 << 15).all() and (d.view(np.uint32) == 1 << 15).all()
        still_flushing = torch.tensor([1 << 15], dtype=torch.int32).view(torch.float32) * 2
        assert still_flushing.view(torch.int32).item() == 0
    finally:
        torch.set_flush_denormal(False)


def autocast_steps(recipe, dtype=None, device="cpu", steps=12):
    """`steps` fp16-style steps of a small MLP with GELU and PReLU (which autocast would run in the
    low format itself) under emulate, the forward under
    torch.autocast(device, dtype) when dtype is given, with a GradScaler from 2^20 (the first steps'
    scaled gradients overflow fp16): the losses, scales and final weights."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.PReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 20, growth_interval=4)
    seen = []
    with ft.emulate(recipe, "hopper", model=model):
        for step in range(steps):
            x, y = torch.randn(8, 16) * 4, torch.randint(0, 4, (8,))
            with torch.autocast(device, dtype=dtype, enabled=dtype is not None):
                loss = F.cross_entropy(model(x) * 0.5, y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
            seen.append((loss.item(), scaler.get_scale()))
    return seen, [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("recipe,dtype", [("fp16", torch.float16), ("bf16", torch.bfloat16),
                                          ("fp8-current", torch.bfloat16)])
def test_autocast_to_the_recipes_format_changes_nothing(recipe, dtype):
    """A loop written for the GPU, its forward under torch.autocast to the recipe's activation dtype,
    runs under emulate as the same loop without autocast: the same losses, GradScaler decisions
    and weights, bit for bit (the fp16 run skips its first steps); torch's autocast is off inside."""
    with_autocast, weights = autocast_steps(recipe, dtype)
    without, plain_weights = autocast_steps(recipe)
    assert with_autocast == without and all(torch.equal(a, b) for a, b in zip(weights, plain_weights))
    if recipe == "fp16":
        assert without[0][1] < 2.0 ** 20  # a skip: the case is not vacuous
    assert not torch.is_autocast_enabled("cpu")


@pytest.mark.parametrize("recipe,dtype", [("fp16", torch.bfloat16), ("bf16", torch.float16), ("fp32", torch.bfloat16),
                                          ("tf32", torch.float16)])
def test_autocast_to_another_format_is_an_error(recipe, dtype):
    with pytest.raises(ft.Error, match="under torch.autocast") as e:
        autocast_steps(recipe, dtype, steps=1)
    assert "\n" not in str(e.value) and ("leave autocast off" in str(e.value) or "autocast to" in str(e.value))


def test_cross_entropy_bad_input():
    with pytest.raises(ft.Error, match="logits"):
        ft.cross_entropy(torch.ones(3, 4, dtype=torch.float64), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ft.Error, match="label"):
        ft.cross_entropy(torch.ones(3, 4), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ft.Error, match="out of range"):
        ft.cross_entropy(torch.ones(3, 4), torch.full((3,), 7))


def bf16_codes(t):
    return t.detach().to(torch.bfloat16).view(torch.int16).numpy().view("uint16")


BF16_PRESETS = [m["name"] for m in fmtcheck.models() if "bf16" in m["inputs"]]


def cancelling(seed):
    """Rows whose first two products (+-2^24) cancel, leaving small ones: presets that align partial
    sums to the largest exponent of a block lose different amounts of them, visible after bf16."""
    g = torch.Generator().manual_seed(seed)
    x, w = torch.randn(16, 64, generator=g), torch.randn(16, 64, generator=g)
    x[:, 0], x[:, 1], w[:, 0], w[:, 1] = 2.0**12, -(2.0**12), 2.0**12, 2.0**12
    return x, w


@pytest.mark.parametrize("gpu", BF16_PRESETS)
def test_every_bf16_preset_is_the_gemm_it_names(gpu):
    """emulate(gpu=P) computes P's GEMM: fmtcheck.gemm on the same bf16 operands under P (train's
    "hopper" is its wgmma model), its float32 result rounded to bf16 by torch."""
    x, w = cancelling(11)
    with ft.emulate("bf16", gpu):
        y = F.linear(x, w)
    model = "hopper-wgmma" if gpu == "hopper" else gpu
    d = fmtcheck.gemm(bf16_codes(x), bf16_codes(w).T.copy(), model=model, input="bf16")
    assert torch.equal(y, bf16(torch.from_numpy(d)))


def test_presets_differ_on_this_data():
    """The check above can tell presets apart: its data gives at least three different results."""
    x, w = cancelling(11)
    outs = []
    for gpu in BF16_PRESETS:
        with ft.emulate("bf16", gpu):
            outs.append(F.linear(x, w))
    assert len({o.numpy().tobytes() for o in outs}) >= 3


def test_linear_adds_the_bias_after_the_product_for_a_transposed_input():
    """torch's linear fuses the bias into the GEMM only for a contiguous input (or a matrix); for a
    transposed one of 3 dimensions it runs matmul, then adds the bias to the product rounded to the
    format (nn.MultiheadAttention's in-projection, batch_first). In bf16, x·W = 1 + 2^-8 (a tie) and
    b = 2^-9: fused, 1 + 2^-8 + 2^-9 rounds up to 1 + 2^-7; after the product, 1 + 2^-8 rounds to 1
    (even), and 1 + 2^-9 to 1 again. The bias's gradient is the sum over the rows either way."""
    w, b = torch.tensor([[1.0, 2.0 ** -8]]), torch.tensor([2.0 ** -9], requires_grad=True)
    x = torch.ones(2, 3, 2)
    transposed = x.transpose(0, 1).contiguous().transpose(0, 1)
    assert not transposed.is_contiguous()
    with ft.emulate("bf16", "hopper") as em:
        fused = F.linear(x, w, b)
        unfused = F.linear(transposed, w, b)
        unfused.sum().backward()
    assert bool((fused == 1 + 2.0 ** -7).all()) and bool((unfused == 1.0).all())
    assert b.grad.tolist() == [6.0] and em.summary["linear#1:grad_bias"]["values"] == 1
