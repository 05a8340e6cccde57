"""torch's real GradScaler on the GPU, recorded by fmtcheck.torch.Recorder and replayed by `fmtcheck
scale`: tests/torch/test_gradscaler.py's runs (autocast fp16 on CUDA this time), run on a lent GPU.

    PYTHONPATH=.hwcarry/python python3 cuda/torch/gradscaler_run.py OUTDIR FMTCHECK_CLI

The digits MLP, the sort transformer and a 2-layer GPT-2 each train 300 steps from a scale of 2^24
with a growth interval of 20, so that steps are skipped and the scale grows again. The replay runs
here, on the GPU machine (the traces are too large to carry back, but for the MLP's first 100 steps,
kept in OUTDIR/gradscaler-mlp/ for CI: tests/torch/test_gpu_captures.py replays them); every
model's 300 decisions (the Recorder's scaler.csv) are kept as OUTDIR/gradscaler-MODEL.csv, for CI to
hold emulate's runs to. Writes OUTDIR/gradscaler.txt: per model the steps, skips, growths and how
many steps the replay decides as torch did. Exit 2 without a GPU."""
import shutil
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "torch"))
import fmtcheck.torch as ft  # noqa: E402
from gradscaler_replay import replay  # noqa: E402
from models import MODELS, train  # noqa: E402

STEPS, INIT, INTERVAL, KEPT = 300, 2.0 ** 24, 20, 100


def run(name, trace: Path, steps):
    model, batches, loss_fn = MODELS[name]()
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cuda", init_scale=INIT, growth_interval=INTERVAL)
    with ft.Recorder(model, trace, scaler=scaler, record=("grad",), verbose=False):
        train(model, opt, batches, loss_fn, steps, scaler=scaler, device="cuda")


def main(out: Path, cli: str):
    if not torch.cuda.is_available():
        print("fmtcheck: no GPU found: torch.cuda.is_available() is False")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"torch {torch.__version__} GradScaler on {torch.cuda.get_device_name()}: autocast fp16, "
             f"init scale 2^24, growth interval {INTERVAL}",
             "replayed by fmtcheck scale --recipe gradscaler"]
    failed = False
    for name in ("mlp", "transformer", "gpt2"):
        with tempfile.TemporaryDirectory() as tmp:
            torch.manual_seed(0)
            run(name, Path(tmp), STEPS)
            d = replay(cli, Path(tmp), Path(tmp) / "replay.csv", INIT, INTERVAL)
            shutil.copyfile(Path(tmp) / "scaler.csv", out / f"gradscaler-{name}.csv")
        lines.append(f"{name}: {d.steps} steps, {len(d.skipped)} skipped, {d.grown} growths: the replay decides "
                     f"{d.steps - len(d.differ)} of {d.steps} as torch did")
        failed |= bool(d.differ) or not d.skipped or not d.grown
        print(lines[-1], flush=True)
    # The MLP's first KEPT steps, kept for CI's replay.
    kept = out / "gradscaler-mlp"
    shutil.rmtree(kept, ignore_errors=True)
    torch.manual_seed(0)
    run("mlp", kept, KEPT)
    with tempfile.TemporaryDirectory() as tmp:
        d = replay(cli, kept, Path(tmp) / "replay.csv", INIT, INTERVAL)
    lines.append(f"mlp, first {KEPT} steps kept for CI: {len(d.skipped)} skipped, {d.grown} growths, "
                 f"{d.steps - len(d.differ)} of {d.steps} agree")
    failed |= bool(d.differ)
    lines.append("FAIL: the replay differs from torch" if failed else
                 "PASS: fmtcheck scale decides every GPU step as torch's GradScaler did")
    (out / "gradscaler.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-2:]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
