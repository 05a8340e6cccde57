"""fmtcheck analyze against numpy + ml_dtypes over the same files: every
count and error, the histograms, the scales, for every reader."""
import io
import math

import ml_dtypes
import numpy as np
import pandas as pd
import pytest
from safetensors.numpy import save_file

import oracle

# Overflowing casts in the oracle are intended (that is what is measured).
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FORMATS = ["fp16", "bf16", "e4m3", "e5m2"]


def boundary_values():
    """Values where the formats disagree: range edges, ties, specials."""
    v = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8,
         65504, 65519.996, 65520, 65536, 448, 456, 464, 464.03125, 480, 57344, 61439.996, 61440,
         2**-24, 2**-25, 2**-25 * 1.0001, 2**-9, 2**-10, 1.5 * 2**-10, 2**-16, 2**-17, 1.01 * 2**-17,
         2**-126, 2**-133, 2**-134, 1.5 * 2**-134, 1e-45, 3.4e38, 2**-6, 2**-7, 2**-14, 2**-15]
    v = np.array(v, dtype=np.float32)
    return np.concatenate([v, -v])


def sample(n=20000, seed=7):
    """Log-uniform magnitudes over 2^-30 .. 2^20, both signs, plus the boundaries."""
    rng = np.random.default_rng(seed)
    mag = np.exp2(rng.uniform(-30, 20, n)).astype(np.float32)
    sign = np.where(rng.random(n) < 0.5, -1, 1).astype(np.float32)
    return np.concatenate([boundary_values(), mag * sign]).astype(np.float32)


def run_csv(fmtcheck, tmp_path, *args):
    out = tmp_path / "measures.csv"
    hist = tmp_path / "hist.csv"
    r = fmtcheck("analyze", *args, "--csv", out, "--histogram-csv", hist)
    assert r.returncode == 0, r.stderr
    return pd.read_csv(out, float_precision="round_trip"), pd.read_csv(hist, float_precision="round_trip")


def check(df, tensor, fmt, expected, scale_label=None):
    rows = df[(df.tensor == tensor) & (df.format == fmt)]
    assert len(rows) > 0, f"no rows for {tensor} {fmt}"
    got = dict(zip(rows.measure, rows.value))
    if scale_label is not None:
        assert set(rows.scale.astype(str)) == {scale_label}
    for name, want in expected.items():
        assert name in got, f"{tensor} {fmt}: no measure {name}"
        if name in ("mean_rel_error", "rms_rel_error"):
            assert got[name] == pytest.approx(want, rel=1e-12, abs=0), f"{tensor} {fmt} {name}"
        else:
            assert got[name] == want, f"{tensor} {fmt} {name}: fmtcheck {got[name]!r}, numpy {want!r}"


def check_hist(hist, tensor, x):
    rows = hist[hist.tensor == tensor]
    assert dict(zip(rows.binade, rows["count"])) == oracle.binades(x)


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
@pytest.mark.parametrize("order", ["<", ">"])
def test_npy_float32_every_format(fmtcheck, tmp_path, version, order):
    x = sample()
    path = tmp_path / "x.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array(f, x.astype(order + "f4"), version=version)
    df, hist = run_csv(fmtcheck, tmp_path, path, "--formats", ",".join(FORMATS))
    for fmt in FORMATS:
        check(df, "x", fmt, oracle.analyze(x, fmt), "1")
    check_hist(hist, "x", x)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "fp16", "bf16", "e4m3fnuz", "e5m2fnuz"])
def test_saturating_policy(fmtcheck, tmp_path, fmt):
    x = sample(5000, seed=11)
    x = x[~np.isinf(x)] if fmt.endswith("fnuz") else x  # fnuz: inf with sat is CUDA-only semantics; keep finite
    np.save(tmp_path / "x.npy", x)
    df, _ = run_csv(fmtcheck, tmp_path, tmp_path / "x.npy", "--formats", fmt, "--overflow", "sat")
    check(df, "x", fmt, oracle.analyze(x, fmt, sat=True))


@pytest.mark.parametrize("dtype,flag", [(np.float16, None), (np.float64, None), (ml_dtypes.bfloat16, None),
                                        (ml_dtypes.float8_e5m2, None), (ml_dtypes.float8_e4m3fn, "e4m3")])
def test_npy_narrow_dtypes(fmtcheck, tmp_path, dtype, flag):
    # The file holds `dtype`; fmtcheck widens it to float32 exactly (float64 stays), as does the oracle.
    stored = sample(4000, seed=3).astype(dtype)
    np.save(tmp_path / "x.npy", stored)
    args = ["--dtype", flag] if flag else []
    df, hist = run_csv(fmtcheck, tmp_path, tmp_path / "x.npy", "--formats", "fp16,e4m3", *args)
    for fmt in ["fp16", "e4m3"]:
        check(df, "x", fmt, oracle.analyze(stored, fmt))
    check_hist(hist, "x", stored)


def float64_only_values():
    """float64 values whose results change if they are narrowed to float32
    first: just above fp16/bf16/e4m3 ties (narrowing lands on the tie and
    rounds to even), beyond float32's range, below its subnormals, and
    offsets float32 cannot hold (exact in float32, inexact in float64)."""
    v = [1 + 2**-11 + 2**-40, 1 + 2**-8 + 2**-35, 1 + 2**-4 + 2**-30, 2049 + 2**-30, 1 + 2**-30, 1 - 2**-40,
         1e39, 3.5e38, 1e-50, 2**-24 * (1 + 2**-40), 2**-25 * (1 + 2**-30), 2**-150, 65520 - 2**-20, 464 + 2**-30,
         61440 - 2**-25, 0.1, 1 / 3, np.pi, 0.0, np.nan, np.inf]
    v = np.array(v, dtype=np.float64)
    rng = np.random.default_rng(23)
    noise = np.exp2(rng.uniform(-40, 20, 3000)) * np.where(rng.random(3000) < 0.5, -1.0, 1.0)
    return np.concatenate([v, -v, noise])


@pytest.mark.parametrize("container", ["npy", "safetensors"])
def test_float64_measured_exactly(fmtcheck, tmp_path, container):
    x = float64_only_values()
    # The test means something: narrowing to float32 first would change results.
    for fmt in FORMATS:
        once = oracle.cast(x, fmt, sat=False)
        twice = oracle.cast(x.astype(np.float32).astype(np.float64), fmt, sat=False)
        assert np.sum(~((once == twice) | (np.isnan(once) & np.isnan(twice)))) > 0, fmt
    path = tmp_path / f"x.{container}"
    if container == "npy":
        np.save(path, x)
    else:
        save_file({"x": x}, str(path))
    df, hist = run_csv(fmtcheck, tmp_path, path, "--formats", ",".join(FORMATS))
    for fmt in FORMATS:
        check(df, "x", fmt, oracle.analyze(x, fmt))
    df, _ = run_csv(fmtcheck, tmp_path, path, "--formats", "e4m3,bf16", "--overflow", "sat", "--scale", "pow2:-3")
    for fmt in ["e4m3", "bf16"]:
        check(df, "x", fmt, oracle.analyze(x, fmt, scale=2.0**-3, sat=True))
    check_hist(hist, "x", x)
    assert oracle.binades(x) != oracle.binades(x.astype(np.float32))


def test_safetensors_every_dtype(fmtcheck, tmp_path):
    x = sample(3000, seed=5)
    tensors = {"f32": x.reshape(-1, 1), "f64": x.astype(np.float64), "f16": x.astype(np.float16),
               "bf16": x.astype(ml_dtypes.bfloat16), "e4m3": x.astype(ml_dtypes.float8_e4m3fn),
               "e5m2": x.astype(ml_dtypes.float8_e5m2), "ids": np.arange(10, dtype=np.int64)}
    path = tmp_path / "t.safetensors"
    save_file(tensors, str(path))
    out = tmp_path / "m.csv"
    r = fmtcheck("analyze", path, "--formats", "bf16,e5m2", "--csv", out)
    assert r.returncode == 0, r.stderr
    assert "ids" in r.stderr  # the integer tensor is skipped with a note
    df = pd.read_csv(out, float_precision="round_trip")
    assert set(df.tensor) == {"f32", "f64", "f16", "bf16", "e4m3", "e5m2"}
    for name, t in tensors.items():
        if name == "ids":
            continue
        for fmt in ["bf16", "e5m2"]:
            check(df, name, fmt, oracle.analyze(t, fmt))


def test_raw_and_csv(fmtcheck, tmp_path):
    x = sample(2000, seed=9)
    (tmp_path / "x.bin").write_bytes(x.astype("<f2").tobytes())
    finite = x[np.isfinite(x)]
    # CSV cells in float32's shortest round-trip form, parsed exactly by fmtcheck.
    pd.DataFrame({"id": np.arange(finite.size), "grad": [repr(float(v)) for v in finite]}).to_csv(tmp_path / "g.csv", index=False)
    df, _ = run_csv(fmtcheck, tmp_path, tmp_path / "x.bin", "--dtype", "fp16", "--shape", f"{x.size // 2},2",
                    "--formats", "e4m3,bf16")
    for fmt in ["e4m3", "bf16"]:
        check(df, "x", fmt, oracle.analyze(x.astype(np.float16).astype(np.float32), fmt))
    df, _ = run_csv(fmtcheck, tmp_path, tmp_path / "g.csv", "--column", "grad", "--formats", "fp16")
    check(df, "grad", "fp16", oracle.analyze(finite, "fp16"))


@pytest.mark.parametrize("spec", ["pow2:-3", "pow2:12", "amax", "amax:2", "auto"])
def test_scales(fmtcheck, tmp_path, spec):
    x = sample(5000, seed=13)
    x = x[np.isfinite(x)]
    np.save(tmp_path / "x.npy", x)
    df, _ = run_csv(fmtcheck, tmp_path, tmp_path / "x.npy", "--formats", "e4m3,fp16", "--scale", spec)
    amax = float(np.abs(x).max())
    for fmt in ["e4m3", "fp16"]:
        top = np.float32(oracle.finfo(fmt).max)
        if spec.startswith("pow2:"):
            s = np.float32(2.0 ** int(spec[5:]))
        elif spec == "auto":
            s = np.float32(2.0 ** oracle.best_pow2_exponent(amax, fmt))
        else:  # Transformer Engine: (fp8_max / amax) / 2^margin in float32
            margin = int(spec[5:]) if ":" in spec else 0
            s = (top / np.float32(amax)) / np.float32(2.0 ** margin)
        want = oracle.analyze(x, fmt, scale=s)
        check(df, "x", fmt, want, str(float(s)) if float(s) != int(s) else str(int(s)))


@pytest.mark.parametrize("fmt,rule", [("e4m3", "ocp"), ("e2m1", "ocp"), ("e2m1", "ceil"), ("e3m2", "rne")])
def test_mx_blocks(fmtcheck, tmp_path, fmt, rule):
    rng = np.random.default_rng(17)
    # 64 blocks of 32 with amaxes spread over 2^-20 .. 2^20 and a zero block.
    x = (rng.standard_normal((64, 32)) * np.exp2(rng.uniform(-20, 20, (64, 1)))).astype(np.float32)
    x[5] = 0
    x[9, 3] = np.nan  # a NaN does not enter its block's amax
    np.save(tmp_path / "x.npy", x)
    df, _ = run_csv(fmtcheck, tmp_path, tmp_path / "x.npy", "--formats", fmt, "--block", "32",
                    "--scale-rule", rule, "--overflow", "sat", "--block-csv", tmp_path / "blocks.csv")
    blocks = pd.read_csv(tmp_path / "blocks.csv", float_precision="round_trip")
    info = oracle.finfo(fmt)
    top, emax = float(info.max), int(np.floor(np.log2(float(info.max))))
    total = None
    ks = []
    for i, block in enumerate(x):
        amax = float(np.nanmax(np.abs(block)))
        if amax == 0:
            k = 0
        elif rule == "ocp":  # OCP MX v1.0: floor(log2 amax) - emax_elem
            k = int(np.floor(np.log2(amax))) - emax
        elif rule == "ceil":
            k = int(math.ceil(math.log2(amax / top)))
        else:
            # nearest power of two to amax / max in linear terms (no ties in this data)
            q = amax / top
            lo = math.floor(math.log2(q))
            mid = 1.5 * 2.0 ** lo  # halfway between 2^lo and 2^(lo+1)
            k = lo + 1 if q > mid else lo
        k = max(-127, min(127, k))
        ks.append(k)
        s = np.float32(2.0 ** -k)
        r = oracle.cast((block * s).astype(np.float32), fmt, sat=True)
        m = oracle.conversion_measures(block, r, s, fmt, sat=True)
        if total is None:
            total = {key: [] for key in m}
        for key, v in m.items():
            total[key].append(v)
        row = blocks.iloc[i]
        assert (row.file, row.tensor, row.format, row.scale_rule, row.block, row["start"]) == (str(tmp_path / "x.npy"), "x", fmt, rule, i, 32 * i)
        assert (row.amax, row.scale_log2) == (amax, k), f"block {i}"
        for key in ["values", "exact", "inexact", "overflow", "saturated", "underflow_to_zero", "subnormal", "max_abs_error",
                    "max_rel_error"]:
            assert row[key] == m[key], f"block {i} {key}: fmtcheck {row[key]!r}, numpy {m[key]!r}"
    assert len(blocks) == 64
    want = {key: sum(total[key]) for key in ["values", "exact", "inexact", "overflow", "saturated", "underflow_to_zero", "subnormal"]}
    want["max_abs_error"] = max(total["max_abs_error"])
    want["max_rel_error"] = max(total["max_rel_error"])
    want["blocks"] = 64
    want["min_block_scale_log2"] = min(ks)
    want["max_block_scale_log2"] = max(ks)
    check(df, "x", fmt, want, f"block32:{rule}")


def test_tensors_regex_and_json(fmtcheck, tmp_path):
    x = sample(500)
    save_file({"layer.0.w": x, "layer.0.b": x[:10], "head.w": x[:20]}, str(tmp_path / "m.safetensors"))
    out = tmp_path / "m.json"
    r = fmtcheck("analyze", tmp_path / "m.safetensors", "--tensors", r"\.w$", "--formats", "fp16", "--json", out)
    assert r.returncode == 0, r.stderr
    import json
    j = json.loads(out.read_text())
    assert sorted(res["tensor"] for res in j["results"]) == ["head.w", "layer.0.w"]
    want = oracle.analyze(x[:20], "fp16")
    got = next(res for res in j["results"] if res["tensor"] == "head.w")["measures"]
    assert got["underflow_to_zero"] == want["underflow_to_zero"] and got["max_rel_error"] == want["max_rel_error"]


def test_real_minilm_weights(fmtcheck, tmp_path, repo_root):
    from safetensors.numpy import load_file
    path = repo_root / "data" / "minilm" / "layer0.safetensors"
    df, hist = run_csv(fmtcheck, tmp_path, path, "--formats", ",".join(FORMATS))
    for name, t in load_file(str(path)).items():
        for fmt in FORMATS:
            check(df, name, fmt, oracle.analyze(t, fmt))
        check_hist(hist, name, t)


@pytest.mark.parametrize("amax", [1.0, 2.0**20, 3.0e38])
def test_underflow_at_best_pow2_scale_boundaries(fmtcheck, tmp_path, amax):
    # Values at, just above and just below the two edges of "underflows at the best
    # power-of-two scale 2^k": |x| * 2^k at half the format's smallest subnormal (the
    # tie goes to zero) and, for k < 0, the float32 product's own underflow to zero at
    # 2^-150. fmtcheck reads these counts off its input histogram where it can; numpy
    # converts.
    edges = set()
    for fmt in FORMATS:
        k = oracle.best_pow2_exponent(amax, fmt)
        half_sub = float(oracle.finfo(fmt).smallest_subnormal) / 2
        for e in [half_sub * 2.0**-k, 2.0**(-150 - k)]:
            if 2.0**-149 <= e < 3e38:
                edges.add(e)
    v = []
    for e in sorted(edges):
        e32 = np.float32(e)
        v += [e32, np.nextafter(e32, np.float32(np.inf)), np.nextafter(e32, np.float32(0)), e32 * np.float32(1.5),
              e32 / np.float32(2)]
    x = np.array(v + [amax, -amax, 0.0], dtype=np.float32)
    x = np.concatenate([x, -x[:-3]])
    np.save(tmp_path / "x.npy", x)
    df, _ = run_csv(fmtcheck, tmp_path, tmp_path / "x.npy", "--formats", ",".join(FORMATS))
    for fmt in FORMATS:
        want = oracle.analyze(x, fmt)
        assert 0 < want["underflow_at_best_pow2_scale"] < 1 or fmt == "bf16", fmt  # the edges are in play
        check(df, "x", fmt, {"best_pow2_scale": want["best_pow2_scale"],
                             "underflow_at_best_pow2_scale": want["underflow_at_best_pow2_scale"]})


def test_raw_format_wider_than_float32(fmtcheck, tmp_path):
    # e9m6 (bias 255) reaches 2^255: its values cannot go through float32 and are
    # measured as float64. Codes and values worked out by hand.
    codes = np.array([(455 << 6) | 32, 55 << 6, (255 << 6) | 1, 0x8000 | (455 << 6) | 32], dtype="<u2")
    x = np.array([1.5 * 2.0**200, 2.0**-200, 1 + 2.0**-6, -1.5 * 2.0**200])
    (tmp_path / "w.bin").write_bytes(codes.tobytes())
    df, hist = run_csv(fmtcheck, tmp_path, tmp_path / "w.bin", "--dtype", "e9m6", "--formats", "bf16,e4m3")
    for fmt in ["bf16", "e4m3"]:
        check(df, "w", fmt, oracle.analyze(x, fmt))
    check_hist(hist, "w", x)
