"""scripts/fmtcheck_dask.py on a LocalCluster of two worker processes, over
the bundled data and a generated three-shard checkpoint: the merged stdout,
CSV, histogram CSV and JSON equal one local `fmtcheck analyze` run's bytes."""
import os
import subprocess
import sys

from checkpoint_files import write_checkpoint


def test_two_workers_equal_one_run(fmtcheck, tmp_path, repo_root):
    checkpoint = write_checkpoint(tmp_path / "ckpt")
    inputs = sorted([str(repo_root / "data/minilm/layer0.safetensors"), str(repo_root / "data/minilm/layer0_query_weight.npy"),
                     *map(str, sorted((repo_root / "data/digits_mlp_trace").glob("*.safetensors"))[:4]),
                     str(checkpoint / "model.safetensors.index.json")])
    options = ["--formats", "e4m3,e5m2,bf16", "--threads", "1"]

    def outputs(tag):
        return {k: tmp_path / f"{tag}.{k}" for k in ("csv", "hist", "json")}

    one = outputs("one")
    r = fmtcheck("analyze", *inputs, *options, "--csv", one["csv"], "--histogram-csv", one["hist"], "--json", one["json"])
    assert r.returncode == 0, r.stderr

    dask = outputs("dask")
    d = subprocess.run([sys.executable, str(repo_root / "scripts/fmtcheck_dask.py"), "--workers", "2",
                        "--fmtcheck", os.environ["FMTCHECK_CLI"], "--csv", str(dask["csv"]),
                        "--histogram-csv", str(dask["hist"]), "--json", str(dask["json"]),
                        *reversed(inputs), "--", *options], capture_output=True, text=True, timeout=240)
    assert d.returncode == 0, d.stderr
    assert d.stdout == r.stdout
    for k in one:
        assert dask[k].read_bytes() == one[k].read_bytes(), k
    assert "(all)" in r.stdout  # the checkpoint's whole-model rows took part


def test_a_failing_task_reports_fmtcheck_and_exits_2(tmp_path, repo_root):
    d = subprocess.run([sys.executable, str(repo_root / "scripts/fmtcheck_dask.py"), "--workers", "1",
                        "--fmtcheck", os.environ["FMTCHECK_CLI"], str(tmp_path / "missing.npy")],
                       capture_output=True, text=True, timeout=240)
    assert d.returncode == 2
    assert "missing.npy" in d.stderr.strip().splitlines()[-1]
