"""fmtcheck.torch.TrainerCallback inside Hugging Face Trainer.train() on a GPT-2 built from a config:
the trace and verdict land in output_dir, the verdict in the log. On the CPU accelerate runs
fp16=True in float32, without autocast or a GradScaler (it turns both on only for GPUs), so the
GPU's fp16 path is driven by giving the Trainer's accelerator what it gives itself on a GPU: native
autocast and a (CPU) GradScaler. accelerate's own forward, backward and optimizer step then use them,
and the Recorder's scaler.csv must hold the scaler's decisions, replayed by `fmtcheck scale` step
for step."""
import csv
import logging

import pytest
import torch
from safetensors import safe_open

transformers = pytest.importorskip("transformers", reason="transformers is not installed: "
                                   "pip install -r scripts/requirements-torch.txt")
import fmtcheck.torch as ft  # noqa: E402
from conftest import run_cli  # noqa: E402


class RandomTokens(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        t = torch.randint(0, 256, (32,), generator=torch.Generator().manual_seed(i))
        return {"input_ids": t, "labels": t}


def trainer(out, steps, callback, **precision):
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=256, n_positions=32, n_embd=64, n_layer=2, n_head=4, bos_token_id=0,
                                     eos_token_id=0)
    args = transformers.TrainingArguments(str(out), use_cpu=True, max_steps=steps, per_device_train_batch_size=8,
                                          report_to=[], save_strategy="no", learning_rate=1e-3,
                                          disable_tqdm=True, **precision)
    return transformers.Trainer(model=transformers.GPT2LMHeadModel(config), args=args, train_dataset=RandomTokens(),
                                callbacks=[callback])


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_the_callback_records_a_trainer_run(precision, tmp_path, caplog):
    t = trainer(tmp_path, 6, ft.TrainerCallback(), **{precision: True})
    with caplog.at_level(logging.INFO, logger="fmtcheck"):
        t.train()
    out = tmp_path / "fmtcheck"
    assert sorted(p.name for p in out.glob("step_*.safetensors")) == [f"step_{s:06d}.safetensors" for s in range(6)]
    assert all(recorded_gradients(t.model, f) for f in out.glob("step_*.safetensors"))
    verdict = (out / "verdict.txt").read_text()
    assert "6 of 6 steps recorded" in verdict and "verdict over the recorded tensors" in verdict
    assert verdict in caplog.text


def recorded_gradients(model, step_file):
    """Whether the step's file holds every parameter's gradient (the Trainer zeroes them before its
    step-end callback, so a step must end earlier to see them)."""
    keys = set(safe_open(step_file, "pt").keys())
    return all(f"{n}:grad" in keys for n, _ in model.named_parameters())


def test_the_callback_records_an_emulated_trainer_run(tmp_path):
    """trainer.train() under emulate (the Trainer in float32, the recipe casting): the Recorder takes
    emulate's casts per step and the gradients the optimizer stepped with, and the emulated run's
    loss is not the float32 run's."""
    losses = []
    for recipe in (None, "fp8-current"):
        t = trainer(tmp_path / str(recipe), 4, transformers.TrainerCallback())
        if recipe is None:
            losses.append(t.train().training_loss)
            continue
        with ft.emulate(recipe, "hopper", model=t.model) as em:
            t.add_callback(ft.TrainerCallback(record=("grad",), emulate=em))
            losses.append(t.train().training_loss)
    out = tmp_path / "fp8-current" / "fmtcheck"
    with open(out / "emulated.csv") as f:
        rows = list(csv.DictReader(f))
    assert {int(r["step"]) for r in rows} == {0, 1, 2, 3}
    assert {r["tensor"] for r in rows} >= {"transformer.h.0.attn.c_attn:input", "lm_head:grad_weight"}
    assert all(recorded_gradients(t.model, f) for f in out.glob("step_*.safetensors"))
    assert "4 of 4 steps recorded" in (out / "verdict.txt").read_text() and losses[0] != losses[1]


def test_the_trainers_gradscaler_decisions_replay(tmp_path, cli):
    callback = ft.TrainerCallback(record=("grad",))
    t = trainer(tmp_path, 40, callback, fp16=True)
    t.accelerator.native_amp = True  # autocast fp16, as accelerate sets it up on a GPU
    t.accelerator.scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 26, growth_interval=8)
    t.train()
    out = tmp_path / "fmtcheck"
    with open(out / "scaler.csv") as f:
        rows = list(csv.DictReader(f))
    skipped = sum(r["skipped"] == "true" for r in rows)
    assert len(rows) == 40 and skipped > 0
    _, replay, _ = run_cli(cli, "scale", out, "--recipe", "gradscaler", "--format", "fp32", "--tensors", ":grad$",
                           "--init-scale", 2 ** 26, "--growth-interval", 8, "--csv", tmp_path / "replay.csv")
    decisions = {}
    with open(tmp_path / "replay.csv") as f:
        for r in csv.DictReader(f):
            decisions[int(r["step"])] = (float(r["scale"]), r["skipped"] == "1")
    assert [decisions[int(r["step"])] for r in rows] == [(float(r["scale"]), r["skipped"] == "true") for r in rows]


def emulated_fp16_trainer(out, autocast):
    """An fp16 Trainer run as accelerate sets it up on a GPU (native AMP, its GradScaler), with its
    autocast switched off unless `autocast`, under emulate("fp16", "hopper"), recorded: the losses
    and the scaler's decisions."""
    from accelerate.utils import AutocastKwargs

    t = trainer(out, 8, transformers.TrainerCallback(), fp16=True, logging_steps=1)
    t.accelerator.native_amp = True
    t.accelerator.autocast_handler = AutocastKwargs(enabled=autocast)
    t.accelerator.scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 22, growth_interval=3)
    with ft.emulate("fp16", "hopper", model=t.model) as em:
        t.add_callback(ft.TrainerCallback(record=("grad",), emulate=em))
        t.train()
    losses = [h["loss"] for h in t.state.log_history if "loss" in h]
    with open(out / "fmtcheck" / "scaler.csv") as f:
        return losses, [(r["scale"], r["skipped"]) for r in csv.DictReader(f)]


def test_an_fp16_trainer_written_for_the_gpu_runs_emulated(tmp_path):
    """Trainer(fp16=True) as accelerate sets it up on a GPU, autocast included, under
    emulate("fp16"): autocast to the recipe's format is taken as the recipe, so the run, its
    GradScaler's skips and its emulated casts are those of the same Trainer without autocast."""
    with_autocast = emulated_fp16_trainer(tmp_path / "autocast", True)
    without = emulated_fp16_trainer(tmp_path / "plain", False)
    assert with_autocast == without and len(without[0]) == 8
    assert any(skipped == "true" for _, skipped in without[1])  # the first scales overflow fp16
    with open(tmp_path / "autocast" / "fmtcheck" / "emulated.csv") as f:
        assert "transformer.h.0.mlp.c_fc:output" in {r["tensor"] for r in csv.DictReader(f)}
