"""Sharded checkpoints and partial results: per-tensor rows against the
numpy + ml_dtypes oracle, whole-model totals against the oracle over all the
model's values at once, `fmtcheck merge` of every kind of split equal byte
for byte to one run, and every bad input (exit 2, one line, nothing written)."""
import json
import os
import pty
import random
import subprocess

import numpy as np
import pandas as pd
import pytest

import oracle
from clean_failure import assert_clean_failure
from checkpoint_files import tensors, write_checkpoint

FORMATS = "e4m3,e5m2,fp16"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return write_checkpoint(tmp_path_factory.mktemp("ckpt"))


def measures(path):
    return pd.read_csv(path, float_precision="round_trip", keep_default_na=False)


def test_per_tensor_and_whole_model_against_oracle(fmtcheck, tmp_path, checkpoint):
    out = tmp_path / "m.csv"
    r = fmtcheck("analyze", checkpoint, "--formats", FORMATS, "--csv", out)
    assert r.returncode == 0, r.stderr
    assert "skipped tensors that are not floating point: position_ids" in r.stderr
    df = measures(out)
    index = str(checkpoint / "model.safetensors.index.json")
    everything = []
    for shard, d in tensors().items():
        for name, x in d.items():
            if x.dtype == np.int64:
                continue
            everything.append(oracle.as_input(x).astype(np.float32))
            for fmt in FORMATS.split(","):
                rows = df[(df.tensor == name) & (df.format == fmt)]
                assert set(rows.file) == {str(checkpoint / shard)}
                got = dict(zip(rows.measure, rows.value))
                for m, want in oracle.analyze(x, fmt).items():
                    assert got[m] == pytest.approx(want, rel=1e-12, abs=0) if "rel_error" in m and "max" not in m else got[m] == want, (name, fmt, m)
    # The totals are the measures of one tensor holding every value of the model.
    whole = np.concatenate(everything)
    for fmt in FORMATS.split(","):
        rows = df[(df.tensor == "(all)") & (df.format == fmt)]
        assert set(rows.file) == {index}
        got = dict(zip(rows.measure, rows.value))
        want = oracle.analyze(whole, fmt)
        want = {k: v for k, v in want.items() if "best_pow2" not in k}
        assert set(got) == set(want) | {"flushed"}
        for m, v in want.items():
            if m in ("mean_rel_error", "rms_rel_error"):
                assert got[m] == pytest.approx(v, rel=1e-12, abs=0), (fmt, m)
            else:
                assert got[m] == v, (fmt, m, got[m], v)


def test_terminal_output_of_a_checkpoint(fmtcheck, checkpoint):
    # After the shards' tables, the whole model's row; the verdict counts every value once.
    fmt = "e4m3"
    r = fmtcheck("analyze", checkpoint, "--formats", fmt)
    assert r.returncode == 0, r.stderr
    xs = [x for d in tensors().values() for x in d.values() if x.dtype != np.int64]
    want = [oracle.analyze(x, fmt) for x in xs]
    overflow = sum(m["overflow"] + m["saturated"] for m in want)
    underflow = sum(m["underflow_to_zero"] for m in want)
    index = str(checkpoint / "model.safetensors.index.json")
    assert f"{index}: the whole model: {len(xs)} tensors, {sum(x.size for x in xs)} values" in r.stdout
    lines = r.stdout.splitlines()
    row = lines[lines.index(next(l for l in lines if l.startswith(index))) + 3].split()
    assert row[0] == "(all)" and row[2] == f"{overflow}/{underflow}", row
    assert float(row[1]) == pytest.approx(max(m["amax"] for m in want), rel=1e-3)
    verdict = r.stdout.split("\nverdict:\n", 1)[1]
    assert f"{underflow} (" in verdict and "underflow to zero" in verdict, verdict
    tensors_hit = sum(m["underflow_to_zero"] > 0 for m in want)
    assert f"({tensors_hit} tensors)" in verdict, verdict


def test_tensors_filter_across_shards(fmtcheck, tmp_path, checkpoint):
    out = tmp_path / "m.csv"
    r = fmtcheck("analyze", checkpoint / "model.safetensors.index.json", "--tensors", r"w1$", "--formats", "e4m3", "--csv", out)
    assert r.returncode == 0, r.stderr
    df = measures(out)
    assert sorted(set(df.tensor)) == ["(all)", "layers.0.w1", "layers.1.w1", "layers.2.w1"]
    total = df[(df.tensor == "(all)") & (df.measure == "values")].value.item()
    assert total == sum(d[f"layers.{s}.w1"].size for s, d in enumerate(tensors().values()))


def outputs(fmtcheck, tmp_path, tag, *args):
    """stdout and the CSV, histogram CSV and JSON files' bytes of a command."""
    files = {k: tmp_path / f"{tag}.{k}" for k in ("csv", "hist", "json")}
    r = fmtcheck(*args, "--csv", files["csv"], "--histogram-csv", files["hist"], "--json", files["json"])
    assert r.returncode == 0, r.stderr
    return [r.stdout] + [files[k].read_bytes() for k in ("csv", "hist", "json")]


@pytest.mark.parametrize("options", [["--formats", FORMATS], ["--formats", "e4m3,bf16", "--scale", "auto"],
                                     ["--formats", "e2m1", "--block", "32"]])
def test_merge_equals_one_run(fmtcheck, tmp_path, checkpoint, repo_root, options):
    files = [repo_root / "data/minilm/layer0.safetensors", repo_root / "data/minilm/layer0_query_weight.npy",
             *sorted((repo_root / "data/digits_mlp_trace").glob("step_00*.safetensors"))[:3]]
    index = checkpoint / "model.safetensors.index.json"
    shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
    # One run over every input, in the order merge sorts them: by path (a shard by its index's).
    inputs = sorted([str(f) for f in files] + [str(index)])
    one = outputs(fmtcheck, tmp_path, "one", "analyze", *inputs, *options)
    one_full = fmtcheck("analyze", *inputs, *options, "--full")
    assert one_full.returncode == 0, one_full.stderr

    # Each unit of work is a file, or one shard of the checkpoint.
    units = [("file", str(f)) for f in files] + [("shard", s) for s in shards]
    rng = random.Random(5)
    splits = [[[u] for u in units],                                   # one partial per file or shard
              [units[:3], units[3:]]]                                 # two uneven halves
    for _ in range(3):                                                # random groupings
        shuffled = rng.sample(units, len(units))
        cut = sorted(rng.sample(range(1, len(units)), 2))
        splits.append([shuffled[a:b] for a, b in zip([0] + cut, cut + [len(units)])])
    if os.environ.get("FMTCHECK_SANITIZED"):
        # Several times slower under the sanitizers: the two fixed splits run the same code.
        splits = splits[:2]
    for n, split in enumerate(splits):
        partials = []
        for k, group in enumerate(split):
            # The shards of one group go together: the index with one --shard each.
            args = [p for kind, p in group if kind == "file"]
            picked = [s for kind, s in group if kind == "shard"]
            if picked:
                args += [str(index)] + [x for s in picked for x in ("--shard", s)]
            partials.append(tmp_path / f"s{n}_{k}.partial")
            r = fmtcheck("analyze", *args, *options, "--partial", partials[-1])
            assert r.returncode == 0, r.stderr
        for order in (partials, partials[::-1], rng.sample(partials, len(partials))):
            assert outputs(fmtcheck, tmp_path, "merged", "merge", *order) == one, (split, order)
        # --full prints analyze's full table instead of the compact one.
        merged = fmtcheck("merge", *partials, "--full")
        assert merged.returncode == 0 and merged.stdout == one_full.stdout, split


def broken_checkpoint(tmp_path, how):
    shards = tensors()
    folder = write_checkpoint(tmp_path / "ckpt", shards)
    index = folder / "model.safetensors.index.json"
    j = json.loads(index.read_text())
    if how == "missing_shard":
        (folder / "model-00002-of-00003.safetensors").unlink()
        return folder, "shard 'model-00002-of-00003.safetensors' is missing"
    if how == "listed_not_in_shard":
        j["weight_map"]["layers.9.ghost"] = "model-00003-of-00003.safetensors"
        index.write_text(json.dumps(j))
        return folder, "'layers.9.ghost' is listed for shard model-00003-of-00003.safetensors but is not in it"
    if how == "in_two_shards":
        first = shards["model-00001-of-00003.safetensors"]
        first["layers.2.w0"] = shards["model-00003-of-00003.safetensors"]["layers.2.w0"]
        write_checkpoint(folder, shards)
        return folder, "'layers.2.w0' is in two shards: model-00001-of-00003.safetensors and model-00003-of-00003.safetensors"
    if how == "truncated_shard":
        shard = folder / "model-00003-of-00003.safetensors"
        shard.write_bytes(shard.read_bytes()[:-100])
        return folder, "model-00003-of-00003.safetensors: tensor"
    if how == "not_in_index":
        del j["weight_map"]["layers.0.w2"]
        index.write_text(json.dumps(j))
        return folder, "'layers.0.w2' of shard model-00001-of-00003.safetensors is not in the index"
    if how == "no_weight_map":
        index.write_text("{}")
        return folder, "no \"weight_map\""
    raise ValueError(how)


@pytest.mark.parametrize("how", ["missing_shard", "listed_not_in_shard", "in_two_shards", "truncated_shard", "not_in_index",
                                 "no_weight_map"])
def test_bad_checkpoint(fmtcheck, tmp_path, how):
    folder, message = broken_checkpoint(tmp_path, how)
    r = fmtcheck("analyze", folder, "--csv", tmp_path / "out.csv", "--partial", tmp_path / "out.partial")
    assert_clean_failure(r, tmp_path, [], message)


def test_shard_option_errors(fmtcheck, tmp_path, checkpoint, repo_root):
    r = fmtcheck("analyze", checkpoint, "--shard", "model-00009-of-00003.safetensors", "--partial", tmp_path / "out.partial")
    assert_clean_failure(r, tmp_path, ["model.safetensors.index.json"], "names no shard 'model-00009-of-00003.safetensors'")
    r = fmtcheck("analyze", repo_root / "data/minilm/layer0.safetensors", "--shard", "x", "--partial", tmp_path / "out.partial")
    assert_clean_failure(r, tmp_path, [], "--shard needs a checkpoint index")


@pytest.fixture
def two_partials(fmtcheck, tmp_path, repo_root):
    a, b = tmp_path / "a.partial", tmp_path / "b.partial"
    assert fmtcheck("analyze", repo_root / "data/minilm/layer0.safetensors", "--partial", a).returncode == 0
    assert fmtcheck("analyze", repo_root / "data/minilm/layer0_query_weight.npy", "--partial", b).returncode == 0
    return a, b


def test_merge_refuses_other_options(fmtcheck, tmp_path, repo_root, two_partials):
    a, _ = two_partials
    c = tmp_path / "c.partial"
    assert fmtcheck("analyze", repo_root / "data/minilm/layer0_query_weight.npy", "--formats", "e4m3", "--partial", c).returncode == 0
    r = fmtcheck("merge", a, c, "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["c.partial", "a.partial", "formats"], "made with other options than")


def test_merge_refuses_other_version(fmtcheck, tmp_path, two_partials):
    a, b = two_partials
    j = json.loads(b.read_text())
    j["options"]["version"] = "fmtcheck 9.9.9"
    b.write_text(json.dumps(j))
    r = fmtcheck("merge", a, b, "--json", tmp_path / "out.json")
    assert_clean_failure(r, tmp_path, ["b.partial", "fmtcheck 9.9.9"], "version")


@pytest.mark.parametrize("damage", ["truncated", "not_json", "bad_number", "other_file", "short_counters"])
def test_merge_refuses_damaged_partial(fmtcheck, tmp_path, two_partials, damage):
    a, b = two_partials
    text = b.read_text()
    j = json.loads(text)
    j["results"][0]["stats"] = j["results"][0]["stats"][:5]
    b.write_text({"truncated": text[: len(text) // 2],
                  "not_json": "hello",
                  "bad_number": text.replace('"0x', '"zz', 1),
                  "other_file": json.dumps({"weight_map": {}}),
                  "short_counters": json.dumps(j)}[damage])
    r = fmtcheck("merge", a, b, "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["b.partial"], "partial result")


def test_merge_refuses_a_tensor_twice(fmtcheck, tmp_path, two_partials):
    a, _ = two_partials
    r = fmtcheck("merge", a, a, "--csv", tmp_path / "out.csv")
    assert_clean_failure(r, tmp_path, ["a.partial"], "is also in")


def test_progress_on_a_terminal(tmp_path, checkpoint):
    # Progress draws only when stderr is a terminal: give it one.
    leader, follower = pty.openpty()
    r = subprocess.run([os.environ["FMTCHECK_CLI"], "analyze", checkpoint], stdout=subprocess.PIPE, stderr=follower, timeout=60)
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    assert r.returncode == 0
    text = drawn.decode()
    # The final line: every shard, all the bytes (3 shards of bf16 and float32 values), the rate.
    total = sum(x.nbytes for d in tensors().values() for x in d.values() if x.dtype != np.int64)
    assert "analyze shard 3/3: 100%" in text, text
    assert f"{total / 1000:.3g} kB of {total / 1000:.3g} kB" in text, text
    assert "B/s" in text, text
