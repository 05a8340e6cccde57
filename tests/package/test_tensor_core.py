"""dot against published tensor-core outputs of real GPUs (Khattak &
Mikaitis, ../shared/data/tensor-core: A100 and H100, every case of each
file); gemm against numpy where every product and sum is exact in fp32, so
any model must give numpy's result; and gemm's elements against dot."""
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import fmtcheck

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "tensor-core"

# (GPU, folder, input format, K, model, C used)
FILES = [
    ("A100", "fp16", "fp16", 8, "ampere", True),
    ("A100", "bf16", "bf16", 8, "ampere", True),
    ("H100", "fp16", "fp16", 16, "hopper", True),
    ("H100", "E4M3", "e4m3", 32, "hopper-wgmma", False),
    ("H100", "E5M2", "e5m2", 32, "hopper-wgmma", False),
]


def read_hex(path):
    return np.array([int(w, 16) for w in path.read_text().split()], np.uint32)


def read_binary(path):
    return np.array([int(w, 2) for w in path.read_text().split()], np.uint32)


@pytest.mark.parametrize("gpu,folder,fmt,k,model,c_used", FILES, ids=[f"{g}-{f}" for g, f, *_ in FILES])
def test_dot_matches_published_gpu_outputs(gpu, folder, fmt, k, model, c_used):
    where = DATA / gpu / folder
    if not where.is_dir():
        pytest.fail(f"{where} is missing: the published tensor-core data lives in ../shared/data beside the repository")
    a = read_hex(where / f"a_{gpu}_{folder}.txt").view(np.float32).reshape(-1, k)
    b = read_hex(where / f"b_{gpu}_{folder}.txt").view(np.float32).reshape(-1, k)
    c = read_binary(where / f"c_{gpu}_fp32.txt").view(np.float32)
    d = read_binary(where / f"d_{gpu}_fp32.txt")
    # The inputs are exactly representable in `fmt`: convert gives their codes.
    codes_a = fmtcheck.convert(a, fmt)
    codes_b = fmtcheck.convert(b, fmt)
    assert codes_a.flags["inexact"] == 0 and codes_b.flags["inexact"] == 0
    got = np.array([fmtcheck.dot(codes_a.codes[i], codes_b.codes[i], model=model, c=float(c[i]) if c_used else 0.0).bits
                    for i in range(len(d))], np.uint32)
    assert np.count_nonzero(got != d) == 0, f"{np.count_nonzero(got != d)} of {len(d)} differ from the {gpu}"


@pytest.mark.parametrize("model", ["ampere", "hopper", "ideal-fp32", "exact"])
def test_gemm_is_numpy_where_everything_is_exact(model):
    rng = np.random.default_rng(2)
    # Small integers times powers of two: fp16 products and fp32 sums of 64 of them are exact.
    a = (rng.integers(-8, 9, (24, 64)) * 2.0 ** rng.integers(-3, 3, (24, 64))).astype(np.float16)
    b = (rng.integers(-8, 9, (64, 20)) * 2.0 ** rng.integers(-3, 3, (64, 20))).astype(np.float16)
    c = rng.integers(-100, 100, (24, 20)).astype(np.float32)
    d = fmtcheck.gemm(a, b, c, model=model, promote_every=32, split_k=2, threads=2)
    assert np.array_equal(d, a.astype(np.float64) @ b.astype(np.float64) + c)


def test_gemm_elements_are_the_models_dot_products():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 32)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((32, 5)).astype(ml_dtypes.float8_e4m3fn)
    d = fmtcheck.gemm(a, b, model="hopper-wgmma")
    for i in range(6):
        for j in range(5):
            assert d[i, j] == fmtcheck.dot(a[i], np.ascontiguousarray(b[:, j]), model="hopper-wgmma").value


def test_mixed_fp8_gemm_is_numpy_where_everything_is_exact():
    # E4M3 x E5M2 (a backward pass): products 2^-2..2^2, sums below 2^7 on a grid of 2^-2, so
    # even Hopper's FP8 alignment (13 fraction bits below the largest term) keeps them exact.
    rng = np.random.default_rng(4)
    a = (2.0 ** rng.integers(-1, 2, (8, 32)) * rng.choice([-1, 1], (8, 32))).astype(ml_dtypes.float8_e4m3fn)
    b = (2.0 ** rng.integers(-1, 2, (32, 6)) * rng.choice([-1, 1], (32, 6))).astype(ml_dtypes.float8_e5m2)
    d = fmtcheck.gemm(a, b, model="hopper-wgmma")
    assert np.array_equal(d, a.astype(np.float64) @ b.astype(np.float64))
