"""torch's real GradScaler, replayed: fp16-autocast training runs on the CPU (the digits MLP, the
sort transformer, a Hugging Face GPT-2 from a config), 300 steps each from a scale high enough that
steps are skipped and a growth interval short enough that the scale grows again, recorded by the
Recorder. `fmtcheck scale --recipe gradscaler` over the recorded unscaled parameter gradients must
make torch's decisions, step for step: the scale of every step and which steps are skipped.

Why --format fp32: torch's found_inf is any inf or NaN in the float32 .grad (after unscale_); the
fp16 overflow already happened inside the backward, as inf. Multiplying the unscaled trace by the
replay's scale (a power of two) gives back the scaled gradient exactly, so fp32 sees exactly the
non-finite values torch saw. (Replaying the same trace as fp16 would also flag LayerNorm's and the
embeddings' float32 gradients that exceed 65504 once scaled, which torch never casts to fp16.)"""
import csv

import pytest
import torch

import fmtcheck.torch as ft
from conftest import run_cli
from models import MODELS, train

STEPS, INIT, INTERVAL = 300, 2.0 ** 24, 20


@pytest.mark.parametrize("name", sorted(MODELS))
def test_replay_makes_torchs_gradscaler_decisions(name, cli, tmp_path):
    model, batches, loss = MODELS[name]()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=INIT, growth_interval=INTERVAL)
    scales = []  # torch's own scale before each step, read outside the Recorder
    with ft.Recorder(model, tmp_path, scaler=scaler, record=("grad",), verbose=False):
        train(model, opt, batches, loss, STEPS, scaler=scaler, on_step=lambda s, l: scales.append(scaler.get_scale()))
    with open(tmp_path / "scaler.csv") as f:
        torch_rows = list(csv.DictReader(f))
    assert len(torch_rows) == STEPS
    # The run is worth replaying: torch skipped steps and grew the scale again.
    skipped = [int(r["step"]) for r in torch_rows if r["skipped"] == "true"]
    grown = [r for r in torch_rows if float(r["next_scale"]) > float(r["scale"])]
    assert skipped and grown, f"{name}: {len(skipped)} skipped, {len(grown)} growths"
    assert [float(r["next_scale"]) for r in torch_rows] == scales

    run_cli(cli, "scale", tmp_path, "--recipe", "gradscaler", "--format", "fp32", "--tensors", ":grad$",
            "--init-scale", INIT, "--growth-interval", INTERVAL, "--csv", tmp_path / "replay.csv")
    replay = {}
    with open(tmp_path / "replay.csv") as f:
        for r in csv.DictReader(f):
            replay.setdefault(int(r["step"]), (float(r["scale"]), r["skipped"] == "1"))
    differ = [(r["step"], r["scale"], r["skipped"], replay[int(r["step"])]) for r in torch_rows
              if replay[int(r["step"])] != (float(r["scale"]), r["skipped"] == "true")]
    assert not differ, f"{name}: {len(differ)} of {STEPS} steps differ, first {differ[:3]}"
    print(f"{name}: {STEPS} steps, {len(skipped)} skipped, {len(grown)} growths: replay agrees on every step")
