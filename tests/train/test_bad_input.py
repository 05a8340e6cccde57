"""Bad input to fmtcheck train: one line on stderr naming the problem, exit
2, nothing on stdout and no output file written."""
import gzip

import pytest


@pytest.mark.parametrize("args, words", [
    (["--recipe", "fp16,fp12"], ["fp12", "recipe"]),
    (["--recipe", "fp16,fp16"], ["twice"]),
    (["--model", "resnet"], ["resnet", "model"]),
    (["--gpu", "h100"], ["h100", "gpu"]),
    (["--gpu", "volta"], ["volta", "bf16"]),
    (["--gpu", "exact", "--recipe", "mx:e2m1/e3m2"], ["mx:e2m1/e3m2", "recipe"]),
    (["--gpu", "exact", "--recipe", "current:e4m3x"], ["current:e4m3x", "recipe"]),
    (["--gpu", "hopper", "--recipe", "current:e4m3fnuz"], ["e4m3fnuz", "hopper"]),
    (["--gpu", "ampere", "--recipe", "fp8-delayed"], ["ampere", "e4m3"]),
    (["--gpu", "hopper", "--recipe", "mxfp8"], ["mxfp8", "blackwell"]),
    (["--steps", "0"], ["--steps"]),
    (["--batch", "0"], ["--batch"]),
    (["--optimizer", "lamb"], ["lamb"]),
    (["--lr", "-0.1"], ["--lr"]),
    (["--init-scale", "0"], ["--init-scale"]),
    (["--amax-compute", "mean"], ["mean"]),
    (["--recipe", "bf16-pure-fast"], ["bf16-pure-fast", "recipe"]),
    (["--infer", "fp32,int8"], ["int8", "--infer"]),
    (["--gpu", "ampere", "--infer", "fp8-current"], ["ampere", "e4m3"]),
    (["--sr-bits", "0"], ["--sr-bits"]),
    (["--params", "-7e9"], ["--params"]),
    (["--infer-tolerance", "-0.01"], ["--infer-tolerance"]),
    (["--infer-tolerance", "inf"], ["--infer-tolerance"]),
])
def test_bad_option(fmtcheck, digits, tmp_path, args, words):
    out = tmp_path / "steps.csv"
    r = fmtcheck("train", "--data", digits, "--steps", 2, "--csv", out, *args)
    check(r, words)
    assert not out.exists()


@pytest.mark.parametrize("content, words", [
    (b"1,2,3\n", ["line 1", "64 pixel values"]),
    (b"0," * 64 + b"10\n", ["line 1", "label"]),
    (b"0," * 63 + b"x,1\n", ["line 1", "'x'"]),
    (b"", ["no data"]),
])
def test_malformed_data(fmtcheck, tmp_path, content, words):
    data = tmp_path / "digits.csv.gz"
    data.write_bytes(gzip.compress(content))
    out = tmp_path / "steps.json"
    check(fmtcheck("train", "--data", data, "--json", out), words)
    assert not out.exists()


def test_missing_data(fmtcheck, tmp_path):
    check(fmtcheck("train", "--data", tmp_path / "none.csv.gz"), ["cannot read"])


def check(r, words):
    err = r.stderr.decode()
    assert r.returncode == 2, (r.returncode, err)
    assert r.stdout == b""
    assert err.endswith("\n") and err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)


@pytest.mark.parametrize("content, words", [
    (b"1,2,3\n", ["sort task line 1", "expected 6 tokens"]),
    (b"1,2,3,4,5,6,7,1,2,3,4,5,6\n", ["line 1", "'7' is not the separator 8"]),
    (b"1,2,3,4,5,9,8,1,2,3,4,5,6\n", ["line 1", "'9' is not a token"]),
])
def test_malformed_token_data(fmtcheck, tmp_path, content, words):
    data = tmp_path / "sort.csv"
    data.write_bytes(content)
    out = tmp_path / "steps.csv"
    check(fmtcheck("train", "--model", "transformer", "--data", data, "--csv", out), words)
    assert not out.exists()
