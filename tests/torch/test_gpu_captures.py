"""What PyTorch computed on a lent H200 (docs/hardware/NVIDIA-H200/torch/, written by
cuda/run-torch-on-gpu.sh), replayed against fmtcheck on the CPU. The GPU is the oracle: every
expected value below is a code torch's CUDA kernels produced.

- casts-cases.npz: torch's CUDA x.to(dtype) on a sample of the 2^32 float32 inputs the GPU run swept
  exhaustively (uniform bit patterns, the overflow and underflow ranges, NaNs), per dtype.
- captures-RECIPE.pt.xz: every GEMM (and every float32 -> fp16/bf16 cast) of one training step of the
  digits MLP, the sort transformer and a 2-layer GPT-2 under autocast fp16 and bf16 and with TF32
  matmuls, and the MLP's FP8 forward through torch._scaled_mm, with the GPU's outputs;
  captures.json holds the cuBLAS settings they ran under.
- gradscaler-mlp/: a GPU fp16 + GradScaler run of the MLP recorded by the Recorder (100 steps).
"""
import json
import lzma
import subprocess
import sys
from collections import Counter
from io import BytesIO

import numpy as np
import pytest
import torch

import fmtcheck
import fmtcheck.torch as ft
from conftest import SOURCE
from gradscaler_replay import replay

RUN = SOURCE / "docs" / "hardware" / "NVIDIA-H200" / "torch"
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}
# torch's CUDA casts: dtype -> (fmtcheck format, overflow, nan). fp16 and bf16 NaNs are cvt's
# canonical 0x7FFF (nan="cuda"; torch's CPU gives x86's); e4m3fn does not saturate on the GPU (its
# CPU cast does); the FP8 NaNs are c10's, as on the CPU (nan="torch").
CUDA_CASTS = {"fp16": ("fp16", "nosat", "cuda"), "bf16": ("bf16", "nosat", "cuda"),
              "e4m3fn": ("e4m3", "nosat", "torch"), "e5m2": ("e5m2", "nosat", "torch"),
              "e4m3fnuz": ("e4m3fnuz", "nosat", "torch"), "e5m2fnuz": ("e5m2fnuz", "nosat", "torch")}
GEMM_OPS = {"mm": torch.mm, "addmm": torch.addmm, "bmm": torch.bmm, "_scaled_mm": torch._scaled_mm}


def bits(t: torch.Tensor) -> np.ndarray:
    t = t.contiguous()
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[t.element_size()]).numpy().view(
        UNSIGNED[t.element_size()])


def captures(recipe):
    with lzma.open(RUN / f"captures-{recipe}.pt.xz") as f:
        return torch.load(BytesIO(f.read()), weights_only=True)


@pytest.fixture(scope="module")
def cases():
    return np.load(RUN / "casts-cases.npz")


@pytest.mark.parametrize("name", list(CUDA_CASTS))
def test_cuda_casts_are_fmtchecks(name, cases):
    fmt, overflow, nan = CUDA_CASTS[name]
    inputs, theirs = cases[f"{name}_inputs"], cases[f"{name}_codes"]
    assert inputs.size > 50000
    ours = fmtcheck.convert(inputs.view(np.float32), fmt, overflow=overflow, nan=nan).codes
    differ = np.flatnonzero(ours.view(theirs.dtype) != theirs)
    assert differ.size == 0, f"{name}: {differ.size} of {inputs.size} differ, first input {inputs[differ[0]]:#010x}"


def test_cuda_e4m3fn_cast_is_not_the_cpus(cases):
    """The finding, in the GPU's own codes: every input from 464 up in magnitude became NaN on the GPU
    (the infinities too, casts.txt counts them), where torch's CPU cast (run here) gives +-448, as
    does fmtcheck's sat."""
    inputs, gpu = cases["e4m3fn_inputs"], cases["e4m3fn_codes"]
    values = inputs.view(np.float32)
    over = ~np.isnan(values) & (np.abs(values) >= 464)
    assert over.sum() > 1000
    assert set(np.unique(gpu[over] & 0x7F)) == {0x7F}
    cpu = bits(torch.from_numpy(values[over].copy()).to(torch.float8_e4m3fn))
    assert set(np.unique(cpu & 0x7F)) == {0x7E}


def replay_gemm(call, recipe):
    """The captured call again, on CPU tensors holding the operands' values, under emulate."""
    args = [a.float() if isinstance(a, torch.Tensor) and a.dtype in (torch.float16, torch.bfloat16) else a
            for a in call["args"]]
    with ft.emulate(recipe=recipe, gpu="hopper"):
        return GEMM_OPS[call["op"]](*args, **call["kwargs"]).to(call["out"].dtype)


@pytest.mark.parametrize("recipe", ["fp16", "bf16", "fp8"])
def test_autocast_and_scaled_mm_gemms_are_emulates(recipe):
    """Every GEMM of the autocast steps is emulate's on hopper under the same recipe, bit for bit (the
    forward's addmm with its bias epilogue, the backward's two mm per layer, attention's bmm), and
    every _scaled_mm is emulate's FP8 GEMM (promotion every 128 products without fast accumulation);
    every float32 -> fp16/bf16 cast is convert's under CUDA's policy."""
    outputs, counts = 0, Counter()
    for call in captures(recipe):
        if call["op"] == "cast":
            fmt, overflow, nan = CUDA_CASTS["fp16" if call["out"].dtype == torch.float16 else "bf16"]
            ours = fmtcheck.convert(call["args"][0].numpy(), fmt, overflow=overflow, nan=nan).codes.view(np.uint16)
        else:
            ours = bits(replay_gemm(call, "fp32" if recipe == "fp8" else recipe))
        differ = int((ours != bits(call["out"])).sum())
        assert differ == 0, f"{recipe} {call['model']} {call['op']} {[tuple(a.shape) for a in call['args']]}: " \
                            f"{differ} of {call['out'].numel()} differ"
        outputs += call["out"].numel()
        counts[call["op"]] += 1
    assert counts["mm"] + counts["_scaled_mm"] > 0 and (recipe == "fp8" or counts["cast"] > 0)
    print(f"{recipe}: {dict(counts)}: {outputs} outputs, all bit for bit")


def tf32(t: torch.Tensor) -> np.ndarray:
    """float32 values rounded to TF32 codes, nearest-even: how cuBLAS's TF32 GEMMs read operands."""
    return fmtcheck.convert(np.ascontiguousarray(t.numpy()), "tf32", round="rne").codes


def split_k_gemm(call, split):
    """The call as fmtcheck.gemm on hopper with TF32 (rne) operands, K split into `split` slices
    summed in float32, and addmm's bias added in float32 after the sum (cuBLAS's bias epilogue).
    split 0: a float32 kernel without tensor cores instead (an FMA chain in K order)."""
    op, args = call["op"], call["args"]
    if split == 0:
        return replay_gemm(call, "fp32").numpy()
    a, b = (args[1], args[2]) if op == "addmm" else (args[0], args[1])
    if op == "bmm":
        return np.stack([fmtcheck.gemm(tf32(x), tf32(y), model="hopper", input="tf32", split_k=split)
                         for x, y in zip(a, b)])
    d = fmtcheck.gemm(tf32(a), tf32(b), model="hopper", input="tf32", split_k=split)
    return d + args[0].numpy() if op == "addmm" else d


def test_tf32_gemms_are_rne_operands_and_cublas_split_k():
    """torch's TF32 matmuls (allow_tf32) run cuBLAS kernels that round the float32 operands to TF32
    nearest-even, not the truncation of the tensor core reading float32 registers (emulate's and
    fmtcheck train's tf32, proven on fmtcheck's own kernels), and split K into slices by shape; some
    small batched products run a float32 kernel without tensor cores (split 0 here). Each call's
    kernel is found on the first call of its shape and layout; every later call of the same shape
    and layout (held out) must match with that one. Which kernel cuBLAS picks is its heuristic's
    choice, which fmtcheck does not predict; every call cuBLAS ran unsplit is emulate's tf32-rne
    recipe bit for bit (the addmm's bias, the batched products), and emulate's tf32 differs from
    these GEMMs (asserted)."""
    splits, held_out, emulate_differs, rne_differs, unsplit, outputs = {}, 0, 0, 0, 0, 0
    for call in captures("tf32"):
        key = (call["op"], tuple(tuple(a.shape) for a in call["args"]), tuple(call["strides"]))
        theirs = bits(call["out"])
        k = call["args"][-1].shape[-2]
        if key in splits:
            held_out += 1
            candidates = [splits[key]]
        else:
            candidates = [s for s in range(0, k // 4 + 1) if s == 0 or k % s == 0]
        found = next((s for s in candidates
                      if np.array_equal(split_k_gemm(call, s).astype(np.float32).view(np.uint32), theirs)), None)
        assert found is not None, f"{key}: no split of K = {k} nor an FMA chain gives the GPU's bits" + \
                                  (f" (split {splits[key]} fitted on an earlier call)" if key in splits else "")
        splits.setdefault(key, found)
        emulate_differs += int((bits(replay_gemm(call, "tf32")) != theirs).sum())
        rne = bits(replay_gemm(call, "tf32-rne"))
        rne_differs += int((rne != theirs).sum())
        if found == 1:
            unsplit += 1
            assert np.array_equal(rne, theirs), f"{key}: emulate's tf32-rne is not cuBLAS's unsplit kernel"
        outputs += theirs.size
    assert held_out >= 10 and unsplit >= 30
    assert emulate_differs > outputs // 2 and rne_differs < emulate_differs // 2
    print(f"tf32: {len(splits)} shapes and layouts, (split, shapes) {sorted(Counter(splits.values()).items())}")
    print(f"  {held_out} held-out calls match; of {outputs} outputs emulate's tf32 differs on {emulate_differs}, "
          f"tf32-rne on {rne_differs} (its {unsplit} unsplit calls bit for bit)")


def test_capture_settings():
    settings = json.loads((RUN / "captures.json").read_text())
    assert settings["device"] == "NVIDIA H200" and settings["recipes"]["tf32"]["allow_tf32"]
    assert not settings["recipes"]["fp16"]["allow_tf32"]


def test_gpu_gradscaler_run_is_replayed(cli, tmp_path):
    """`fmtcheck scale` makes the GPU run's GradScaler decisions on every recorded step."""
    d = replay(cli, RUN / "gradscaler-mlp", tmp_path / "replay.csv", 2.0 ** 24, 20)
    assert d.steps == 100 and d.skipped and d.grown
    assert not d.differ, f"{len(d.differ)} of {d.steps} steps differ, first {d.differ[:3]}"


def test_the_gpu_script_rehearses_without_a_gpu(cli, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: cuda/run-torch-on-gpu.sh would run for real")
    r = subprocess.run(["bash", str(SOURCE / "cuda" / "run-torch-on-gpu.sh"), str(tmp_path), cli, "--rehearse"],
                       capture_output=True, text=True, env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin",
                                                            "PYTHONPATH": ":".join(sys.path)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("no GPU found") == 4
