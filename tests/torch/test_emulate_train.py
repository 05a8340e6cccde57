"""fmtcheck.torch.emulate against `fmtcheck train`'s own emulator: the torch DigitsMlp (tests/torch/
models.py), run under emulate with train's initial weights, batches and recipe, gives train's loss,
loss scale, skip decision, weights and per-tensor cast counts at every step, bit for bit.

The reference is train's C++ Trainer itself (fmtcheck._core.Trainer, the CLI's code), whose
arithmetic has its own numpy reference (tests/train). The torch side runs the model as torch modules;
only the loss is train's exactly rounded cross-entropy (fmtcheck.torch.cross_entropy), and the
optimizer is torch.optim.SGD's rule written without its fused add (see TrainSgd)."""

import numpy as np
import pytest
import torch

import fmtcheck.torch as ft
from fmtcheck import _core
from models import SOURCE, DigitsMlp, _csv

DATA = SOURCE / "data" / "digits" / "digits.csv.gz"
BATCH, TRAIN_IMAGES = 32, 1500


class TrainSgd(torch.optim.Optimizer):
    """torch.optim.SGD (momentum 0.9, lr 0.05, dampening 0) as train computes it: buf = g on the first
    step, then buf * momentum + g; p + (-(lr * buf)), one float32 operation each. torch's own SGD
    calls p.add_(buf, alpha=-lr), which its CPU kernel fuses into one FMA (measured: its weights leave
    train's from step 0), so the rule is spelled out here."""

    def __init__(self, params, lr=0.05, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                buf = state.get("buf")
                buf = p.grad.clone() if buf is None else buf * group["momentum"] + p.grad
                state["buf"] = buf
                p.copy_(p + (-(buf * group["lr"])))


@pytest.fixture(scope="module")
def digits():
    raw = _csv(DATA)[:TRAIN_IMAGES]
    return torch.tensor(raw[:, :64], dtype=torch.float32) / 16, torch.tensor(raw[:, 64])


def train_names(name):
    """train's tensor name as emulate names it ("fc1.input" -> "fc1:input")."""
    return "fc2:output.grad" if name == "logits.grad" else name.replace(".", ":", 1)


def run(recipe, gpu, steps, digits, emulated=True, init_scale=65536.0, growth_interval=2000, skips=None,
        named=True):
    """Steps of train and of the torch model side by side; returns the first difference, or None.
    `skips` (a list) collects the steps train skipped; `named`: emulate is given the model (its
    module paths name the casts, as train's, and are compared)."""
    x, y = digits
    ref = _core.Trainer("mlp", str(DATA), recipe, gpu, init_scale=init_scale, growth_interval=growth_interval)
    model = DigitsMlp()
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(torch.from_numpy(ref.parameters()[n]).reshape(p.shape))
    opt = TrainSgd(model.parameters())
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=growth_interval) \
        if recipe == "fp16" else None
    em = ft.emulate(recipe, gpu, model=model if named else None)
    for s in range(steps):
        i = torch.arange(s * BATCH, (s + 1) * BATCH) % TRAIN_IMAGES
        scale = scaler.get_scale() if scaler else 1.0
        if emulated:
            with em:
                loss = ft.cross_entropy(model(x[i]), y[i])
                (scaler.scale(loss) if scaler else loss).backward()
        else:
            loss = ft.cross_entropy(model(x[i]), y[i])
            loss.backward()
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)
        r = ref.step()
        if r["skipped"] and skips is not None:
            skips.append(s)
        if float(loss.detach()) != r["loss"] or scale != r["loss_scale"]:
            return f"step {s}: loss {float(loss.detach())!r} scale {scale}, train {r['loss']!r} scale {r['loss_scale']}"
        w = ref.parameters()
        for n, p in model.named_parameters():
            if not np.array_equal(p.detach().numpy().reshape(-1), w[n]):
                return f"step {s}: {n} differs from train's"
        if emulated and named:
            mine = {name: flags for name, _amax, _scale, flags in em.casts.step_stats()}
            for name, flags in r["tensors"].items():
                if mine.get(train_names(name)) != flags:
                    return f"step {s}: casts of {name}: {mine.get(train_names(name))} != train's {flags}"
    return None


# (recipe, gpu, steps): train's default recipes on its default GPU, and MX on Blackwell.
CASES = [("fp32", "hopper", 150), ("tf32", "hopper", 150), ("bf16", "hopper", 150), ("fp16", "hopper", 150),
         ("fp8-current", "hopper", 100), ("fp8-delayed", "hopper", 100), ("mxfp8", "blackwell", 60),
         ("bf16", "ampere", 60)]


@pytest.mark.parametrize("recipe,gpu,steps", CASES, ids=[f"{r}-{g}" for r, g, _ in CASES])
def test_emulated_mlp_equals_fmtcheck_train(recipe, gpu, steps, digits):
    assert run(recipe, gpu, steps, digits) is None


def test_fp16_gradscaler_skips_and_grows_as_train(digits):
    """fp16 from a scale of 2^30: the fp16 gradients overflow, train and torch's GradScaler skip the
    same steps and back off alike, then grow every 20 finite steps; every step stays bit-exact."""
    skips = []
    assert run("fp16", "hopper", 80, digits, init_scale=2.0**30, growth_interval=20, skips=skips) is None
    assert len(skips) >= 3, f"train skipped steps {skips}: the scaler was not exercised"


def test_steps_without_the_model_start_after_each_backward(digits):
    """Without model=, a GEMM after a backward starts the next step, so the casts keep their names
    ("linear", "linear#1") and delayed scaling its amax history from step to step."""
    assert run("fp8-delayed", "hopper", 40, digits, named=False) is None


def test_without_emulate_torch_misses_trains_bits(digits):
    """The same loop without emulate (torch's own float32 GEMMs): train's weights are missed, so the
    equality above is emulate's doing, not the model's."""
    assert run("fp32", "hopper", 5, digits, emulated=False) is not None
