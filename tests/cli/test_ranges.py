"""`fmtcheck ranges` against the DESIGN.md reference table (hand-checked
against the OCP FP8 / MX specifications and IEEE 754)."""
import csv
import io
import json

import pytest

from usage_error import assert_usage_error

# format: (max finite, min normal, min subnormal or None, inf bits or None)
REFERENCE = {
    "fp16": (65504.0, 2.0**-14, 2.0**-24, "0x7c00"),
    "bf16": ((2 - 2.0**-7) * 2.0**127, 2.0**-126, 2.0**-133, "0x7f80"),
    "tf32": ((2 - 2.0**-10) * 2.0**127, 2.0**-126, 2.0**-136, "0x7f800000"),
    "e4m3": (448.0, 2.0**-6, 2.0**-9, None),
    "e5m2": (57344.0, 2.0**-14, 2.0**-16, "0x7c"),
    "e4m3fnuz": (240.0, 2.0**-7, 2.0**-10, None),
    "e5m2fnuz": (57344.0, 2.0**-15, 2.0**-17, None),
    "e2m3": (7.5, 1.0, 0.125, None),
    "e3m2": (28.0, 0.25, 0.0625, None),
    "e2m1": (6.0, 1.0, 0.5, None),
    "e8m0": (2.0**127, 2.0**-127, None, None),
}


def test_json_matches_reference_table(fmtcheck):
    r = fmtcheck("ranges", "--json")
    assert r.returncode == 0, r.stderr
    rows = {row["format"]: row for row in json.loads(r.stdout)}
    assert set(REFERENCE) <= set(rows)
    for name, (max_finite, min_normal, min_sub, inf) in REFERENCE.items():
        row = rows[name]
        assert (row["max_finite"], row["min_normal"], row["min_subnormal"], row["inf"]) == \
            (max_finite, min_normal, min_sub, inf), name


def test_nan_codes_match_reference_table(fmtcheck):
    # fp16: exponent all ones, mantissa != 0, either sign: 2 * 1023. e4m3:
    # S.1111.111 only. e5m2: S.11111.{01,10,11}. fnuz: 0x80 only. MX FP6/FP4: none.
    expected = {"fp16": 2 * 1023, "e4m3": 2, "e5m2": 6, "e4m3fnuz": 1, "e5m2fnuz": 1, "e2m3": 0, "e2m1": 0,
                "e8m0": 1}
    r = fmtcheck("ranges", "--formats", ",".join(expected), "--json")
    assert r.returncode == 0, r.stderr
    assert {row["format"]: row["nan_codes"] for row in json.loads(r.stdout)} == expected


def test_user_format_spec(fmtcheck):
    # e3m4fn: bias 3; the top code 0.111.1110 is 2^(7-3) * (1 + 14/16) = 30;
    # min normal 2^(1-3); min subnormal 2^-2 * 2^-4.
    r = fmtcheck("ranges", "--formats", "e3m4fn", "--csv")
    assert r.returncode == 0, r.stderr
    (row,) = list(csv.DictReader(io.StringIO(r.stdout.decode())))
    assert (row["format"], row["bias"], float(row["max_finite"]), float(row["min_normal"]),
            float(row["min_subnormal"])) == ("e3m4fn", "3", 30.0, 0.25, 2.0**-6)


def brief_value(text):
    """A cell of the terminal table: "2^-14" or a number to 5 digits."""
    return 2.0 ** int(text[2:]) if text.startswith("2^") else float(text)


@pytest.mark.parametrize("formats", ["", "p3109"])
def test_table_fits_100_columns(fmtcheck, formats):
    r = fmtcheck("ranges", *(["--formats", formats] if formats else []))
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.decode().splitlines()) <= 100


def test_table_lists_every_preset_with_reference_values(fmtcheck):
    # The terminal table rounds to 5 significant digits; powers of two are exact.
    r = fmtcheck("ranges")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    header = lines[0].split("  ")
    header = [h.strip() for h in header if h.strip()]
    rows = {line.split()[0]: line.split() for line in lines[1:] if line and not line.startswith("(")}
    assert set(REFERENCE) | {"fp64", "fp32"} <= set(rows)
    for name, (max_finite, min_normal, min_sub, inf) in REFERENCE.items():
        cells = dict(zip(header, rows[name]))
        assert brief_value(cells["max finite"]) == pytest.approx(max_finite, rel=5e-5), name
        assert brief_value(cells["min normal"]) == min_normal, name
        assert cells["min subn."] == "none" if min_sub is None else brief_value(cells["min subn."]) == min_sub, name
        assert cells["inf"] == ("no" if inf is None else "yes"), name


@pytest.mark.parametrize("args,words", [
    (["--formats", "fp16,e9m9x"], ["e9m9x"]),
    (["--formats", ","], ["empty format list"]),
    (["--csv", "--json"], ["excludes"]),
])
def test_bad_input(fmtcheck, args, words):
    assert_usage_error(fmtcheck("ranges", *args), *words)


def test_p3109_family(fmtcheck):
    # gfloat's format_info_p3109: binary8p3se max 1.5 * 2^15, min normal
    # 2^-15, min subnormal 2^-17, +inf 0x7f, NaN 0x80; binary8p1uf (no
    # mantissa bits) max 2^126 and no subnormal but zero; binary8p8ue +inf
    # 0xfe, NaN 0xff.
    r = fmtcheck("ranges", "--formats", "p3109", "--json")
    assert r.returncode == 0, r.stderr
    rows = {row["format"]: row for row in json.loads(r.stdout)}
    assert len(rows) == 30
    p3 = rows["binary8p3se"]
    assert (p3["max_finite"], p3["min_normal"], p3["min_subnormal"], p3["inf"], p3["nan_encodings"]) == \
        (49152.0, 2.0**-15, 2.0**-17, "0x7f", "0x80")
    p1 = rows["binary8p1uf"]
    assert (p1["max_finite"], p1["min_subnormal"], p1["inf"], p1["nan_encodings"]) == (2.0**126, None, None, "0xff")
    assert (rows["binary8p8ue"]["inf"], rows["binary8p8ue"]["nan_encodings"]) == ("0xfe", "0xff")
