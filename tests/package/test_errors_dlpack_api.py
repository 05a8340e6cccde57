"""Bad input raises ValueError or TypeError with the CLI's own words (the
CLI is run on the same input); DLPack producers are read like numpy arrays;
every public function has a docstring, and the package ships its type
stubs."""
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import fmtcheck
from conftest import run_cli

X = np.array([0.1, 464.0, 1e-8], np.float32)


def cli_error(cli, *args):
    code, _, err = run_cli(cli, *args, check=False)
    assert code == 2, err
    assert err.startswith("fmtcheck: ")
    return err[len("fmtcheck: "):].strip()


@pytest.mark.parametrize("call,args", [
    (lambda: fmtcheck.convert(X, "e4m4fnuz_b"), ["convert", "1", "--to", "e4m4fnuz_b"]),
    (lambda: fmtcheck.convert(X, "fp17"), ["convert", "1", "--to", "fp17"]),
    (lambda: fmtcheck.convert(X, "e4m3", round="nearest"), ["convert", "1", "--to", "e4m3", "--round", "nearest"]),
    (lambda: fmtcheck.convert(X, "e4m3", overflow="clip"), ["convert", "1", "--to", "e4m3", "--overflow", "clip"]),
    (lambda: fmtcheck.convert(X, "e4m3", subnormals="flush"), ["convert", "1", "--to", "e4m3", "--subnormals", "flush"]),
    (lambda: fmtcheck.convert(X, "e4m3", round="sr"), ["convert", "1", "--to", "e4m3", "--round", "sr"]),
    (lambda: fmtcheck.convert(X, "e4m3", sr_bits=4), ["convert", "1", "--to", "e4m3", "--sr-bits", "4"]),
    (lambda: fmtcheck.values("fp32"), ["values", "fp32"]),
    (lambda: fmtcheck.ranges("fp16,,e9m99"), ["ranges", "--formats", "fp16,,e9m99"]),
    (lambda: fmtcheck.analyze(X, "e4m3", scale="max"), ["analyze", "X", "--formats", "e4m3", "--scale", "max"]),
    (lambda: fmtcheck.analyze(X, "e4m3", scale="pow2:200"), ["analyze", "X", "--formats", "e4m3", "--scale", "pow2:200"]),
    (lambda: fmtcheck.analyze(X, "e4m3", block=32, scale="auto"), ["analyze", "X", "--block", "32", "--scale", "auto"]),
    (lambda: fmtcheck.analyze(X, "e4m3", block=32, scale_rule="up"), ["analyze", "X", "--block", "32", "--scale-rule", "up"]),
    (lambda: fmtcheck.scale([{"g": X}], "adam"), ["scale", "TRACE", "--recipe", "adam"]),
    (lambda: fmtcheck.scale([{"g": X}], "gradscaler", format="hybrid"), ["scale", "TRACE", "--format", "hybrid"]),
    (lambda: fmtcheck.scale([{"g": X}], "delayed", history=0), ["scale", "TRACE", "--recipe", "delayed", "--history", "0"]),
    (lambda: fmtcheck.dot(X, X, model="pascal", input="fp16"), ["mma", "--model", "pascal", "--type", "fp16", "--a", "A", "--b", "B"]),
    (lambda: fmtcheck.dot(X, X, model="volta", input="e4m3"), ["mma", "--model", "volta", "--type", "e4m3", "--a", "A", "--b", "B"]),
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_value_errors_say_what_the_cli_says(cli, tmp_path, call, args):
    np.save(tmp_path / "X.npy", X)
    (tmp_path / "TRACE").mkdir()
    np.save(tmp_path / "TRACE" / "step_0000.npy", X)
    for name in ("A", "B"):
        (tmp_path / name).write_text("3c00\n")
    args = [str(tmp_path / "X.npy") if a == "X" else str(tmp_path / "TRACE") if a == "TRACE"
            else str(tmp_path / a) if a in ("A", "B") else a for a in args]
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value) == cli_error(cli, *args)


def test_type_errors():
    with pytest.raises(TypeError, match="expected float32, float64, float16, an ml_dtypes type or unsigned codes, not int32"):
        fmtcheck.convert(np.arange(4, dtype=np.int32), "e4m3")
    with pytest.raises(TypeError, match="say which format with from_=FORMAT"):
        fmtcheck.convert(np.arange(4, dtype=np.uint8), "fp16")
    with pytest.raises(ValueError, match="e4m3 codes are stored in 8 bits, not 16"):
        fmtcheck.convert(np.arange(4, dtype=np.uint16), "fp16", from_="e4m3")
    with pytest.raises(TypeError, match="holds e5m2 values, not e4m3"):
        fmtcheck.add(np.zeros(2, ml_dtypes.float8_e5m2), np.zeros(2, ml_dtypes.float8_e5m2), "e4m3")
    with pytest.raises(ValueError, match="out= must be a writable C-contiguous numpy array"):
        fmtcheck.convert(X, "e4m3", out=np.empty((3, 2), np.uint8)[:, 0])
    with pytest.raises(TypeError, match="out= must hold unsigned 16-bit codes"):
        fmtcheck.convert(X, "fp16", out=np.empty(3, np.uint8))
    with pytest.raises(TypeError, match="codes holds no format of its own"):
        fmtcheck.decode(np.arange(4, dtype=np.uint8))


class Producer:
    """A DLPack producer that is not a numpy array (as a torch or JAX CPU tensor is)."""

    def __init__(self, array):
        self.array = array
        self.shape = array.shape
        self.exports = 0

    def __dlpack__(self, **kwargs):
        self.exports += 1
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_dlpack_producers_convert_as_numpy_arrays_do(dtype):
    x = (np.random.default_rng(0).standard_normal((300, 7)) * 100).astype(dtype)
    producer = Producer(x)
    got = fmtcheck.convert(producer, "e4m3", overflow="sat")
    want = fmtcheck.convert(x, "e4m3", overflow="sat")
    assert producer.exports == 1 and got.codes.shape == x.shape
    assert np.array_equal(got.codes.view(np.uint8), want.codes.view(np.uint8)) and got.flags == want.flags
    a = fmtcheck.analyze({"t": Producer(x)}, "e4m3")
    assert a.results == fmtcheck.analyze({"t": x}, "e4m3").results


def test_dlpack_reads_in_place():
    # The extension reads the producer's memory: a change made after export is seen.
    x = np.zeros(1000, np.float32)
    producer = Producer(x)
    capsule_owner = fmtcheck._core.NamedArrays(["x"], [producer], [None])
    x[:] = 448.0
    assert fmtcheck._core.analyze(capsule_owner, "e4m3")["results"][0]["measures"]["amax"] == 448.0


def test_every_public_function_is_documented_and_typed():
    for name in fmtcheck.__all__:
        obj = getattr(fmtcheck, name)
        assert obj.__doc__ and len(obj.__doc__) > 40, name
    package = Path(fmtcheck.__file__).parent
    assert (package / "py.typed").is_file()
    stub = (package / "_core.pyi").read_text()
    for name in ("def convert_into", "def decode_into", "def analyze", "class ScalingReplay", "def gemm_into"):
        assert name in stub


def test_convert_value_reads_decimal_text_exactly():
    v = fmtcheck.convert_value("0.1", "e4m3")
    assert (v.bits, v.value, v.flags) == (0x1D, 0.1015625, "inexact")
    # 2^-9 * 1.5 = 0.0029296875 is the tie between the two smallest e4m3 subnormals: even wins.
    assert fmtcheck.convert_value("0.0029296875", "e4m3").bits == 0x02
    assert fmtcheck.convert_value(465.0, "e4m3", overflow="sat").flags == "inexact|overflow|saturated"
    # A fraction is its exact quotient: 1/3 lies between the fp16 values
    # (1024 + 0x155) / 4096 (code 0x3555) and (1024 + 0x156) / 4096, nearer the first.
    lo, hi = Fraction(1024 + 0x155, 4096), Fraction(1024 + 0x156, 4096)
    assert lo < Fraction(1, 3) < hi and Fraction(1, 3) - lo < hi - Fraction(1, 3)
    assert fmtcheck.convert_value("1/3", "fp16").bits == 0x3555
    with pytest.raises(ValueError, match="division by zero"):
        fmtcheck.convert_value("1/0", "fp16")


def test_work_runs_without_the_gil():
    # While a thread converts a large array, the main thread keeps running
    # Python: with the GIL held for the call it could not run at all then.
    import threading
    import time

    x = np.random.default_rng(1).standard_normal(1 << 22)  # float64: the core, value by value (slow)
    window = []

    def work():
        start = time.perf_counter()
        fmtcheck.convert(x, "e4m3", threads=1)
        window.extend([start, time.perf_counter()])

    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    start, end = window
    inside = [t for t in ticks if start + 0.1 * (end - start) < t < end - 0.1 * (end - start)]
    assert end - start > 0.05 and len(inside) >= 10, (end - start, len(inside))
