"""Large results (4 MiB and more) lie in the extension's own memory, which
keeps a freed result's pages for the next result of its size
(python/src/fresh_memory.cpp): such results hold the right values (numpy's
and ml_dtypes' astype as the oracles), live results never share memory, and
a reused block is written whole."""
import gc

import ml_dtypes
import numpy as np
import pytest

import fmtcheck

COUNT = 1 << 21  # 4 MiB of 16-bit codes: the smallest size served from the extension's memory


def data(seed):
    return (np.random.default_rng(seed).standard_normal(COUNT) * 1000).astype(np.float32)


def address(a):
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("fmt,dtype", [("fp16", np.float16), ("bf16", ml_dtypes.bfloat16)])
def test_large_results_are_right_and_never_shared_while_alive(fmt, dtype):
    x, y = data(1), data(2)
    first = fmtcheck.convert(x, fmt).codes
    second = fmtcheck.convert(y.reshape(1024, -1), fmt).codes
    assert address(first) != address(second)
    assert second.shape == (1024, COUNT // 1024) and second.dtype == dtype
    assert np.array_equal(first.view(np.uint16), x.astype(dtype).view(np.uint16))
    assert np.array_equal(second.view(np.uint16).ravel(), y.astype(dtype).view(np.uint16))


def test_a_freed_result_is_reused_and_rewritten_whole():
    x, y = data(3), data(4)
    before = fmtcheck.convert(x, "fp16").codes
    where = address(before)
    del before
    gc.collect()
    after = fmtcheck.convert(y, "fp16").codes
    assert address(after) == where  # the kept block, already faulted in
    assert np.array_equal(after.view(np.uint16), y.astype(np.float16).view(np.uint16))


def test_large_decodes_are_exact():
    x = data(5)
    codes = x.astype(ml_dtypes.bfloat16)
    values = fmtcheck.decode(codes)  # 8 MiB of float32
    assert values.dtype == np.float32 and np.array_equal(values, codes.astype(np.float32))


def test_small_results_are_numpys_own():
    assert fmtcheck.convert(np.ones(1000, np.float32), "fp16").codes.flags.owndata
