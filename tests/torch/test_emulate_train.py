"""fmtcheck.torch.emulate against `fmtcheck train`'s own emulator: the torch models of tests/torch/
models.py written as train's (DigitsMlp; TrainSortTransformer with its attention, layer norms and
embeddings), run under emulate with train's initial weights, batches and recipe, give train's loss,
loss scale, skip decision, weights and per-layer cast counts at every step, bit for bit.

The reference is train's C++ Trainer itself (fmtcheck._core.Trainer, the CLI's code), whose
arithmetic has its own numpy reference (tests/train). The torch side runs the models as torch
modules under `emulate(..., exact_ops=True)`: the GEMMs and casts are emulate's, the layer norms,
softmax and loss train's fixed-order float32 ones (fmtcheck.torch.layer_norm, softmax,
cross_entropy) in place of torch's; embeddings, ReLU, masking, residual adds and the autograd
plumbing are torch's own. The optimizer is torch.optim.SGD's rule written without its fused add
(see TrainSgd)."""

import numpy as np
import pytest
import torch

import fmtcheck.torch as ft
from fmtcheck import _core
from models import SOURCE, DigitsMlp, TrainSortTransformer, _csv

F = torch.nn.functional
BATCH = 32


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


class Mlp:
    """train --model mlp: the first 1500 digits train; batch s is images 32 s .. 32 s + 31 (mod 1500)."""
    data, head = SOURCE / "data" / "digits" / "digits.csv.gz", "fc2"

    def __init__(self):
        raw = _csv(self.data)[:1500]
        self.x, self.y = torch.tensor(raw[:, :64], dtype=torch.float32) / 16, torch.tensor(raw[:, 64])
        self.model = DigitsMlp()

    def batch(self, s):
        i = torch.arange(s * BATCH, (s + 1) * BATCH) % len(self.x)
        return self.x[i], self.y[i]

    @staticmethod
    def train_name(name):
        return name


class Transformer:
    """train --model transformer: the first 1800 sort sequences train; the input is a sequence's first
    12 tokens, the targets its tokens 7..12 (those the separator and the positions after it predict)."""
    data, head = SOURCE / "data" / "sort" / "sort.csv.gz", "head"

    def __init__(self):
        self.seqs = torch.tensor(_csv(self.data)[:1800])
        self.model = TrainSortTransformer()
        self.train_name = self.model.train_name

    def batch(self, s):
        seqs = self.seqs[torch.arange(s * BATCH, (s + 1) * BATCH) % len(self.seqs)]
        return seqs[:, :12], seqs[:, 7:].reshape(-1)


TASKS = {"mlp": Mlp, "transformer": Transformer}


def emulate_name(train_name, linears, head):
    """emulate's name of one of train's Linear casts ("attn.qkv.input" -> "attn.qkv:input"; the loss
    gradient "logits.grad" -> "<head>:output.grad"), None for casts that are not a Linear's."""
    if train_name == "logits.grad":
        return f"{head}:output.grad"
    for path in linears:
        if train_name.startswith(path + "."):
            return f"{path}:{train_name[len(path) + 1:]}"
    return None


def run(task, recipe, gpu, steps, emulated=True, init_scale=65536.0, growth_interval=2000, skips=None, named=True,
        masters=False):
    """Steps of train and of the torch model side by side; returns the first difference, or None.
    `skips` (a list) collects the steps train skipped; `named`: emulate is given the model (its
    module paths name the casts, as train's, and are compared); `masters`: float32 SGD even under a
    pure recipe."""
    t = TASKS[task]()
    model = t.model
    ref = _core.Trainer(task, str(t.data), recipe, gpu, init_scale=init_scale, growth_interval=growth_interval)
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(torch.from_numpy(ref.parameters()[t.train_name(n)]).reshape(p.shape))
    linears = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    pure = "-pure" in recipe and not masters
    if pure:  # train's optimizer on weights stored in the recipe's format, parameters in train's order
        by_name = {t.train_name(n): p for n, p in model.named_parameters()}
        opt = ft.Optimizer([(n, by_name[n]) for n in ref.parameters()], recipe=recipe)
    else:
        opt = TrainSgd(model.parameters())
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=growth_interval) \
        if recipe.startswith("fp16") else None
    em = ft.emulate(recipe, gpu, model=model if named else None, exact_ops=True)
    compared = 0
    for s in range(steps):
        x, y = t.batch(s)
        scale = scaler.get_scale() if scaler else 1.0
        if emulated:
            with em:
                loss = F.cross_entropy(model(x), y)
                (scaler.scale(loss) if scaler else loss).backward()
        else:  # torch's own GEMMs, train's float32 ops
            loss = ft.cross_entropy(model(x), y)
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
        if pure and not r["skipped"] and [tuple(u) for u in opt.lost] != [tuple(u) for u in r["updates"]]:
            return f"step {s}: lost updates {opt.lost} != train's {r['updates']}"
        w = ref.parameters()
        for n, p in model.named_parameters():
            if not np.array_equal(p.detach().numpy().reshape(-1), w[t.train_name(n)]):
                return f"step {s}: {n} differs from train's"
        if emulated and named:
            mine = {name: flags for name, _amax, _scale, flags in em.casts.step_stats()}
            for name, flags in r["tensors"].items():
                ours = emulate_name(name, linears, t.head)
                if ours is None:
                    continue
                compared += 1
                if mine.get(ours) != flags:
                    return f"step {s}: casts of {name}: {mine.get(ours)} != train's {flags}"
    if emulated and named and recipe not in ("fp32", "tf32", "tf32-rne") and compared == 0:
        return "no cast was compared"
    return None


# (task, recipe, gpu, steps): train's default recipes on its default GPU, and MX on Blackwell.
CASES = [("mlp", "fp32", "hopper", 150), ("mlp", "tf32", "hopper", 150), ("mlp", "tf32-rne", "hopper", 60),
         ("mlp", "bf16", "hopper", 150),
         ("mlp", "fp16", "hopper", 150), ("mlp", "fp8-current", "hopper", 100), ("mlp", "fp8-delayed", "hopper", 100),
         ("mlp", "mxfp8", "blackwell", 60), ("mlp", "bf16", "ampere", 60),
         ("transformer", "fp32", "hopper", 30), ("transformer", "tf32", "hopper", 10),
         ("transformer", "bf16", "hopper", 15), ("transformer", "fp16", "hopper", 15),
         ("transformer", "fp8-current", "hopper", 8), ("transformer", "fp8-delayed", "hopper", 8),
         ("transformer", "mxfp8", "blackwell", 4),
         # pure low-precision training through fmtcheck.torch.Optimizer
         ("mlp", "bf16-pure", "hopper", 60), ("mlp", "bf16-pure-sr", "hopper", 60),
         ("mlp", "bf16-pure-kahan", "hopper", 60), ("mlp", "fp16-pure-fp32-states", "hopper", 60),
         ("mlp", "fp16-pure-sr", "hopper", 60), ("transformer", "bf16-pure-sr", "hopper", 10),
         ("transformer", "fp16-pure-kahan", "hopper", 10),
         # other formats through the same machinery, on the exact model (P3109, MX FP4/FP6)
         ("mlp", "current:binary8p3se/binary8p2se", "exact", 30), ("mlp", "mx:e2m1", "exact", 30),
         ("transformer", "delayed:binary8p4se", "exact", 4), ("transformer", "mx:e3m2", "exact", 4),
         # other GPUs' presets: AMD MI300X (bf16; FP8 in its fnuz formats), MI210, V100
         ("mlp", "bf16", "mi300x", 30), ("mlp", "current:e4m3fnuz/e5m2fnuz", "mi300x", 30),
         ("mlp", "fp16", "mi210", 30), ("transformer", "fp16", "volta", 4)]


@pytest.mark.parametrize("task,recipe,gpu,steps", CASES, ids=[f"{t}-{r}-{g}" for t, r, g, _ in CASES])
def test_emulated_model_equals_fmtcheck_train(task, recipe, gpu, steps):
    assert run(task, recipe, gpu, steps) is None


def test_fp16_gradscaler_skips_and_grows_as_train():
    """fp16 from a scale of 2^30: the fp16 gradients overflow, train and torch's GradScaler skip the
    same steps and back off alike, then grow every 20 finite steps; every step stays bit-exact."""
    skips = []
    assert run("mlp", "fp16", "hopper", 80, init_scale=2.0**30, growth_interval=20, skips=skips) is None
    assert len(skips) >= 3, f"train skipped steps {skips}: the scaler was not exercised"


def test_steps_without_the_model_start_after_each_backward():
    """Without model=, a GEMM after a backward starts the next step, so the casts keep their names
    ("linear", "linear#1") and delayed scaling its amax history from step to step."""
    assert run("mlp", "fp8-delayed", "hopper", 40, named=False) is None


@pytest.mark.parametrize("task", TASKS)
def test_without_emulate_torch_misses_trains_bits(task):
    """The same loop without emulate (torch's own float32 GEMMs): train's weights are missed, so the
    equality above is emulate's doing, not the model's."""
    assert run(task, "fp32", "hopper", 5, emulated=False) is not None


def test_pure_recipes_need_their_optimizer():
    """bf16-pure with a float32-master SGD instead of fmtcheck.torch.Optimizer: train's weights (kept
    in bf16) are missed, so the pure cases above prove the Optimizer's storage and rounding."""
    assert run("mlp", "bf16-pure", "hopper", 3, masters=True) is not None


def test_torchs_own_float32_ops_miss_trains_bits():
    """The transformer under emulate but with torch's own layer norm, softmax and loss: train's bits
    are missed, so exact_ops is what the equality needs (and the two differ only in those ops)."""
    t = Transformer()
    ref = _core.Trainer("transformer", str(t.data), "fp32", "hopper")
    with torch.no_grad():
        for n, p in t.model.named_parameters():
            p.copy_(torch.from_numpy(ref.parameters()[t.train_name(n)]).reshape(p.shape))
    x, y = t.batch(0)
    with ft.emulate("fp32", "hopper", model=t.model):
        plain = float(F.cross_entropy(t.model(x), y).detach())
    with ft.emulate("fp32", "hopper", model=t.model, exact_ops=True):
        exact = float(F.cross_entropy(t.model(x), y).detach())
    assert exact == ref.step()["loss"]
    assert plain != exact


def test_torch_autocast_rounds_a_residual_branchs_gradient():
    """What train and emulate do at a residual add, checked against torch itself: under CPU autocast
    bf16 a Linear's output is bf16, so the gradient autograd hands it from `x + linear(x)` (float32
    upstream) is that gradient rounded to bf16, while the residual stream keeps float32."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 8, generator=g, requires_grad=True)
    lin = torch.nn.Linear(8, 8)
    upstream = torch.randn(4, 8, generator=g) * 1.001
    seen = {}
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = lin(x)
        out.register_hook(lambda grad: seen.setdefault("branch", grad))
        y = x + out
    y.backward(upstream)
    assert seen["branch"].dtype == torch.bfloat16
    assert torch.equal(seen["branch"].float(), upstream.to(torch.bfloat16).float())
    assert not torch.equal(upstream.to(torch.bfloat16).float(), upstream)  # the rounding is visible
