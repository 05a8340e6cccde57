"""The Recorder: what it writes (checked against tensors the test captures itself), that the CLI
reads its trace (analyze's verdict and counts equal the Recorder's; scale reads the manifest and the
shards), steps by scaler, optimizer or step(), torch.distributed, and one clear Error for bad input
with no half-written step file."""
import csv
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file

import fmtcheck.torch as ft
from conftest import run_cli
from models import DigitsMlp, MODELS, train

ALL = ("grad", "activation", "weight", "activation_grad")


def batch(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(16, 64, generator=g) * 4, torch.randint(0, 10, (16,), generator=g)


def fp16_steps(model, scaler, opt, steps, captured):
    """fp16 autocast steps; `captured` gets, per step, what the test itself sees: the weights before
    the forward, the leaf outputs (own hooks), the scaled .grad and the scale before update()."""
    seen = {}
    hooks = [m.register_forward_hook(lambda m, i, o, n=n: seen.__setitem__(n, o.detach().clone()))
             for n, m in model.named_modules() if n]
    for s in range(steps):
        x, y = batch(s)
        weights = {n: p.detach().clone() for n, p in model.named_parameters()}
        with torch.autocast("cpu", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        captured.append({"weights": weights, "outputs": dict(seen), "scale": scaler.get_scale(),
                         "grads": {n: p.grad.detach().clone() for n, p in model.named_parameters()}})
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
    for h in hooks:
        h.remove()


def test_step_files_hold_what_torch_computed(tmp_path):
    torch.manual_seed(0)
    model = DigitsMlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
    captured = []
    with ft.Recorder(model, tmp_path, scaler=scaler, record=ALL, verbose=False) as rec:
        fp16_steps(model, scaler, opt, 4, captured)
    assert rec.recorded_steps == [0, 1, 2, 3]
    for step, c in enumerate(captured):
        t = load_file(tmp_path / f"step_{step:06d}.safetensors")
        names = {f"{n}:{r}" for n in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias") for r in ("weight", "grad")}
        names |= {f"{m}:activation{g}" for m in ("fc1", "fc2") for g in ("", "_grad")}
        assert set(t) == names
        inv = np.float32(1 / c["scale"])  # a power of two: the product is exact
        for n, w in c["weights"].items():
            assert np.array_equal(t[f"{n}:weight"], w.numpy())
            assert np.array_equal(t[f"{n}:grad"], c["grads"][n].numpy() * inv)
        for m in ("fc1", "fc2"):
            assert t[f"{m}:activation"].dtype == np.float16  # as autocast computed it
            assert np.array_equal(t[f"{m}:activation"], c["outputs"][m].numpy())
    with open(tmp_path / "scaler.csv") as f:
        rows = list(csv.DictReader(f))
    assert [float(r["scale"]) for r in rows] == [c["scale"] for c in captured]


def verdict_of(text):
    return text[text.index("verdict"):].split("\n", 1)[1]


def test_the_cli_reads_the_trace_and_says_the_same(tmp_path, cli):
    model, batches, loss = MODELS["mlp"]()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    with ft.Recorder(model, tmp_path, scaler=scaler, verbose=False) as rec:
        train(model, opt, batches, loss, 3, scaler=scaler)
    files = sorted(str(p) for p in tmp_path.glob("step_*.safetensors"))
    _, out, _ = run_cli(cli, "analyze", *files, "--csv", tmp_path / "cli.csv")
    # The same verdict, word for word, and the same per-step counts in summary.csv.
    assert verdict_of(out).rstrip() == rec.analysis().verdict().rstrip()
    assert rec.analysis().verdict() in (tmp_path / "verdict.txt").read_text()
    cli_rows = {}
    with open(tmp_path / "cli.csv") as f:
        for r in csv.DictReader(f):
            step = int(re.search(r"step_(\d+)", r["file"]).group(1))
            cli_rows[(step, r["tensor"], r["format"], r["measure"])] = float(r["value"])
    with open(tmp_path / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert len(summary) == 3 * 10 * 4  # steps x (4 weights, 4 grads, 2 activations) x formats
    for r in summary:
        for m in ("values", "overflow", "saturated", "underflow_to_zero", "amax"):
            assert float(r[m]) == cli_rows[(int(r["step"]), r["tensor"], r["format"], m)]
    # The report's table of the tensors that lose most, ordered as the CLI's counts order them.
    lost = {}
    for (step, tensor, fmt, m), v in cli_rows.items():
        if m in ("values", "overflow", "saturated", "underflow_to_zero"):
            lost.setdefault((tensor, fmt), {}).setdefault(m, 0)
            lost[(tensor, fmt)][m] += v
    share = {}
    for (tensor, fmt), c in lost.items():
        share[tensor] = max(share.get(tensor, 0), (c["overflow"] + c["saturated"] + c["underflow_to_zero"]) / c["values"])
    table = rec.worst_tensors().splitlines()[2:]
    expected = sorted((t for t in share if share[t] > 0), key=lambda t: -share[t])[:8]
    assert [row.split()[0] for row in table] == expected


def test_every_nth_step_with_an_optimizer_and_shards(tmp_path, cli):
    model, batches, loss = MODELS["transformer"]()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    with ft.Recorder(model, tmp_path, every=3, optimizer=opt, record=("grad", "weight"), shard_bytes=20_000,
                     verbose=False) as rec:
        train(model, opt, batches, loss, 7, autocast=torch.bfloat16)
    assert rec.recorded_steps == [0, 3, 6] and rec.step_index == 7
    index = tmp_path / "step_000003.safetensors.index.json"
    shards = sorted(tmp_path.glob("step_000003-*.safetensors"))
    assert index.exists() and len(shards) > 1
    # analyze reads the step's index; scale reads the manifest of steps 0, 3 and 6 (not a gap).
    _, out, _ = run_cli(cli, "analyze", index, "--formats", "bf16")
    assert "step_000003.safetensors.index.json: the whole model: 32 tensors" in out
    _, out, _ = run_cli(cli, "scale", tmp_path / "steps.txt", "--recipe", "current", "--tensors", ":grad$")
    assert "steps 3, skipped 0" in out


def test_step_is_called_by_the_loop_without_a_scaler_or_optimizer(tmp_path):
    model = DigitsMlp()
    with ft.Recorder(model, tmp_path, record=("activation",), verbose=False) as rec:
        for s in range(2):
            model(batch(s)[0]).sum().backward()
            rec.step()
        with torch.no_grad():
            model(batch(9)[0])  # evaluation: not recorded
        rec.step()
    assert rec.recorded_steps == [0, 1]
    with pytest.raises(ft.Error, match="do not call step"):
        with ft.Recorder(model, tmp_path / "b", optimizer=torch.optim.SGD(model.parameters(), lr=1),
                         verbose=False) as r:
            r.step()


@pytest.mark.parametrize("factors", [{}, {"growth_factor": 4.0, "backoff_factor": 0.25}])
def test_the_report_fits_and_its_replay_command_makes_torchs_decisions(factors, tmp_path, capsys, cli):
    model, batches, loss = MODELS["mlp"]()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=5, **factors)
    with ft.Recorder(model, tmp_path, scaler=scaler) as rec:
        train(model, opt, batches, loss, 12, scaler=scaler)
    out = capsys.readouterr().out
    assert all(len(line) <= 100 for line in out.splitlines())
    skipped = sum(r["skipped"] for r in rec.scaler_rows)
    assert f"GradScaler: {skipped} of 12 steps skipped for inf/NaN gradients" in out and skipped > 0
    # The last lines are the command that replays the run: run it as printed.
    command = " ".join(out[out.index("replay torch's decisions: "):].split()[3:])
    assert command.startswith("fmtcheck scale ")
    _, replay, _ = run_cli(cli, *command.replace("':grad$'", ":grad$").split()[1:])
    assert f"steps 12, skipped {skipped}, final scale {int(rec.scaler_rows[-1]['next_scale'])}" in replay


def test_distributed_ranks_write_their_own_files(tmp_path, cli):
    script = f"""
import os, sys, torch, torch.distributed as dist
sys.path.insert(0, {str(os.path.dirname(__file__))!r})
import fmtcheck.torch as ft
from models import DigitsMlp
rank = int(sys.argv[1])
dist.init_process_group("gloo", init_method="file://{tmp_path}/rendezvous", rank=rank, world_size=2)
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(DigitsMlp())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with ft.Recorder(model, {str(tmp_path / 'trace')!r}, optimizer=opt, record=("grad",), verbose=False):
    for s in range(2):
        torch.manual_seed(10 * rank + s)
        model(torch.randn(8, 64)).sum().backward()
        opt.step()
        opt.zero_grad()
dist.destroy_process_group()
"""
    procs = [subprocess.Popen([sys.executable, "-c", script, str(r)], stderr=subprocess.PIPE, text=True) for r in (0, 1)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    partials = []
    for rank in (0, 1):
        d = tmp_path / "trace" / f"rank_{rank:05d}"
        files = sorted(str(p) for p in d.glob("step_*.safetensors"))
        assert len(files) == 2
        partials.append(tmp_path / f"{rank}.partial")
        run_cli(cli, "analyze", *files, "--partial", partials[-1])
    _, out, _ = run_cli(cli, "merge", *partials)
    assert "verdict" in out
    # DDP averages the gradients: both ranks recorded the same ones.
    a = load_file(tmp_path / "trace" / "rank_00000" / "step_000001.safetensors")
    b = load_file(tmp_path / "trace" / "rank_00001" / "step_000001.safetensors")
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_bad_input_is_one_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cases = [
        (lambda: ft.Recorder(torch.nn.ReLU(), tmp_path), "the model (ReLU) has no parameters to record"),
        (lambda: ft.Recorder(torch.nn.Linear(2, 2, device="meta"), tmp_path), "tensor weight is on the meta device"),
        (lambda: ft.Recorder(DigitsMlp(), tmp_path, record=("grads",)), "record=('grads',): expected some of"),
        (lambda: ft.Recorder(DigitsMlp(), tmp_path, every=0), "every=0: expected a whole number of steps"),
        (lambda: ft.Recorder(DigitsMlp(), tmp_path, formats="fp17"), "fp17"),
        (lambda: ft.Recorder(DigitsMlp(), blocker / "trace").start(), f"cannot write to out_dir {blocker / 'trace'}"),
    ]
    for make, message in cases:
        with pytest.raises(ft.Error) as e:
            make()
        assert message in str(e.value) and "\n" not in str(e.value), str(e.value)
    with pytest.raises(ft.Error, match="dtype torch.int64"):
        ft.Recorder(torch.nn.Embedding(3, 2).to(torch.int64) if False else _IntParam(), tmp_path)


class _IntParam(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = torch.nn.Parameter(torch.zeros(2, dtype=torch.int64), requires_grad=False)


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("a full disk needs a small tmpfs, and mounting one needs root")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_leaves_no_half_written_step(small_disk):
    model = torch.nn.Linear(64, 64)  # 16 KiB of weights: the fourth step's file no longer fits
    with pytest.raises(ft.Error, match=r"cannot write .*step_0000\d\d.safetensors: No space left on device$"):
        with ft.Recorder(model, small_disk, record=("weight",), verbose=False) as rec:
            for s in range(20):
                model(torch.randn(2, 64)).sum().backward()
                rec.step()
    names = sorted(os.listdir(small_disk))
    steps = [n for n in names if n.startswith("step_")]
    assert not [n for n in names if n.startswith(".")], names  # no temporary file left
    for n in steps:  # every step file there is whole
        assert len(load_file(small_disk / n)) == 2
    lines = (small_disk / "steps.txt").read_text().splitlines()
    assert len(lines) == 1 + len(steps) and all(line.endswith(f"# step {i}") for i, line in enumerate(lines[1:]))
