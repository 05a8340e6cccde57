"""What `analyze` and `scale` print on a terminal: the compact table and the
verdict per format, their numbers against numpy + ml_dtypes (the oracle of
test_analyze_oracle.py), and every line within 100 columns."""
import re

import numpy as np
import pytest
from safetensors.numpy import save_file

import oracle

# Overflowing casts in the oracle are intended (that is what is measured).
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

WIDTH = 100
FORMATS = ["fp16", "bf16", "e4m3", "e5m2"]


def tensors():
    """Three tensors with different fates: `wide` spans 2^-30 .. 2^-2 (more
    binades than e4m3 holds), `large` reaches 2^18 (fp16 and the FP8 formats
    overflow), `fits` is fine in every format."""
    rng = np.random.default_rng(11)
    sign = lambda n: np.where(rng.random(n) < 0.5, -1, 1)
    wide = (np.exp2(rng.uniform(-30, -2, 4000)) * sign(4000)).astype(np.float32)
    large = (np.exp2(rng.uniform(-4, 18, 3000)) * sign(3000)).astype(np.float32)
    fits = np.array([0.5, -1.0, 1.5, 2.0, 0.25, -3.0], dtype=np.float32)
    return {"model.layers.0.self_attention.a_tensor_name_too_long_for_a_table_of_100_columns.wide": wide, "large": large, "fits": fits}


def lines_fit(text):
    too_wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not too_wide, f"{len(too_wide)} lines over {WIDTH} columns, e.g. {too_wide[0]!r}"


def verdicts(stdout):
    """{format: verdict text} from the lines after 'verdict:'."""
    text = stdout.split("\nverdict:\n", 1)[1]
    out, current = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            current, rest = line.split(maxsplit=1)
            out[current] = rest
        else:
            out[current] += " " + line.strip()
    return out


def count(pattern, text):
    """The count before `pattern` ("12 (0.3%) underflow"), 0 when absent."""
    m = re.search(r"(\d+)(?: \([^)]*\))? " + pattern, text)
    return int(m.group(1)) if m else 0


def test_compact_table_and_verdict(fmtcheck, tmp_path):
    ts = tensors()
    path = tmp_path / "m.safetensors"
    save_file(ts, str(path))
    r = fmtcheck("analyze", path, "--formats", ",".join(FORMATS))
    assert r.returncode == 0, r.stderr
    lines_fit(r.stdout)
    want = {(name, f): oracle.analyze(x, f) for name, x in ts.items() for f in FORMATS}
    n = sum(x.size for x in ts.values())
    assert f"{len(ts)} tensors, {n} values" in r.stdout

    # The table: per tensor, "overflow/underflow" per format; the long name is
    # cut in the middle, its start and end kept.
    header = next(l for l in r.stdout.splitlines() if l.startswith("tensor "))
    assert header.split()[2:] == FORMATS
    rows = {l.split()[0]: l.split()[2:] for l in r.stdout.splitlines()[r.stdout.splitlines().index(header) + 1:]
            if l and not l.startswith(("verdict", " ")) and len(l.split()) == 2 + len(FORMATS)}
    for name, x in ts.items():
        key = next(k for k in rows if (k == name) or ("..." in k and name.startswith(k.split("...")[0])
                                                         and name.endswith(k.split("...")[1])))
        for f, cell in zip(FORMATS, rows[key]):
            m = want[name, f]
            assert cell == f"{m['overflow'] + m['saturated']}/{m['underflow_to_zero']}", (name, f)

    v = verdicts(r.stdout)
    assert list(v) == FORMATS
    for f in FORMATS:
        ms = [want[name, f] for name in ts]
        overflow = sum(m["overflow"] for m in ms)
        underflow = sum(m["underflow_to_zero"] for m in ms)
        assert count("overflow", v[f]) == overflow, (f, v[f])
        assert count("underflow to zero", v[f].split(". ")[0]) == underflow, (f, v[f])
        if overflow == 0 and underflow == 0:
            assert v[f].startswith("fits at scale 1"), (f, v[f])
            continue
        # The fix: each tensor's best power of two, and what still underflows there.
        ks = [round(np.log2(m["best_pow2_scale"])) for m in ms]
        at_best = round(sum(m["underflow_at_best_pow2_scale"] * x.size for m, x in zip(ms, ts.values())))
        assert f"2^{min(ks)} to 2^{max(ks)} (--scale auto)" in v[f], (f, v[f])
        if at_best == 0:
            assert v[f].endswith("leaves no overflow and no underflow."), (f, v[f])
        else:
            assert count("underflow to zero: values that lie below", v[f]) == at_best, (f, v[f])
    # The data is built so that every branch is taken.
    assert v["bf16"].startswith("fits")
    assert "more exponent bits" in v["e4m3"]
    assert count("overflow", v["fp16"]) > 0


def test_verdict_at_the_best_scales(fmtcheck, tmp_path):
    # --scale auto already applies each tensor's best power of two: what still
    # underflows is beyond any scale.
    ts = tensors()
    path = tmp_path / "m.safetensors"
    save_file(ts, str(path))
    r = fmtcheck("analyze", path, "--formats", "e4m3,fp16", "--scale", "auto")
    assert r.returncode == 0, r.stderr
    v = verdicts(r.stdout)
    at_best = round(sum(oracle.analyze(x, "e4m3")["underflow_at_best_pow2_scale"] * x.size for x in ts.values()))
    assert v["e4m3"].startswith(f"at scale auto: {at_best} (")
    assert "No power-of-two scale does better" in v["e4m3"]
    assert v["fp16"].startswith("fits at scale auto")


def test_formats_that_do_not_fit_side_by_side(fmtcheck, tmp_path):
    path = tmp_path / "m.safetensors"
    save_file(tensors(), str(path))
    formats = ["fp16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3", "e2m1", "tf32", "e8m0"]
    r = fmtcheck("analyze", path, "--formats", ",".join(formats), "--overflow", "sat")
    assert r.returncode == 0, r.stderr
    lines_fit(r.stdout)
    shown = [f for l in r.stdout.splitlines() if l.startswith("tensor ") for f in l.split()[2:]]
    assert shown == formats
    assert list(verdicts(r.stdout)) == formats
    assert "e8m0 has no sign" in verdicts(r.stdout)["e8m0"]


def test_full_table(fmtcheck, tmp_path):
    path = tmp_path / "m.safetensors"
    save_file(tensors(), str(path))
    r = fmtcheck("analyze", path, "--full")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].split()[:4] == ["file", "tensor", "format", "scale"]
    assert len(r.stdout.splitlines()) == 2 + 3 * 4 and "verdict" not in r.stdout


def test_scale_output_fits(fmtcheck, repo_root):
    for recipe in ["gradscaler", "delayed"]:
        r = fmtcheck("scale", repo_root / "data" / "digits_mlp_trace", "--recipe", recipe)
        assert r.returncode == 0, r.stderr
        lines_fit(r.stdout)
        assert "\nverdict:\n" in r.stdout
