"""`fmtcheck train` without --data finds its model's bundled data beside the
executable, not in the current folder: from the build folder in the
checkout's data/, from an installed prefix in share/fmtcheck/data; where
neither holds it, one line names the folders it looked in and --data."""
import os
import pathlib
import shutil
import stat
import subprocess

import pytest

from test_bad_input import check

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = {"mlp": "digits/digits.csv.gz", "transformer": "sort/sort.csv.gz"}


def train(exe, cwd, *args):
    return subprocess.run([str(exe), "train", "--steps", "2", "--recipe", "fp32", "--infer", "", *map(str, args)],
                          cwd=cwd, capture_output=True, timeout=120)


def header(r):
    """The first line (the header, wrapped) up to the first comma: "mlp on PATH"."""
    assert r.returncode == 0, r.stderr.decode()
    return " ".join(r.stdout.decode().split("\n", 2)[:2]).split(",")[0]


def copy_executable(fmtcheck, folder):
    folder.mkdir(parents=True)
    exe = folder / "fmtcheck"
    shutil.copy(os.environ["FMTCHECK_CLI"], exe)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


@pytest.mark.parametrize("model", DATA)
def test_build_folder_finds_the_checkouts_data(tmp_path, model):
    # Run from an empty folder: the current folder has no data/ to find.
    r = train(os.environ["FMTCHECK_CLI"], tmp_path, "--model", model)
    assert header(r) == f"{model} on {ROOT / 'data' / DATA[model]}"


@pytest.mark.parametrize("model", DATA)
def test_installed_layout_finds_share_fmtcheck_data(fmtcheck, tmp_path, model):
    prefix = tmp_path / "prefix"
    exe = copy_executable(fmtcheck, prefix / "bin")
    installed = prefix / "share" / "fmtcheck" / "data" / DATA[model]
    installed.parent.mkdir(parents=True)
    shutil.copy(ROOT / "data" / DATA[model], installed)
    r = train(exe, tmp_path, "--model", model)
    assert header(r) == f"{model} on {installed}"


def test_no_data_beside_the_executable_is_one_line(fmtcheck, tmp_path):
    # A copy of the executable with no data beside it; the current folder
    # (the checkout's root) holds data/, which must not be what decides.
    exe = copy_executable(fmtcheck, tmp_path / "prefix" / "bin")
    r = train(exe, ROOT)
    check(r, ["--data not given", "digits/digits.csv.gz", str(tmp_path / "prefix" / "share" / "fmtcheck" / "data"),
              "pass --data FILE"])


def test_data_given_is_used_as_given(fmtcheck, digits, tmp_path):
    r = train(os.environ["FMTCHECK_CLI"], tmp_path, "--data", digits)
    assert header(r) == f"mlp on {digits}"
