"""docs/pytorch.md, "Train your model as an H100 in FP8 would": the digits MLP of tests/torch/models.py
trained by an ordinary torch loop under fmtcheck.torch.emulate(recipe="fp8-current", gpu="hopper"),
watched by the Recorder (the emulated casts' counts per step in the trace), next to the same loop in
torch's float32 from the same weights and batches. Prints what the doc shows; run from the checkout:

    PYTHONPATH=build/python .venv/bin/python docs/examples/train_as_h100.py [trace_dir]"""
import copy
import sys
import tempfile
from pathlib import Path

import torch

import fmtcheck.torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "torch"))
from models import digits  # noqa: E402 (the digits MLP, its batches and cross-entropy)

STEPS = 200


def fit(model, opt, batches, loss_fn, steps):
    """The user's training loop, unchanged by emulate; returns each step's loss."""
    losses = []
    for step in range(steps):
        x, y = next(batches)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


def main():
    trace = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    model, batches, loss_fn = digits(seed=0)
    reference = copy.deepcopy(model)  # the same initial weights, for torch's float32
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    with fmtcheck.torch.emulate(recipe="fp8-current", gpu="hopper", model=model) as em, \
            fmtcheck.torch.Recorder(model, trace, optimizer=opt, record=("grad",), every=20, emulate=em):
        losses = {"fp8-current": fit(model, opt, batches, loss_fn, STEPS)}
    _, batches, _ = digits(seed=0)  # the same batches again
    losses["float32"] = fit(reference, torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9), batches,
                            loss_fn, STEPS)

    shown = [*range(0, STEPS, 40), STEPS - 1]
    print("\ntraining loss at step" + "".join(f"{s:>8}" for s in shown) + "  last 20 steps' mean")
    for run, curve in losses.items():
        print(f"{run:<21}" + "".join(f"{curve[s]:>8.4f}" for s in shown) + f"{sum(curve[-20:]) / 20:>22.4f}")
    gap = (sum(losses["fp8-current"][-20:]) - sum(losses["float32"][-20:])) / 20
    print(f"fp8-current on hopper ends {gap:+.4f} from float32 in the mean loss of the last 20 steps")


if __name__ == "__main__":
    main()
