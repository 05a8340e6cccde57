"""What the Recorder costs a training step: the median time of an fp16-autocast step with
GradScaler, bare and under fmtcheck.torch.Recorder recording every step and every 10th step (grad,
activation, weight: the default), as ratios to the bare step measured in the same run, on the
digits MLP, the sort transformer and a GPT-2 from a config.

    PYTHONPATH=build/python .venv/bin/python tests/bench/torch_recorder_overhead.py [--steps 60]"""
import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "torch"))
import fmtcheck.torch as ft  # noqa: E402
from models import MODELS  # noqa: E402


def step_times(name, steps, every):
    """Per-step wall times of `steps` steps after 10 warm-up steps, and whether each was recorded;
    every None: no Recorder."""
    model, batches, loss_fn = MODELS[name]()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)
    times = []
    with tempfile.TemporaryDirectory() as d:
        recorder = ft.Recorder(model, d, every=every, scaler=scaler, verbose=False) if every else None
        if recorder:
            recorder.start()
        for s in range(steps + 10):
            x, y = next(batches)
            t = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.float16):
                loss = loss_fn(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
            if s >= 10:
                times.append((time.perf_counter() - t, every is not None and s % every == 0))
        if recorder:
            recorder.close(report=False)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40, help="steps per round (three rounds per setting)")
    args = p.parse_args()
    print(f"step time, 3 x {args.steps} steps per setting, torch {torch.__version__} on {torch.get_num_threads()} threads")
    print(f"{'model':12} {'bare':>10} {'every step':>16} {'every 10th':>16}")
    for name in MODELS:
        # Three rounds, the settings in turn, so that a change in the machine's load meets all three.
        runs = {None: [], 1: [], 10: []}
        for _ in range(3):
            for every in runs:
                runs[every] += step_times(name, args.steps, every)
        bare = statistics.median(t for t, _ in runs[None])
        every1 = statistics.median(t for t, _ in runs[1])
        # Every 10th step: nine steps at the median of the unrecorded ones, one at the recorded median.
        plain = statistics.median(t for t, recorded in runs[10] if not recorded)
        recorded = statistics.median(t for t, recorded in runs[10] if recorded)
        every10 = 0.9 * plain + 0.1 * recorded
        cells = [f"{every1 * 1e3:.1f} ms ({every1 / bare:.1f}x)", f"{every10 * 1e3:.1f} ms ({every10 / bare:.2f}x)"]
        print(f"{name:12} {bare * 1e3:>7.1f} ms {cells[0]:>16} {cells[1]:>16}")
    print("medians; every 10th: 0.9 x the unrecorded and 0.1 x the recorded steps' medians. Record every\n"
          "step for an exact GradScaler replay; every 10th step costs a long run far less.")


if __name__ == "__main__":
    main()
