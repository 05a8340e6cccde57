"""`fmtcheck values`: every code of a small format, checked against the OCP
MX specification's FP4 (E2M1) table, transcribed by hand."""
import csv
import io

from usage_error import assert_usage_error

# OCP MX v1.0, table of E2M1 values: codes 0..7 (sign 0), then their negatives.
E2M1 = ["0", "0.5", "1", "1.5", "2", "3", "4", "6"]
E2M1_CLASSES = ["zero", "subnormal"] + ["normal"] * 6


def test_e2m1_csv_is_the_ocp_table(fmtcheck):
    r = fmtcheck("values", "e2m1", "--csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader(io.StringIO(r.stdout.decode())))
    assert rows[0] == ["code", "class", "value"]
    expected = [[f"0x{c:02x}", cls, v] for c, (cls, v) in enumerate(zip(E2M1_CLASSES, E2M1))]
    expected += [[f"0x{c + 8:02x}", cls, "-" + v] for c, (cls, v) in enumerate(zip(E2M1_CLASSES, E2M1))]
    assert rows[1:] == expected


def test_aligned_table_shows_e4m3_specials(fmtcheck):
    # e4m3 (OCP): 0x7e is 448, 0x7f and 0xff are the only NaNs, 0x01 is 2^-9.
    r = fmtcheck("values", "e4m3")
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line.split()[1:] for line in r.stdout.decode().splitlines()[1:]}
    assert len(rows) == 256
    assert rows["0x7e"] == ["normal", "448"]
    assert rows["0x7f"] == ["nan", "nan"] and rows["0xff"] == ["nan", "-nan"]
    assert rows["0x01"] == ["subnormal", "0.001953125"]
    assert [k for k, v in rows.items() if v[0] == "nan"] == ["0x7f", "0xff"]


def test_formats_wider_than_16_bits_are_refused(fmtcheck):
    assert_usage_error(fmtcheck("values", "fp32"), "16 bits")


def test_unknown_format(fmtcheck):
    assert_usage_error(fmtcheck("values", "e4m3x"), "e4m3x")


def test_missing_format(fmtcheck):
    assert_usage_error(fmtcheck("values"), "FORMAT")
