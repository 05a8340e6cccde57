"""The GPU from Python, where CI can check it: without a GPU (or a build without CUDA), every way
to ask for it (device="cuda", arrays in CUDA memory) raises one ValueError saying why, and host
arrays never go near it. With a GPU, cuda/torch/emulator_from_python.py (cuda/run-torch-on-gpu.sh)
proves the GPU's bits equal the CPU's."""
import numpy as np
import pytest

import fmtcheck
from fmtcheck import _core

WHY = _core.gpu_unavailable()
needs_no_gpu = pytest.mark.skipif(not WHY, reason="a GPU is here: cuda/torch/emulator_from_python.py proves it")


def test_the_reason_is_one_of_two():
    assert WHY == "" or WHY.startswith("no GPU found: ") or WHY.startswith("this fmtcheck was built without CUDA")


@needs_no_gpu
def test_gemm_on_the_gpu_says_why_there_is_none():
    a, b = np.zeros((2, 3), np.uint8), np.zeros((3, 2), np.uint8)
    with pytest.raises(ValueError, match=r"^device='cuda': " + WHY.split(":")[0]):
        fmtcheck.gemm(a, b, model="hopper", input="e4m3", device="cuda")


def test_a_device_that_is_not_one():
    a, b = np.zeros((2, 3), np.uint8), np.zeros((3, 2), np.uint8)
    with pytest.raises(ValueError, match=r"^device='gpu': expected cpu or cuda$"):
        fmtcheck.gemm(a, b, model="hopper", input="e4m3", device="gpu")


def test_host_arrays_stay_on_the_host():
    # The CPU path by default, whatever the machine: exact small products.
    a = fmtcheck.convert(np.array([[1.0, 2.0], [0.5, -1.0]], np.float32), "e4m3").codes
    d = fmtcheck.gemm(a, a, model="hopper-wgmma")
    assert d.tolist() == [[2.0, 0.0], [0.0, 2.0]]
    assert not fmtcheck._on_gpu(np.zeros(3)) and not fmtcheck._on_gpu([1.0])


class FakeCudaArray:
    """A DLPack producer that says it lives on GPU 0 (DLPack's kDLCUDA) and holds nothing."""
    shape, dtype = (4,), "float32"

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        raise BufferError("no memory behind this stand-in")


@needs_no_gpu
@pytest.mark.parametrize("call", [
    lambda x: fmtcheck.convert(x, "e4m3"),
    lambda x: fmtcheck.decode(x, "tf32"),
    lambda x: fmtcheck.gemm(x, x, model="hopper", input="e4m3"),
    lambda x: fmtcheck.analyze(x, "e4m3"),
    lambda x: fmtcheck.analyze({"a": x, "b": x}, "e4m3", block=32),
], ids=["convert", "decode", "gemm", "analyze", "analyze-dict"])
def test_arrays_on_a_gpu_without_one_say_why(call):
    with pytest.raises(ValueError, match=r"^device='cuda': " + WHY.split(":")[0]):
        call(FakeCudaArray())


@needs_no_gpu
def test_gpu_memory_without_a_gpu_says_why():
    with pytest.raises(ValueError, match=r"^device='cuda': " + WHY.split(":")[0]):
        _core.gpu_zeros([2, 3], "uint8", 0)


def test_gpu_memory_of_a_type_fmtcheck_does_not_make():
    with pytest.raises(TypeError, match=r"^gpu_zeros makes float32, float64, uint8, uint16 or uint32 arrays, not int8$"):
        _core.gpu_zeros([2], "int8", 0)


class Namespace:
    """An array-API namespace (what JAX's arrays name): records what from_dlpack was given."""
    def __init__(self):
        self.given = []

    def from_dlpack(self, x):
        self.given.append(x)
        return ("imported", x)


class ArrayApiArray:
    def __init__(self):
        self.namespace = Namespace()

    def __array_namespace__(self):
        return self.namespace


def test_results_go_back_through_the_inputs_array_namespace():
    like, result = ArrayApiArray(), np.arange(3, dtype=np.uint16)
    assert fmtcheck._handed_over(like, result) == ("imported", result)
    assert like.namespace.given == [result]


def test_results_go_back_through_the_inputs_module():
    # torch.Tensor names no array namespace: its module's from_dlpack imports the codes, uint16 and
    # uint32 included (convert's codes of 16- and 32-bit formats), sharing the memory.
    torch = pytest.importorskip("torch", reason="torch is an optional extra; the package tests run without it")
    for dtype in (np.uint8, np.uint16, np.uint32):
        result = np.arange(3, dtype=dtype)
        back = fmtcheck._handed_over(torch.zeros(1), result)
        assert isinstance(back, torch.Tensor) and back.dtype == getattr(torch, dtype.__name__)
        result[0] = 7
        assert back.tolist() == [7, 1, 2]


def test_results_of_an_unknown_framework_stay_fmtchecks():
    result = np.arange(3, dtype=np.uint8)
    assert fmtcheck._handed_over(FakeCudaArray(), result) is result
