"""How well does an fp32 run predict a real fp16 run's GradScaler? The question a user asks before
switching: record an fp32 run with fmtcheck.torch.Recorder, replay its gradients through
`fmtcheck scale --recipe gradscaler` (fp16, as the scaled gradients would be cast), and compare the
predicted scale and skip of every step with a real torch fp16-autocast run with GradScaler from the
same weights and batches. Once with the parameter gradients alone, once with the activation
gradients too (overflow is usually born in fp16 activation gradients during backward). At the first
step where the prediction differs, the reason is probed: the fp32 gradients (and activation
gradients) are computed again at the real run's own weights of that step (its trace records them)
on the same batch, and replayed at the real scale. If that predicts the real decision, the miss was
the runs drifting apart (the fp32 run never skips, so its weights move on); if not, the overflow was
born in an fp16 intermediate the trace does not hold (inside a module, not at its output).
Then the fp16 run itself emulated: the same loop under fmtcheck.torch.emulate("fp16", "hopper") with
a GradScaler, which follows its own fp16 trajectory (the decisions an H100 or H200 would make).

    PYTHONPATH=build/python .venv/bin/python tests/bench/torch_gradscaler_prediction.py build/tools/fmtcheck

A measurement, not a test: it prints one table (steps agreed, first disagreement) per model."""
import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "torch"))
import fmtcheck.torch as ft  # noqa: E402
from models import MODELS, train  # noqa: E402

STEPS, INIT, INTERVAL = 300, 2.0 ** 24, 20


def torch_decisions(name, out, emulated=False):
    """The scale and skip of every step of a real fp16 run: torch's autocast on this CPU, or the loop
    under emulate(fp16, hopper)."""
    model, batches, loss = MODELS[name]()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=INIT, growth_interval=INTERVAL)
    with ft.Recorder(model, out, scaler=scaler, record=("grad", "weight"), verbose=False) as rec:
        if emulated:
            with ft.emulate("fp16", "hopper", model=model):
                train(model, opt, batches, loss, STEPS, scaler=scaler, autocast=None)
        else:
            train(model, opt, batches, loss, STEPS, scaler=scaler)
    return [(r["scale"], r["skipped"]) for r in rec.scaler_rows]


def row(name, label, real, pred):
    agree = sum(a == b for a, b in zip(real, pred))
    first = next((s for s, (a, b) in enumerate(zip(real, pred)) if a != b), None)
    skips = f"{sum(s for _, s in real)}/{sum(s for _, s in pred)}"
    print(f"{name:12} {label:28} {agree:>4}/{STEPS} {skips:>16} {str(first):>13}")
    return first


def predicted(cli, trace, tensors, out_csv, init=INIT):
    subprocess.run([cli, "scale", str(trace), "--recipe", "gradscaler", "--tensors", tensors, "--init-scale",
                    str(init), "--growth-interval", str(INTERVAL), "--csv", str(out_csv)], check=True,
                   capture_output=True)
    steps = {}
    with open(out_csv) as f:
        for r in csv.DictReader(f):
            steps.setdefault(int(r["step"]), (float(r["scale"]), r["skipped"] == "1"))
    return [steps[s] for s in sorted(steps)]


def at_real_weights(cli, name, real_trace, step, scale, out):
    """The skip an fp32 backward at the real run's weights of `step`, on that step's batch, predicts."""
    from safetensors.torch import load_file

    model, batches, loss = MODELS[name]()
    weights = load_file(real_trace / f"step_{step:06d}.safetensors")
    model.load_state_dict({k[:-len(":weight")]: v for k, v in weights.items() if k.endswith(":weight")}, strict=False)
    for _ in range(step):
        next(batches)
    x, y = next(batches)
    with ft.Recorder(model, out, record=("grad", "activation_grad"), verbose=False) as rec:
        loss(model(x), y).backward()
        rec.step()
    return {label: predicted(cli, out, tensors, out / "pred.csv", init=scale)[0][1]
            for label, tensors in (("parameter gradients", ":grad$"), ("+ activation gradients", "grad$"))}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cli")
    args = p.parse_args()
    print(f"{STEPS} steps from scale 2^24, growth every {INTERVAL} finite steps; the fp32 run's trace replayed as fp16")
    print(f"{'model':12} {'trace':28} {'agree':>7} {'skips real/pred':>16} {'first differ':>13}")
    for name in MODELS:
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            real = torch_decisions(name, d / "fp16")
            model, batches, loss = MODELS[name]()
            opt = torch.optim.SGD(model.parameters(), lr=0.05)
            with ft.Recorder(model, d / "fp32", optimizer=opt, record=("grad", "activation_grad"), verbose=False):
                train(model, opt, batches, loss, STEPS, autocast=None)
            for label, tensors in (("parameter gradients", ":grad$"), ("+ activation gradients", "grad$")):
                first = row(name, label, real, predicted(args.cli, d / "fp32", tensors, d / "pred.csv"))
                if first is not None and label == "parameter gradients":
                    probe = at_real_weights(args.cli, name, d / "fp16", first, real[first][0], d / "probe")
                    print(f"  step {first}: real {'skip' if real[first][1] else 'step'} at scale {real[first][0]:g}; "
                          f"fp32 backward at the real weights: "
                          + ", ".join(f"{'skip' if v else 'step'}" for v in probe.values()))
            row(name, "emulated fp16 on hopper", real, torch_decisions(name, d / "emulated", emulated=True))
    print("Where the fp32 backward at the real run's weights makes the real decision, the miss is drift: the\n"
          "fp32 run kept stepping through the steps fp16 skipped, so its later gradients come from other weights.\n"
          "The emulated run follows its own fp16 trajectory: the tensor core's fp16 GEMMs, not this CPU's.")


if __name__ == "__main__":
    main()
