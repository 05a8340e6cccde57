"""docs/pytorch.md, "Infer as a B200 would": the digits MLP of tests/torch/models.py trained in torch's
float32 on the first 1500 digits, then evaluated on the other 297 in float32 and under
fmtcheck.torch.emulate(recipe="mxfp8", gpu="blackwell") (and two other recipes for comparison):
loss, accuracy, and what the emulated casts lost. Prints what the doc shows; run from the checkout:

    PYTHONPATH=build/python .venv/bin/python docs/examples/infer_as_b200.py"""
import sys
from pathlib import Path

import torch

import fmtcheck.torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "torch"))
from models import SOURCE, DigitsMlp, _csv  # noqa: E402 (the digits MLP and its data)

TRAIN, STEPS, BATCH = 1500, 600, 32
RUNS = [("mxfp8", "blackwell"), ("fp8-current", "hopper"), ("bf16", "blackwell")]


def evaluate(model, x, y):
    with torch.no_grad():
        logits = model(x)
        return torch.nn.functional.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()


def main():
    data = _csv(SOURCE / "data" / "digits" / "digits.csv.gz")
    x, y = torch.tensor(data[:, :64], dtype=torch.float32) / 16, torch.tensor(data[:, 64])
    torch.manual_seed(0)
    model = DigitsMlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(STEPS):  # torch's float32 training
        i = torch.arange(step * BATCH, (step + 1) * BATCH) % TRAIN
        torch.nn.functional.cross_entropy(model(x[i]), y[i]).backward()
        opt.step()
        opt.zero_grad()
    test_x, test_y = x[TRAIN:], y[TRAIN:]

    rows = [("float32 (torch)", *evaluate(model, test_x, test_y), "")]
    reports = []
    for recipe, gpu in RUNS:
        with fmtcheck.torch.emulate(recipe=recipe, gpu=gpu, model=model) as em:
            loss, accuracy = evaluate(model, test_x, test_y)
        cast = sum(t["values"] for t in em.summary.values())
        lost = sum(t["overflow"] + t["saturated"] + t["underflow_to_zero"] for t in em.summary.values())
        rows.append((f"{recipe} on {gpu}", loss, accuracy, f"{lost} of {cast}"))
        reports.append(em.report())
    print(f"{len(test_y)} held-out digits, the MLP trained in float32 ({STEPS} steps on {TRAIN} digits)")
    print(f"{'inference':<24} {'loss':>8} {'accuracy':>9}  values lost at the casts")
    for name, loss, accuracy, lost in rows:
        print(f"{name:<24} {loss:>8.4f} {100 * accuracy:>8.1f}%  {lost}".rstrip())
    print()
    print(reports[0])
    base_loss, base_acc = rows[0][1], rows[0][2]
    print(f"mxfp8 on blackwell against float32 inference of the same weights: loss {rows[1][1] - base_loss:+.4f}, "
          f"accuracy {100 * (rows[1][2] - base_acc):+.1f} points")


if __name__ == "__main__":
    main()
