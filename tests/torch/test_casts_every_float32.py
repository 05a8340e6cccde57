"""torch's own CPU casts, `x.to(dtype)`, against fmtcheck.convert on every float32 input (2^32 per dtype).

Each dtype has one fmtcheck policy that must give torch's bits on every input: nearest-even, the
overflow mode torch's cast takes, and `nan="torch"` (lib/src/core/nan_rules.cpp), the convention
written down from what torch gives. torch is the oracle here; nothing expected comes from fmtcheck.
How torch differs from IEEE and from ml_dtypes is counted by torch_cast_differences.py (docs/formats.md,
"torch's casts").

The inputs go through in chunks of 2^24 whose buffers are made once: the chunk's bit patterns (a
numpy array that a torch tensor shares), torch's result tensor (copy_ into it is the kernel
x.to(dtype) runs: _to_copy allocates and calls copy_), fmtcheck's codes, and the comparison's mask.
"""
import json
import platform
from typing import NamedTuple

import numpy as np
import pytest
import torch

import fmtcheck
from conftest import run_cli

CHUNK = 1 << 24
ALL = 1 << 32


class Cast(NamedTuple):
    dtype: torch.dtype
    fmt: str  # fmtcheck's name
    overflow: str  # the overflow mode that reproduces torch


CASTS = {
    "fp16": Cast(torch.float16, "fp16", "nosat"),
    "bf16": Cast(torch.bfloat16, "bf16", "nosat"),
    # torch's e4m3fn cast saturates finite overflow and infinities to +-448 (sat); NaN stays NaN.
    "e4m3fn": Cast(torch.float8_e4m3fn, "e4m3", "sat"),
    "e5m2": Cast(torch.float8_e5m2, "e5m2", "nosat"),
    "e4m3fnuz": Cast(torch.float8_e4m3fnuz, "e4m3fnuz", "nosat"),
    "e5m2fnuz": Cast(torch.float8_e5m2fnuz, "e5m2fnuz", "nosat"),
}

pytestmark = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                                reason="torch's NaN bits were measured on x86-64; other CPUs run other kernels")


def vectorised():
    """Whether torch's contiguous casts run its AVX2/AVX-512 kernels. Under ATEN_CPU_CAPABILITY=default
    they run the scalar c10 code, whose bfloat16 NaN differs (0x7FC0, not 0xFFFF)."""
    return torch.backends.cpu.get_cpu_capability() != "DEFAULT"


def nan_convention(name, scalar_path):
    # bfloat16 is the one dtype whose NaN depends on the kernel: c10's scalar round_to_nearest_even
    # returns 0x7FC0, which is the canonical convention; ATen's vectorised conversion gives 0xFFFF.
    if name == "bf16" and scalar_path:
        return "canonical"
    return "torch"


def unsigned(width):
    return {1: (torch.uint8, np.uint8), 2: (torch.int16, np.uint16)}[width]


def sweep(name, strided=False):
    """Returns (count of differing inputs, the first few as (input, torch, fmtcheck) bits) over all 2^32
    float32 inputs. strided: torch reads every second float32 of a buffer twice the chunk's size (the
    non-contiguous input its vectorised kernels do not take)."""
    cast = CASTS[name]
    nan = nan_convention(name, strided or not vectorised())
    bits = np.arange(CHUNK, dtype=np.uint32)  # the chunk's float32 bit patterns, advanced in place
    values = bits.view(np.float32)
    if strided:
        spread = np.zeros(2 * CHUNK, dtype=np.uint32)
        source = torch.from_numpy(spread.view(np.float32))[::2]
    else:
        source = torch.from_numpy(values)
    result = torch.empty(CHUNK, dtype=cast.dtype)
    width = result.element_size()
    torch_int, np_int = unsigned(width)
    theirs = result.view(torch_int).numpy().view(np_int)
    ours = np.empty(CHUNK, dtype=np_int)
    # Equal chunks are the rule: compare 8 bytes at a time, and element by element only where that differs.
    words = CHUNK * width // 8
    differ_words = np.empty(words, dtype=bool)
    differ = np.empty(CHUNK, dtype=bool)
    count, first = 0, []
    for start in range(0, ALL, CHUNK):
        if strided:
            spread[::2] = bits
        result.copy_(source)
        if start >> 24 in (0x7F, 0xFF):
            # These chunks hold the infinities, NaNs and overflows: that copy_ is x.to(dtype)'s kernel.
            assert torch.equal(source.to(cast.dtype).view(torch_int), result.view(torch_int)), hex(start)
        fmtcheck.convert(values, cast.fmt, overflow=cast.overflow, nan=nan, out=ours)
        np.not_equal(theirs.view(np.uint64), ours.view(np.uint64), out=differ_words)
        if differ_words.any():
            np.not_equal(theirs, ours, out=differ)
            where = np.flatnonzero(differ)
            count += where.size
            first += [(int(bits[i]), int(theirs[i]), int(ours[i])) for i in where[:max(0, 8 - len(first))]]
        bits += np.uint32(CHUNK)
    return count, first, nan


def report(name, count, first, nan, strided=False):
    cast = CASTS[name]
    hexw = 2 * torch.empty(0, dtype=cast.dtype).element_size()
    rows = "; ".join(f"{x:#010x}: torch {t:#0{hexw + 2}x}, fmtcheck {o:#0{hexw + 2}x}" for x, t, o in first)
    path = "strided input (scalar kernel)" if strided else f"contiguous input ({torch.backends.cpu.get_cpu_capability()})"
    return (f"torch {torch.__version__} .to({cast.dtype}) on {path} and fmtcheck.convert(..., {cast.fmt!r}, "
            f"overflow={cast.overflow!r}, nan={nan!r}) differ on {count} of 2^32 float32 inputs; first: {rows}")


@pytest.mark.parametrize("name", list(CASTS))
def test_every_float32(name):
    count, first, nan = sweep(name)
    assert count == 0, report(name, count, first, nan)


def test_every_float32_bf16_scalar_path():
    """torch's non-vectorised bfloat16 cast (strided, 0-dim or ATEN_CPU_CAPABILITY=default tensors) gives
    every NaN as 0x7FC0, not 0xFFFF: the canonical convention, on every input."""
    count, first, nan = sweep("bf16", strided=True)
    assert count == 0, report("bf16", count, first, nan, strided=True)


# Hand-worked examples of what each cast does (docs/formats.md, "torch's casts"): float32 bits ->
# torch's code. They pin the behaviour the conventions were written from, independently of fmtcheck.
EXAMPLES = {
    "fp16": {0x7FC12345: 0x7E09, 0xFFC00000: 0xFE00, 0x7F800001: 0x7E00, 0x477FF000: 0x7C00},  # 65520 -> inf
    "bf16": {0x7FC00000: 0xFFFF, 0x7F800001: 0xFFFF, 0xFFC12345: 0xFFFF, 0x7F7FFFFF: 0x7F80},
    "e4m3fn": {0x43E80000: 0x7E, 0x43E88000: 0x7E, 0x7F800000: 0x7E, 0xFF800000: 0xFE,  # 464, 465, +-inf
               0x7FC00000: 0x7F, 0xFFC00000: 0xFF},
    "e5m2": {0x49742400: 0x7C, 0x47700000: 0x7C, 0x7FC00000: 0x7F, 0xFF800001: 0xFF},  # 1e6, 61440
    "e4m3fnuz": {0x43780000: 0x80, 0x7F800000: 0x80, 0xFFC00000: 0x80, 0x80000000: 0x00},  # 248, inf, NaN, -0
    "e5m2fnuz": {0x47700000: 0x80, 0xFF800000: 0x80, 0x7FC00000: 0x80, 0x80000001: 0x00},  # 61440, -inf, NaN
}


@pytest.mark.parametrize("name", list(CASTS))
def test_examples(name):
    if name == "bf16" and not vectorised():
        pytest.skip("the bfloat16 NaN examples are the vectorised kernel's (0xFFFF)")
    cast = CASTS[name]
    inputs = np.array(list(EXAMPLES[name]), dtype=np.uint32)
    torch_int, _ = unsigned(torch.empty(0, dtype=cast.dtype).element_size())
    got = torch.from_numpy(inputs.view(np.float32)).to(cast.dtype).view(torch_int).tolist()
    mask = (1 << (8 * torch.empty(0, dtype=cast.dtype).element_size())) - 1
    assert {hex(x): hex(g & mask) for x, g in zip(EXAMPLES[name], got)} == \
        {hex(x): hex(w) for x, w in EXAMPLES[name].items()}


def test_cli_nan_torch(cli):
    """`fmtcheck convert --nan torch` (the rounding core value by value, not the batch kernel) gives
    torch's bits for NaNs of both signs with assorted payloads, infinities and overflows."""
    rng = np.random.default_rng(2015)
    payload = rng.integers(1, 1 << 23, 24, dtype=np.uint32)
    sign = rng.integers(0, 2, 24, dtype=np.uint32) << np.uint32(31)
    inputs = np.concatenate([np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FC12345, 0x7FBFFFFF,
                                       0x7F800000, 0xFF800000, 0x43E88000, 0xC3E88000, 0x49742400], dtype=np.uint32),
                             sign | np.uint32(0x7F800000) | payload])
    args = [f"{int(b):#010x}" for b in inputs]
    for name, cast in CASTS.items():
        nan = nan_convention(name, not vectorised())
        _, out, _ = run_cli(cli, "convert", "--from", "fp32", "--to", cast.fmt, "--overflow", cast.overflow,
                            "--nan", nan, "--json", *args)
        got = [int(row["bits"], 16) for row in json.loads(out)]
        torch_int, _ = unsigned(torch.empty(0, dtype=cast.dtype).element_size())
        mask = (1 << (8 * torch.empty(0, dtype=cast.dtype).element_size())) - 1
        want = [v & mask for v in torch.from_numpy(inputs.view(np.float32)).to(cast.dtype).view(torch_int).tolist()]
        bad = [(a, hex(g), hex(w)) for a, g, w in zip(args, got, want) if g != w]
        assert not bad, f"{name}: fmtcheck convert --nan {nan} against torch: {bad[:8]}"


@pytest.mark.parametrize("name", ["fp16", "bf16"])
def test_invalid_operation_nan(name):
    """The NaN torch's fp16 and bf16 arithmetic creates (inf - inf, 0 / 0), which nan="torch" gives too:
    x86's negative default NaN computed in float32, then cast (fp16 0xFE00, bf16 0xFFFF; bf16's scalar
    kernel gives 0x7FC0, the canonical NaN)."""
    dtype, fmt = CASTS[name].dtype, CASTS[name].fmt
    nan = nan_convention(name, not vectorised())
    inf = torch.full((64,), float("inf"), dtype=dtype)  # 64: long enough for the vectorised kernel
    zero = torch.zeros(64, dtype=dtype)

    def codes(t):
        return t.view(torch.int16).numpy().view(np.uint16)

    for op, a, b in (("sub", inf, inf), ("div", zero, zero)):
        want = codes(getattr(torch, op)(a, b))
        got = getattr(fmtcheck, op)(codes(a), codes(b), fmt, nan=nan).codes.view(np.uint16)
        assert (got == want).all(), f"{name} {op}: fmtcheck {got[0]:#06x}, torch {want[0]:#06x}"
