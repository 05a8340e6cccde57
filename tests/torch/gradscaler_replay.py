"""`fmtcheck scale --recipe gradscaler` over a Recorder's trace, step by step against the scaler.csv
the Recorder wrote from torch's own GradScaler: test_gradscaler.py (CPU runs), test_gpu_captures.py
(the committed GPU run) and cuda/torch/gradscaler_run.py (GPU runs, on the GPU machine) use it.

Why --format fp32: torch's found_inf is any inf or NaN in the float32 .grad (after unscale_); the
fp16 overflow already happened inside the backward, as inf. Multiplying the unscaled trace by the
replay's scale (a power of two) gives back the scaled gradient exactly, so fp32 sees exactly the
non-finite values torch saw."""
import csv
import subprocess
from pathlib import Path
from typing import List, NamedTuple, Tuple


class Decisions(NamedTuple):
    steps: int
    skipped: List[int]  # the steps torch skipped
    grown: int  # steps after which torch grew the scale
    differ: List[Tuple]  # (step, torch's scale, torch's skip, the replay's (scale, skip)) where they differ


def replay(cli, trace: Path, csv_out: Path, init_scale: float, growth_interval: int) -> Decisions:
    with open(trace / "scaler.csv") as f:
        rows = list(csv.DictReader(f))
    args = [cli, "scale", trace, "--recipe", "gradscaler", "--format", "fp32", "--tensors", ":grad$",
            "--init-scale", init_scale, "--growth-interval", growth_interval, "--csv", csv_out]
    r = subprocess.run(list(map(str, args)), capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"fmtcheck scale {trace} failed: {r.stderr}")
    ours = {}
    with open(csv_out) as f:
        for row in csv.DictReader(f):
            ours.setdefault(int(row["step"]), (float(row["scale"]), row["skipped"] == "1"))
    differ = [(r["step"], r["scale"], r["skipped"], ours.get(int(r["step"]))) for r in rows
              if ours.get(int(r["step"])) != (float(r["scale"]), r["skipped"] == "true")]
    return Decisions(len(rows), [int(r["step"]) for r in rows if r["skipped"] == "true"],
                     sum(float(r["next_scale"]) > float(r["scale"]) for r in rows), differ)
