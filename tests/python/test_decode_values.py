"""Decoding: every code of each format of at most 16 bits, as `fmtcheck
values F --csv` lists it (code, class, exact decimal value), against
ml_dtypes' (numpy's for fp16) decoding of the same bits. The decimal is
read exactly with fractions.Fraction, so every digit is checked."""
import csv
import io
import subprocess
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from oracles import TARGETS

FORMATS = ["fp16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m3", "e3m2", "e2m1", "e8m0"]


def oracle_class(value, smallest_normal, has_subnormals):
    if np.isnan(value):
        return "nan"
    if np.isinf(value):
        return "inf"
    if value == 0 and has_subnormals:
        return "zero"
    return "subnormal" if abs(value) < smallest_normal and has_subnormals else "normal"


def values_rows(cli, name):
    """The rows of `fmtcheck values NAME --csv`: code, class, value."""
    run = subprocess.run([cli, "values", name, "--csv"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return list(csv.DictReader(io.StringIO(run.stdout)))


@pytest.mark.parametrize("name", FORMATS)
def test_every_code_decodes_as_ml_dtypes(cli, name):
    target = TARGETS[name]
    rows = values_rows(cli, name)
    width = 1 + target.exponent_bits + target.mantissa_bits - (1 if name == "e8m0" else 0)
    assert len(rows) == 1 << width
    digits = target.storage_bits // 4
    codes = np.arange(1 << width, dtype=np.uint64)
    storage = np.uint16 if target.storage_bits == 16 else np.uint8
    with np.errstate(invalid="ignore"):  # NaN codes
        values = codes.astype(storage).view(target.ml_dtype).astype(np.float64)
    smallest_normal = float(ml_dtypes.finfo(target.ml_dtype).smallest_normal)
    has_subnormals = name != "e8m0"  # every E8M0 code is a power of two
    for code, row, value in zip(codes, rows, values):
        where = f"{name} code {int(code):#x}: {row}"
        assert row["code"] == f"0x{int(code):0{digits}x}", where
        assert row["class"] == oracle_class(value, smallest_normal, has_subnormals), where
        if np.isnan(value):
            # The fnuz NaN is the code of -0; ml_dtypes and fmtcheck both call it negative.
            assert row["value"] == ("-nan" if np.signbit(value) else "nan"), where
        elif np.isinf(value):
            assert row["value"] == ("-inf" if value < 0 else "inf"), where
        else:
            assert Fraction(row["value"]) == Fraction(float(value)), where
            assert row["value"].startswith("-") == bool(np.signbit(value)), where
