"""fmtcheck: bit-exact answers about low-precision floating point, on arrays.

Formats are named as on the command line ("fp16", "bf16", "e4m3", "e5m2",
"e4m3fnuz", "e2m1", "e8m0", "tf32", user formats such as "e3m4fn" or
"e5m2fnuz_b15", the IEEE P3109 members such as "binary8p3se"; ml_dtypes' and
numpy's names work too). The rounding policy is given as keywords: ``round``
(rne, rna, rtz, rup, rdn, rto, sr, sr-rne, sr-rna, sr-rno), ``overflow`` (sat, nosat,
satprop), ``subnormals`` (keep, ftz, daz, ftz+daz), ``tininess`` (after,
before), ``nan`` (ieee, x86, arm, arm-dn, riscv, cuda, numpy, ml_dtypes,
torch, canonical) and, for stochastic rounding, ``sr_bits`` and ``seed``.

Arrays are read in place: numpy arrays of float32, float64, float16 or any
ml_dtypes type, and any object with ``__dlpack__`` on the CPU (a torch or
JAX tensor, bfloat16 and the FP8 types included), without importing its
framework. convert, decode, gemm and analyze also take arrays on a GPU (torch,
CuPy, JAX: any DLPack producer) and compute there, results in the input's
framework (``device="cuda"`` sends host arrays to the GPU), with the CPU's
bits. Large results lie in memory kept for the next result of their
size (docs/python.md, "Arrays out"). The work runs without the GIL, on every
core (``threads=`` says how many). Bad input raises ValueError or TypeError
in the words of the ``fmtcheck`` command line.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Union

import sys

import numpy as np

from . import _core

__all__ = [
    "Analysis", "Converted", "Distribution", "Dot", "Outcome", "ScalingReplay", "Value", "add", "analyze", "convert",
    "convert_value", "decode", "div", "dot", "dtype_of", "fma", "gemm", "maximum", "minimum", "models", "mul", "ranges",
    "scale", "sqrt", "stochastic_outcomes", "sub", "values",
]

Formats = Union[str, Sequence[str]]

try:  # ml_dtypes gives the low-precision formats numpy dtypes; without it codes stay unsigned integers.
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is optional
    _ml_dtypes = None

# ml_dtypes' name of each fmtcheck preset it has.
_ML_DTYPES_NAMES = {
    "bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
    "e5m2fnuz": "float8_e5m2fnuz", "e2m3": "float6_e2m3fn", "e3m2": "float6_e3m2fn", "e2m1": "float4_e2m1fn",
    "e8m0": "float8_e8m0fnu",
}
# ml_dtypes types whose names are not fmtcheck aliases, as fmtcheck specs.
_ML_DTYPES_SPECS = {"float8_e4m3": "e4m3ieee", "float8_e3m4": "e3m4", "float8_e4m3b11fnuz": "e4m3fnuz_b11"}
_NUMPY = {"fp16": np.dtype(np.float16), "fp32": np.dtype(np.float32), "fp64": np.dtype(np.float64)}
_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _policy(round: str, overflow: str, subnormals: str, tininess: str, nan: str, sr_bits: int) -> dict:
    return dict(round=round, overflow=overflow, subnormals=subnormals, tininess=tininess, nan=nan, sr_bits=sr_bits)


def dtype_of(fmt: str) -> np.dtype:
    """The numpy dtype that holds codes of `fmt`: numpy's or ml_dtypes' type where one exists
    (fp16 -> float16, e4m3 -> float8_e4m3fn), else unsigned integers of the storage width."""
    name = _core.canonical_name(fmt)
    if name in _NUMPY:
        return _NUMPY[name]
    if _ml_dtypes is not None and name in _ML_DTYPES_NAMES:
        return np.dtype(getattr(_ml_dtypes, _ML_DTYPES_NAMES[name]))
    return np.dtype(_UNSIGNED[_core.storage_bits(name)])


_NUMPY_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _format_of_dtype(dtype: np.dtype) -> Optional[str]:
    """The fmtcheck format of an ml_dtypes dtype (kind "V", or "f" for float8_e5m2), or None
    for numpy's own types."""
    if dtype.kind not in "fV" or dtype.names is not None or dtype in _NUMPY_FLOATS or dtype.itemsize > 2:
        return None
    return _ML_DTYPES_SPECS.get(dtype.name, dtype.name)


def _empty(shape: tuple, dtype: Any) -> np.ndarray:
    """A new uninitialized array for a result. A large one lies in the extension's memory (huge
    pages, kept for reuse once freed: see python/src/fresh_memory.cpp), so that writing it costs
    no page faults when a result of its size was freed before."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if _core.mapped_from is None or size < _core.mapped_from:
        return np.empty(shape, dtype)
    return _core.empty_bytes(size).view(dtype).reshape(shape)


def _input(array: Any, from_: Optional[str]) -> tuple[Any, Optional[str], tuple]:
    """What the extension reads: (array or DLPack producer, format of its codes, shape).
    ml_dtypes arrays become views of their codes; nothing is copied unless the array is
    not C-contiguous or is a Python sequence."""
    if not isinstance(array, np.ndarray) and hasattr(array, "__dlpack__"):
        return array, from_, tuple(array.shape)
    a = np.asarray(array)
    if not isinstance(array, np.ndarray) and a.dtype.kind in "iub":
        a = a.astype(np.float64)  # Python numbers
    fmt = _format_of_dtype(a.dtype)
    if fmt is not None:
        a = np.ascontiguousarray(a).view(_UNSIGNED[8 * a.dtype.itemsize])
        return a, from_ or fmt, a.shape
    if a.dtype.kind not in "uf" or a.dtype.itemsize > 8:
        raise TypeError(f"expected float32, float64, float16, an ml_dtypes type or unsigned codes, not {a.dtype}")
    return np.ascontiguousarray(a), from_, a.shape


def _numpy(array: Any) -> tuple[np.ndarray, Optional[str]]:
    """`array` as a numpy array, and the format of its codes where its dtype names one that numpy
    lacks: a DLPack producer (a torch or JAX tensor) is viewed in place, bfloat16 and FP8 tensors
    as their unsigned codes with "bf16", "e4m3", ...; anything else goes through np.asarray."""
    if not isinstance(array, np.ndarray) and hasattr(array, "__dlpack__"):
        return _core.dlpack_view(array)
    return (array if isinstance(array, np.ndarray) else np.asarray(array)), None


def _own_format(array: Any) -> Optional[str]:
    """The format an array's dtype names: fp16 for float16, an ml_dtypes or DLPack type's own; else None."""
    a, fmt = _numpy(array)
    if fmt is not None:
        return fmt
    return "fp16" if a.dtype == np.float16 else _format_of_dtype(a.dtype)


def _codes(array: Any, fmt: Optional[str], what: str) -> tuple[np.ndarray, str]:
    """Codes of `fmt` as unsigned integers: an ml_dtypes array's own codes, unsigned
    integers as they are, and floats converted (rne) into `fmt`."""
    a, own = _numpy(array)
    own = own or _own_format(a)
    if own is not None:
        if fmt is not None and _core.canonical_name(fmt) != _core.canonical_name(own):
            raise TypeError(f"{what} holds {_core.canonical_name(own)} values, not {_core.canonical_name(fmt)}")
        return np.ascontiguousarray(a).view(_UNSIGNED[8 * a.dtype.itemsize]), own
    if fmt is None:
        raise TypeError(f"{what} holds no format of its own: say which with the format argument")
    if a.dtype.kind == "u":
        return np.ascontiguousarray(a), fmt
    return convert(a, fmt).codes.view(_UNSIGNED[_core.storage_bits(fmt)]), fmt


class Converted(NamedTuple):
    """The codes of a conversion (an ml_dtypes array where ml_dtypes has the format) and the
    flag counts over the array: {"values": n, "inexact": n, "underflow": n, ...}."""

    codes: np.ndarray
    flags: dict


# The GPU: arrays in CUDA memory (any DLPack producer) go to the emulator compiled for the GPU
# (cuda/src/emulator/), where the extension was built with CUDA; the same bits as the CPU's.
_DLPACK_CUDA = 2  # DLPack's kDLCUDA
# Formats of a GPU array's own dtype, by the dtype's name (torch's float8 names are ml_dtypes').
_GPU_DTYPE_FORMATS = {"float16": "fp16", **{v: k for k, v in _ML_DTYPES_NAMES.items()}}


def _on_gpu(array: Any) -> bool:
    """Whether `array` is a DLPack producer in CUDA memory; if so, its GPU becomes the current one
    (ValueError saying why where fmtcheck cannot compute on it)."""
    if isinstance(array, np.ndarray) or not hasattr(array, "__dlpack_device__"):
        return False
    device_type, ordinal = array.__dlpack_device__()
    if device_type != _DLPACK_CUDA:
        return False
    _core.use_gpu(ordinal)
    return True


def _gpu_zeros(like: Any, shape: tuple, dtype: str) -> Any:
    """A zeroed array (dtype "float32", "float64" or "uintN") on `like`'s GPU, in memory fmtcheck allocates:
    what the GPU functions write into before _handed_over gives it to `like`'s framework."""
    return _core.gpu_zeros(list(shape), dtype, like.__dlpack_device__()[1])


def _handed_over(like: Any, result: Any) -> Any:
    """`result` (an array of _gpu_zeros) as an array of `like`'s framework, sharing its memory: the
    from_dlpack of `like`'s array-API namespace (JAX) or of its module (torch, CuPy). For an array
    of a framework with neither, fmtcheck's own array: a DLPack producer, for that framework's
    importer."""
    namespace = like.__array_namespace__() if hasattr(like, "__array_namespace__") else \
        sys.modules.get(type(like).__module__.split(".")[0])
    from_dlpack = getattr(namespace, "from_dlpack", None)
    return result if from_dlpack is None else from_dlpack(result)


def convert(array: Any, to: str, *, from_: Optional[str] = None, round: str = "rne", overflow: str = "nosat",
            subnormals: str = "keep", tininess: str = "after", nan: str = "ieee", sr_bits: int = 0, seed: int = 0,
            out: Optional[np.ndarray] = None, threads: int = 0) -> Converted:
    """Converts every value of `array` into format `to`, bit-exactly, under the policy.

    `array` is a numpy array (float32, float64, float16, an ml_dtypes type), a DLPack producer on
    the CPU, or unsigned integers holding codes of format `from_`. With ``round="sr"`` (or another stochastic mode), value i
    draws RandomStream{seed}.draw(i) (``sr_bits`` of it), so results do not depend on the threads.
    `out` (codes of `to`, as many as the input) is filled in place and returned.

    A float32 array on a GPU (torch, CuPy, JAX: any DLPack producer with a shape) is converted
    there, with no copy to the host, into a new array of unsigned codes on the same GPU, of the
    input's framework (the same bits as on the CPU, stochastic rounding's draws included).
    """
    if _on_gpu(array):
        codes, flags = _gpu_convert(array, to, from_, out, _policy(round, overflow, subnormals, tininess, nan, sr_bits),
                                    seed)
        return Converted(_handed_over(array, codes), flags)
    src, from_, shape = _input(array, from_)
    codes = _empty(shape, dtype_of(to)) if out is None else _contiguous_out(out)
    raw = codes if codes.dtype.kind == "u" else codes.view(_UNSIGNED[8 * codes.dtype.itemsize])
    flags = _core.convert_into(src, to, from_, raw.reshape(-1),
                               **_policy(round, overflow, subnormals, tininess, nan, sr_bits), seed=seed, threads=threads)
    return Converted(codes, flags)


def _gpu_convert(array: Any, to: str, from_: Optional[str], out: Any, policy: dict, seed: int) -> tuple[Any, dict]:
    """convert on the GPU: fmtcheck's array of the codes, and the flag counts."""
    if from_ is not None or out is not None:
        raise TypeError("on the GPU, convert takes float32 values (no from_) into a new array (no out=)")
    codes = _gpu_zeros(array, tuple(array.shape), f"uint{_core.storage_bits(to)}")
    return codes, _core.gpu_convert_into(array, to, codes, **policy, seed=seed)


def _contiguous_out(out: np.ndarray) -> np.ndarray:
    """`out=` is written in place, so it must be one C-contiguous block (a reshape of it must be a view)."""
    if not isinstance(out, np.ndarray) or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out= must be a writable C-contiguous numpy array")
    return out


def decode(codes: Any, fmt: Optional[str] = None, *, out: Optional[np.ndarray] = None, threads: int = 0) -> np.ndarray:
    """The values of `codes` (unsigned integers of format `fmt`, or an ml_dtypes array), exactly:
    float32 for every format float32 holds (all presets but fp64), float64 otherwise. NaN
    becomes a quiet NaN of its sign.

    Codes on a GPU (unsigned integers, or float16/bfloat16/float8 arrays of torch, CuPy, JAX: any
    DLPack producer with a shape) are decoded there into a new array on that GPU, of their
    framework, with the CPU's bits."""
    if _on_gpu(codes):
        return _gpu_decode(codes, fmt, out)
    raw, fmt = _codes(codes, fmt, "codes")
    if out is None:
        out = _empty(raw.shape, np.float32 if _core.float32_holds(fmt) else np.float64)
    _contiguous_out(out)
    _core.decode_into(raw, fmt, out.reshape(-1), threads=threads)
    return out


def _gpu_decode(codes: Any, fmt: Optional[str], out: Any) -> Any:
    if out is not None:
        raise TypeError("on the GPU, decode writes a new array (no out=)")
    if str(codes.dtype).split(".")[-1] == "float32" and fmt is not None and _core.storage_bits(fmt) != 32:
        raise TypeError(f"decode takes codes of {_core.canonical_name(fmt)}, not float values")
    raw, fmt, shape = _gpu_codes(codes, fmt, "codes")
    values = _gpu_zeros(codes, shape, "float32" if _core.float32_holds(fmt) else "float64")
    _core.gpu_decode_into(raw, fmt, values)
    return _handed_over(codes, values)


class Value(NamedTuple):
    """One converted value: its container bits, its exact value and its flags ("inexact|overflow")."""

    bits: int
    value: float
    exact: str
    flags: str


def convert_value(x: Union[float, str], to: str, *, round: str = "rne", overflow: str = "nosat",
                  subnormals: str = "keep", tininess: str = "after", nan: str = "ieee", sr_bits: int = 0,
                  sr_random: int = 0) -> Value:
    """One value rounded once into `to`, as ``fmtcheck convert`` does: a float, or text such as
    "0.1" or "1/3" taken exactly (never through double). `sr_random` is the draw under sr."""
    bits, flags = _core.convert_value(x, to, **_policy(round, overflow, subnormals, tininess, nan, sr_bits),
                                      sr_random=sr_random)
    exact = _core.to_exact_decimal(to, bits)
    value = float(decode(np.array([bits], _UNSIGNED[_core.storage_bits(to)]), to)[0])
    return Value(bits, value, exact, flags)


class Outcome(NamedTuple):
    """One outcome of stochastic rounding: its bits, value, exact decimal and flags, and how many of the
    2^sr_bits draws give it (`probability` = draws / 2^sr_bits)."""

    bits: int
    value: float
    exact: str
    flags: str
    draws: int
    probability: float


class Distribution(NamedTuple):
    """Every outcome of stochastic rounding one value, in the order of the draws that give them, and the
    mean result over all draws with its bias (mean - input), each exact and then the nearest float;
    None where the input or an outcome is not finite."""

    outcomes: List[Outcome]
    mean: Optional[float]
    bias: Optional[float]


def stochastic_outcomes(x: Union[float, str], to: str, *, sr_bits: int, round: str = "sr", overflow: str = "nosat",
                        subnormals: str = "keep", tininess: str = "after", nan: str = "ieee") -> Distribution:
    """Every result stochastic rounding (`round`: sr, sr-rne, sr-rna or sr-rno on `sr_bits` random bits)
    can give `x` (a float, or text such as "0.1" or "1/3" taken exactly), with its share of the draws:
    the exact distribution, as ``fmtcheck convert --round sr --sr-bits N`` without ``--sr-random`` prints."""
    rows, mean, bias = _core.stochastic_outcomes(x, to, **_policy(round, overflow, subnormals, tininess, nan, sr_bits))
    storage = _UNSIGNED[_core.storage_bits(to)]
    values = decode(np.array([bits for bits, _, _ in rows], storage), to)
    outcomes = [Outcome(bits, float(value), _core.to_exact_decimal(to, bits), flags, draws, draws / 2.0 ** sr_bits)
                for (bits, flags, draws), value in zip(rows, values)]
    return Distribution(outcomes, mean, bias)


def _elementwise(op: "_core.Operation", fmt: Optional[str], operands: Sequence[Any], policy: dict,
                 sr_random: int, threads: int) -> Converted:
    codes, shapes = [], []
    for name, x in zip("abc", operands):
        raw, fmt = _codes(x, fmt, name)
        codes.append(raw.reshape(-1))
        shapes.append(raw.shape)
    shape = shapes[0]
    out = np.empty(codes[0].size, np.uint64)
    flags = _core.elementwise_into(op, fmt, codes[0], codes[1] if len(codes) > 1 else None,
                                   codes[2] if len(codes) > 2 else None, out, **policy, sr_random=sr_random,
                                   threads=threads)
    result = out.astype(_UNSIGNED[_core.storage_bits(fmt)]).reshape(shape)
    dtype = dtype_of(fmt)
    return Converted(result.view(dtype) if dtype.kind != "u" else result, flags)


def _arith_doc(formula: str) -> str:
    return (f"{formula}, element-wise, correctly rounded once into `fmt` under the policy; returns the codes and\n"
            f"the flag counts. Operands are codes of `fmt` (unsigned integers, or ml_dtypes arrays whose type\n"
            f"names the format), or floats first converted into `fmt` (rne).")


def _binary(op_name: str, formula: str):
    op = getattr(_core.Operation, op_name)

    def f(a: Any, b: Any, fmt: Optional[str] = None, *, round: str = "rne", overflow: str = "nosat",
          subnormals: str = "keep", tininess: str = "after", nan: str = "ieee", sr_bits: int = 0,
          sr_random: int = 0, threads: int = 0) -> Converted:
        return _elementwise(op, fmt, (a, b), _policy(round, overflow, subnormals, tininess, nan, sr_bits), sr_random,
                            threads)

    f.__name__ = f.__qualname__ = op_name
    f.__doc__ = _arith_doc(formula)
    return f


add = _binary("add", "a + b")
sub = _binary("sub", "a - b")
mul = _binary("mul", "a * b")
div = _binary("div", "a / b")
minimum = _binary("minimum", "IEEE 754-2019 minimum(a, b) (a NaN operand gives NaN, -0 < +0)")
maximum = _binary("maximum", "IEEE 754-2019 maximum(a, b) (a NaN operand gives NaN, -0 < +0)")


def fma(a: Any, b: Any, c: Any, fmt: Optional[str] = None, *, round: str = "rne", overflow: str = "nosat",
        subnormals: str = "keep", tininess: str = "after", nan: str = "ieee", sr_bits: int = 0, sr_random: int = 0,
        threads: int = 0) -> Converted:
    return _elementwise(_core.Operation.fma, fmt, (a, b, c), _policy(round, overflow, subnormals, tininess, nan, sr_bits),
                        sr_random, threads)


def sqrt(a: Any, fmt: Optional[str] = None, *, round: str = "rne", overflow: str = "nosat", subnormals: str = "keep",
         tininess: str = "after", nan: str = "ieee", sr_bits: int = 0, sr_random: int = 0, threads: int = 0) -> Converted:
    return _elementwise(_core.Operation.sqrt, fmt, (a,), _policy(round, overflow, subnormals, tininess, nan, sr_bits),
                        sr_random, threads)


fma.__doc__ = _arith_doc("a * b + c with one rounding")
sqrt.__doc__ = _arith_doc("sqrt(a)")


def _format_list(formats: Formats) -> str:
    return formats if isinstance(formats, str) else ",".join(formats)


def _named(arrays: Any, default: str) -> Any:
    items = arrays.items() if isinstance(arrays, Mapping) else [(default, arrays)]
    names, srcs, froms = [], [], []
    for name, array in items:
        src, fmt, _ = _input(array, None)
        names.append(str(name))
        srcs.append(src)
        froms.append(fmt)
    return _core.NamedArrays(names, srcs, froms)


def _frame(rows: list):
    import pandas as pd  # optional: only the table methods need it

    return pd.DataFrame(rows)


class Analysis:
    """What each format does to each tensor: the measures of ``fmtcheck analyze``.

    ``results``: one dict per tensor and format (tensor, format, scale, measures: values, exact,
    inexact, overflow, saturated, underflow_to_zero, subnormal, flushed, nan_in, inf_in,
    nan_produced, max_abs_error, max_rel_error, mean_rel_error, rms_rel_error, amax,
    best_pow2_scale, underflow_at_best_pow2_scale; with block=N also blocks and the range of
    block scales). ``histograms``: per tensor, the binade counts. ``blocks``: with blocks=True,
    one dict per MX block. ``table()``, ``histogram_table()`` and ``block_table()`` give pandas
    DataFrames in the layout of the CLI's --csv, --histogram-csv and --block-csv; ``verdict()``
    the closing verdict of ``fmtcheck analyze``.
    """

    def __init__(self, raw: dict, formats: str):
        self.policy: str = raw["policy"]
        self.results: list = raw["results"]
        self.histograms: list = raw["histograms"]
        self.blocks: list = raw["blocks"]
        self.formats: str = formats
        self.scale: str = raw["scale"]  # as the verdict names it: "1", "auto", "block32:ocp"
        self.outcomes: list = raw["outcomes"]  # per tensor and format, what the verdict counts

    def verdict(self, width: int = 100) -> str:
        """Per format, what overflows or underflows to zero over all the tensors and the power-of-two
        scale that fixes it, or why none does: the text ``fmtcheck analyze`` ends with."""
        return _core.verdict(self.outcomes, self.formats, self.scale, width)

    def measure(self, tensor: str, fmt: str, name: str) -> float:
        """One measure of one tensor under one format."""
        fmt = _core.canonical_name(fmt)
        for r in self.results:
            if r["tensor"] == tensor and r["format"] == fmt:
                return r["measures"][name]
        raise KeyError(f"no result for tensor {tensor!r} in {fmt}")

    def table(self):
        """Tidy DataFrame: tensor, format, scale, measure, value (needs pandas)."""
        return _frame([{"tensor": r["tensor"], "format": r["format"], "scale": r["scale"], "measure": m, "value": v}
                       for r in self.results for m, v in r["measures"].items()])

    def histogram_table(self):
        """Tidy DataFrame: tensor, binade, count (binade: floor(log2|x|), or zero, infinite, not_a_number)."""
        return _frame([{"tensor": h["tensor"], "binade": b, "count": n}
                       for h in self.histograms for b, n in h["binades"].items()])

    def block_table(self):
        """DataFrame with one row per MX block and format (analyze(..., block=N, blocks=True))."""
        return _frame(self.blocks)

    def __repr__(self) -> str:
        return f"Analysis({len(self.results)} results, policy {self.policy})"


def analyze(arrays: Any, formats: Formats = "fp16,bf16,e4m3,e5m2", *, scale: str = "none", block: int = 0,
            scale_rule: str = "ocp", blocks: bool = False, round: str = "rne", overflow: str = "nosat",
            subnormals: str = "keep", tininess: str = "after", nan: str = "ieee", sr_bits: int = 0, seed: int = 0,
            threads: int = 0) -> Analysis:
    """What each format does to an array, or to each array of a dict {name: array}.

    ``scale``: none, auto (best power of two), amax[:MARGIN] (fmt_max / amax / 2^MARGIN) or
    pow2:N. ``block=N``: MX-style blocks of N values share an E8M0 scale chosen by
    ``scale_rule`` (ocp, ceil, rne); ``blocks=True`` keeps every block. float32 input is scaled
    in float32, float64 input measured exactly as float64.

    float32 arrays on a GPU (torch, CuPy, JAX: any DLPack producer) are measured there, with no
    copy to the host: the same counts, amax, histogram and largest errors as on the CPU (the mean
    and RMS relative errors are sums taken in another order, equal to rounding).
    """
    formats = _format_list(formats)
    items = list(arrays.items()) if isinstance(arrays, Mapping) else [("tensor", arrays)]
    on_gpu = [_on_gpu(a) for _, a in items]
    if any(on_gpu):
        if not all(on_gpu):
            raise TypeError("analyze takes arrays all on the GPU or all on the host, not some of each")
        raw = _core.gpu_analyze([str(n) for n, _ in items], [a for _, a in items], formats, scale=scale, block=block,
                                scale_rule=scale_rule, blocks=blocks,
                                **_policy(round, overflow, subnormals, tininess, nan, sr_bits), seed=seed)
        return Analysis(raw, formats)
    named = _named(arrays, "tensor")
    return Analysis(_core.analyze(named, formats, scale=scale, block=block, scale_rule=scale_rule, blocks=blocks,
                                  **_policy(round, overflow, subnormals, tininess, nan, sr_bits), seed=seed,
                                  threads=threads), formats)


class ScalingReplay:
    """A scaling recipe replayed over the gradients of a training run, step by step, as
    ``fmtcheck scale`` does: gradscaler (torch, with Megatron's hysteresis and min_scale),
    deepspeed (DynamicLossScaler), delayed (Transformer Engine DelayedScaling) or current.

    Keywords are the CLI's options: format (default fp16 for the loss scalers, "hybrid" for the
    FP8 recipes: e5m2 gradients, e4m3 for the tensors the ``forward`` regex names), the policy
    (``overflow`` defaults to nosat for the loss scalers, sat for FP8), init_scale,
    growth_factor, backoff_factor, growth_interval, scale_window, hysteresis, min_scale,
    consecutive_hysteresis, history, amax_compute, margin.
    """

    def __init__(self, recipe: str = "gradscaler", **settings: Any):
        self._replay = _core.ScalingReplay(_core.ReplaySettings(recipe=recipe, **settings))
        self._steps = 0

    def step(self, gradients: Mapping[str, Any]) -> None:
        """Replays one step: its gradients by name (the name follows a tensor across steps)."""
        self._replay.step(self._steps, _named(gradients, "gradient"))
        self._steps += 1

    @property
    def rows(self) -> list:
        """One dict per step and tensor: step, tensor, format, scale, skipped, counts, amax."""
        return self._replay.rows()

    def summary(self) -> dict:
        """The totals of ``fmtcheck scale --json``: steps, skipped_steps, final_scale, tensors."""
        return self._replay.summary()

    def table(self):
        """The rows as a DataFrame (needs pandas)."""
        return _frame(self.rows)


def scale(steps: Iterable[Mapping[str, Any]], recipe: str = "gradscaler", **settings: Any) -> ScalingReplay:
    """Replays a list of per-step gradient dicts {name: array} through a recipe (see ScalingReplay)."""
    replay = ScalingReplay(recipe, **settings)
    for gradients in steps:
        replay.step(gradients)
    return replay


class Dot(NamedTuple):
    """A tensor-core result: its bits in the output format, its value and the flags of the last rounding."""

    bits: int
    value: float
    flags: str


def models() -> list:
    """The tensor-core presets (volta ... blackwell, exact): name, description, input formats."""
    return _core.models()


def dot(a: Any, b: Any, *, model: str, input: Optional[str] = None, c: float = 0.0, out: str = "fp32") -> Dot:
    """sum a[k]*b[k] + c as the tensor core of `model` computes it (blocks of L products fused,
    truncated alignment, the hardware's rounding into `out`, fp32 or fp16). a and b are codes of
    `input` (or ml_dtypes arrays, or floats converted into `input`); c is a float in `out`."""
    x, input = _codes(a, input, "a")
    y, _ = _codes(b, input, "b")
    c_bits = int(convert(np.array([c], np.float64), out).codes.view(_UNSIGNED[_core.storage_bits(out)])[0])
    bits, flags = _core.dot(x.reshape(-1), y.reshape(-1), c_bits, model, input, out)
    value = float(decode(np.array([bits], _UNSIGNED[_core.storage_bits(out)]), out)[0])
    return Dot(bits, value, flags)


def _gpu_codes(x: Any, fmt: Optional[str], what: str) -> tuple[Any, str, tuple]:
    """A GPU array as codes, their format and the array's shape: its dtype's own format (float16,
    bfloat16, the float8 types), unsigned codes of `fmt`, or float32 (tf32's container, or values
    converted into `fmt` on the GPU)."""
    name = str(x.dtype).split(".")[-1]
    shape = tuple(x.shape)
    own = _GPU_DTYPE_FORMATS.get(name)
    if own is not None:
        if fmt is not None and _core.canonical_name(fmt) != _core.canonical_name(own):
            raise TypeError(f"{what} holds {own} values, not {_core.canonical_name(fmt)}")
        if type(x).__module__.split(".")[0] == "torch":  # as integers: DLPack need not know float8
            import torch
            x = x.view({1: torch.uint8, 2: torch.int16}[x.element_size()])
        return x, own, shape
    if fmt is None:
        raise TypeError(f"{what} holds no format of its own: say which with the format argument")
    if name.startswith("uint") or (name == "float32" and _core.storage_bits(fmt) == 32):
        return x, fmt, shape
    if name == "float32":
        return convert(x, fmt).codes, fmt, shape
    raise TypeError(f"{what} must be codes, float16, bfloat16, float8 or float32 on the GPU, not {name}")


def _gemm_on_gpu(a: Any, b: Any, c: Any, model: str, input: Optional[str], input_b: Optional[str],
                 accumulator: str, scale_a: float, scale_b: float, promote_every: int, split_k: int) -> Any:
    if not (_on_gpu(a) and _on_gpu(b) and (c is None or _on_gpu(c))):
        raise TypeError("A, B (and C) must all be on the GPU, or all on the host")
    x, input, a_shape = _gpu_codes(a, input, "a")
    y, input_b, b_shape = _gpu_codes(b, input_b or (None if str(b.dtype).split(".")[-1] in _GPU_DTYPE_FORMATS
                                                    else input), "b")
    if len(a_shape) != 2 or len(b_shape) != 2 or a_shape[1] != b_shape[0]:
        raise ValueError(f"A must be M x K and B K x N, not {a_shape} and {b_shape}")
    (m, k), n = a_shape, b_shape[1]
    c = _gpu_zeros(a, (m, n), "float32") if c is None else c
    d = _gpu_zeros(a, (m, n), "float32")
    _core.gpu_gemm_into(x, y, c, d, m, n, k, model, input, input_b, accumulator, scale_a, scale_b, promote_every,
                        split_k)
    return _handed_over(a, d)


def gemm(a: Any, b: Any, c: Any = None, *, model: str, input: Optional[str] = None, input_b: Optional[str] = None,
         accumulator: str = "fp32", scale_a: float = 1.0, scale_b: float = 1.0, promote_every: int = 0,
         split_k: int = 1, threads: int = 0, device: str = "cpu") -> np.ndarray:
    """D = A.B + C (A: M x K codes of `input`, B: K x N codes of `input_b`, by default `input`;
    C float32 M x N, default zeros) on the tensor core of `model`, with what libraries do around
    it: per-tensor scales, promotion of partial sums into fp32 every `promote_every` K elements,
    split-K. E4M3 x E5M2 (FP8 backward passes) where the model takes both. Returns D, float32.

    ``device="cuda"`` computes host arrays on the GPU. Arrays on a GPU (torch, CuPy, JAX: codes,
    float16, bfloat16, float8, or float32) are computed there with no copy to the host, and D is a
    new float32 array on that GPU, of A's framework. Either way the bits are the CPU's: rows and columns holding a
    NaN or an infinity are finished by the CPU."""
    if _on_gpu(a) or _on_gpu(b):
        return _gemm_on_gpu(a, b, c, model, input, input_b, accumulator, scale_a, scale_b, promote_every, split_k)
    x, input = _codes(a, input, "a")
    y, input_b = _codes(b, input_b or (None if _own_format(b) else input), "b")
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0]:
        raise ValueError(f"A must be M x K and B K x N, not {x.shape} and {y.shape}")
    m, k = x.shape
    n = y.shape[1]
    c = np.zeros((m, n), np.float32) if c is None else np.ascontiguousarray(c, np.float32)
    d = np.empty((m, n), np.float32)
    _core.gemm_into(x.astype(np.uint32).reshape(-1), y.astype(np.uint32).reshape(-1), c.reshape(-1), d.reshape(-1), m,
                    n, k, model, input, input_b, accumulator, scale_a, scale_b, promote_every, split_k, threads, device)
    return d


def ranges(formats: Optional[Formats] = None) -> list:
    """The facts of each format (default: every preset), the fields of ``fmtcheck ranges --json``:
    max_finite, min_normal, min_subnormal, epsilon, ulp_one, unit_roundoff, digits10, ..."""
    return _core.ranges(None if formats is None else _format_list(formats))


def values(fmt: str) -> dict:
    """Every code of a format of at most 16 bits, as ``fmtcheck values``: lists code, class,
    exact (decimal text) and value (float), in code order; ``pandas.DataFrame(values(f))``
    makes the table."""
    return _core.values(fmt)
