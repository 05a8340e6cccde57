"""Fixtures for the training tests: the CLI under test ($FMTCHECK_CLI, set
by ctest) and the bundled data."""
import os
import pathlib
import subprocess

import pytest

for _name in ["numpy", "ml_dtypes", "pandas"]:
    try:
        __import__(_name)
    except ImportError:
        pytest.exit(f"missing pip package {_name} for the training tests (pip install numpy ml_dtypes pandas)",
                    returncode=3)


@pytest.fixture(scope="session")
def fmtcheck():
    path = os.environ.get("FMTCHECK_CLI")
    if not path or not pathlib.Path(path).is_file():
        pytest.exit(f"FMTCHECK_CLI must name the built fmtcheck executable (got {path!r})", returncode=3)

    def run(*args):
        return subprocess.run([path, *map(str, args)], capture_output=True, timeout=300)
    return run


@pytest.fixture(scope="session")
def digits():
    return pathlib.Path(__file__).resolve().parents[2] / "data" / "digits" / "digits.csv.gz"


@pytest.fixture(scope="session")
def sort_data():
    return pathlib.Path(__file__).resolve().parents[2] / "data" / "sort" / "sort.csv.gz"
