"""bfloat16 and the FP8 types from a DLPack producer (tests/package/
dlpack_producer.py, as torch and JAX export them: kDLBfloat and DLPack 1.x's
kDLFloat8_* codes), unversioned and versioned: read in place, every code
converted to fp32 and decoded exactly as ml_dtypes widens it, and converted,
analyzed, added and multiplied (gemm) as the same codes in an ml_dtypes array
are."""
import ml_dtypes
import numpy as np
import pytest

import fmtcheck
from dlpack_producer import KDL_BFLOAT, KDL_FLOAT6_E2M3FN, KDL_FLOAT8, Producer

# Every code of each 8-bit type; every bf16 code.
TYPES = [(name, code, 8, np.arange(256, dtype=np.uint8)) for name, code in KDL_FLOAT8.items()]
TYPES.append(("bfloat16", KDL_BFLOAT, 16, np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)))
IDS = [t[0] for t in TYPES]


@pytest.mark.parametrize("versioned", [False, True], ids=["dltensor", "dltensor_versioned"])
@pytest.mark.parametrize("name,code,bits,codes", TYPES, ids=IDS)
def test_every_code_widens_as_ml_dtypes_does(name, code, bits, codes, versioned):
    producer = Producer(codes, code, bits, versioned)
    got = fmtcheck.convert(producer, "fp32").codes
    want = codes.view(getattr(ml_dtypes, name)).astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))  # -0 and +0 told apart
    assert (producer.exports, producer.deleted) == (1, 1)


@pytest.mark.parametrize("name,code,bits,codes", TYPES, ids=IDS)
def test_conversions_and_analysis_match_the_ml_dtypes_array(name, code, bits, codes):
    typed = codes.view(getattr(ml_dtypes, name)).reshape(-1, 16)
    producer = Producer(codes.reshape(-1, 16), code, bits)
    for to, policy in (("e5m2", dict(overflow="sat")), ("e2m1", dict(round="rtz")), ("fp16", {})):
        got, want = fmtcheck.convert(producer, to, **policy), fmtcheck.convert(typed, to, **policy)
        assert got.codes.shape == typed.shape
        assert np.array_equal(got.codes.view(np.uint8 if to != "fp16" else np.uint16),
                              want.codes.view(np.uint8 if to != "fp16" else np.uint16))
        assert got.flags == want.flags
    assert fmtcheck.analyze({"t": producer}, "e4m3").results == fmtcheck.analyze({"t": typed}, "e4m3").results


@pytest.mark.parametrize("versioned", [False, True], ids=["dltensor", "dltensor_versioned"])
@pytest.mark.parametrize("name,code,bits,big", [("float8_e4m3fn", 10, 8, 0x7E), ("bfloat16", KDL_BFLOAT, 16, 0x43E0)],
                         ids=["e4m3fn", "bf16"])
def test_read_in_place(name, code, bits, big, versioned):
    # The extension reads the producer's memory: a change made after the export is seen.
    codes = np.zeros(1000, np.uint8 if bits == 8 else np.uint16)
    producer = Producer(codes, code, bits, versioned)
    exported = fmtcheck._core.NamedArrays(["x"], [producer], [None])
    producer.codes[500] = big  # 448 in both
    assert fmtcheck._core.analyze(exported, "e4m3")["results"][0]["measures"]["amax"] == 448.0
    assert producer.exports == 1


def test_sub_byte_dlpack_types_are_refused_by_name():
    with pytest.raises(TypeError, match=r"not float6_e2m3fn \(6 bits\)"):
        fmtcheck.convert(Producer(np.zeros(4, np.uint8), KDL_FLOAT6_E2M3FN, 6), "fp16")


@pytest.mark.parametrize("versioned", [False, True], ids=["dltensor", "dltensor_versioned"])
@pytest.mark.parametrize("name,code,bits,codes", TYPES, ids=IDS)
def test_every_code_decodes_as_ml_dtypes_widens_it(name, code, bits, codes, versioned):
    got = fmtcheck.decode(Producer(codes, code, bits, versioned))
    want = codes.view(getattr(ml_dtypes, name)).astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def test_arithmetic_and_gemm_take_fp8_producers_as_ml_dtypes_arrays():
    # Every pair of E4M3 codes added, and an E4M3 x E5M2 GEMM, from producers and from ml_dtypes arrays.
    a = np.repeat(np.arange(256, dtype=np.uint8), 256).reshape(256, 256)
    b = np.tile(np.arange(256, dtype=np.uint8), 256).reshape(256, 256)
    e4m3 = KDL_FLOAT8["float8_e4m3fn"]
    got = fmtcheck.add(Producer(a, e4m3, 8), Producer(b, e4m3, 8), overflow="sat")
    want = fmtcheck.add(a.view(ml_dtypes.float8_e4m3fn), b.view(ml_dtypes.float8_e4m3fn), overflow="sat")
    assert got.codes.shape == (256, 256) and got.codes.dtype == ml_dtypes.float8_e4m3fn
    assert np.array_equal(got.codes.view(np.uint8), want.codes.view(np.uint8)) and got.flags == want.flags
    rng = np.random.default_rng(6)
    x = rng.standard_normal((6, 32)).astype(ml_dtypes.float8_e4m3fn)
    y = rng.standard_normal((32, 5)).astype(ml_dtypes.float8_e5m2)
    d = fmtcheck.gemm(Producer(x.view(np.uint8), e4m3, 8), Producer(y.view(np.uint8), KDL_FLOAT8["float8_e5m2"], 8),
                      model="hopper-wgmma")
    assert np.array_equal(d, fmtcheck.gemm(x, y, model="hopper-wgmma"))


def test_a_view_holds_the_producers_tensor_until_it_goes():
    producer = Producer(np.arange(8, dtype=np.uint16), KDL_BFLOAT, 16)
    view, fmt = fmtcheck._core.dlpack_view(producer)
    part = view[2:]
    del view
    assert (fmt, producer.deleted, part.flags.writeable) == ("bf16", 0, False)
    assert np.array_equal(part, np.arange(2, 8))
    del part
    assert producer.deleted == 1
