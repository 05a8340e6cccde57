"""`fmtcheck convert --nan arm` (FPCR.DN = 0) and `--nan arm-dn` (DN = 1)
against QEMU's AArch64: every conversion row of tests/data/arm/
arm_nan_qemu.csv (FCVT between fp16, float32 and float64, and BFCVT into
bfloat16, on quiet and signaling NaNs and special values), the bits and the
invalid flag. The C++ test arith-nan-conventions-arm checks every row of that
file through the library, arithmetic included; this one proves the CLI's
conversion path gives the same."""
import csv
import json
import pathlib
import subprocess

import pytest

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "arm" / "arm_nan_qemu.csv"
CONVERSIONS = {"cvt_f32_f16": ("fp32", "fp16"), "cvt_f32_bf16": ("fp32", "bf16"), "cvt_f16_f32": ("fp16", "fp32"),
               "cvt_f32_f64": ("fp32", "fp64"), "cvt_f64_f32": ("fp64", "fp32")}


def qemu_rows(op, dn):
    with open(DATA) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return [r for r in rows if r["op"] == op and r["dn"] == str(dn)]


@pytest.mark.parametrize("dn", [0, 1])
@pytest.mark.parametrize("op", sorted(CONVERSIONS))
def test_cli_conversion_is_qemus(cli, op, dn):
    rows = qemu_rows(op, dn)
    assert len(rows) > 100, f"{DATA} has {len(rows)} rows of {op} dn={dn}"
    source, target = CONVERSIONS[op]
    args = ["0x" + r["a"] for r in rows]
    run = subprocess.run([cli, "convert", "--from", source, "--to", target, "--nan", "arm-dn" if dn else "arm",
                          "--json", *args], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    bad = [(r["a"], g["bits"], g["flags"], r["result"], r["invalid"]) for r, g in zip(rows, got)
           if int(g["bits"], 16) != int(r["result"], 16) or ("invalid" in g["flags"]) != (r["invalid"] == "1")]
    assert len(got) == len(rows)
    assert not bad, bad[:8]
