"""torch's real GradScaler, replayed: fp16-autocast training runs on the CPU (the digits MLP, the
sort transformer, a Hugging Face GPT-2 from a config), 300 steps each from a scale high enough that
steps are skipped and a growth interval short enough that the scale grows again, recorded by the
Recorder. `fmtcheck scale --recipe gradscaler` over the recorded unscaled parameter gradients must
make torch's decisions, step for step: the scale of every step and which steps are skipped
(gradscaler_replay.py says why the replay reads the trace as fp32). (Replaying the same trace as fp16
would also flag LayerNorm's and the embeddings' float32 gradients that exceed 65504 once scaled,
which torch never casts to fp16.)"""
import csv

import pytest
import torch

import fmtcheck.torch as ft
from gradscaler_replay import replay
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
    decisions = replay(cli, tmp_path, tmp_path / "replay.csv", INIT, INTERVAL)
    assert decisions.steps == STEPS
    # The run is worth replaying: torch skipped steps and grew the scale again.
    assert decisions.skipped and decisions.grown, f"{name}: {len(decisions.skipped)} skipped, {decisions.grown} growths"
    with open(tmp_path / "scaler.csv") as f:
        assert [float(r["next_scale"]) for r in csv.DictReader(f)] == scales
    assert not decisions.differ, f"{name}: {len(decisions.differ)} of {STEPS} steps differ, first {decisions.differ[:3]}"
    print(f"{name}: {STEPS} steps, {len(decisions.skipped)} skipped, {decisions.grown} growths: replay agrees on every step")
