"""Fixtures for the analysis tests: the CLI under test ($FMTCHECK_CLI, set
by ctest) and the pip packages the independent oracle needs."""
import os
import pathlib
import subprocess

import pytest

REQUIRED = ["numpy", "ml_dtypes", "safetensors", "pandas", "distributed"]


def pytest_configure(config):
    missing = []
    for name in REQUIRED:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        pytest.exit("missing pip packages for the analysis tests: " + ", ".join(missing) +
                    " (pip install numpy ml_dtypes safetensors pandas distributed)", returncode=3)


@pytest.fixture(scope="session")
def fmtcheck():
    path = os.environ.get("FMTCHECK_CLI")
    if not path or not pathlib.Path(path).is_file():
        pytest.exit(f"FMTCHECK_CLI must name the built fmtcheck executable (got {path!r})", returncode=3)

    def run(*args):
        return subprocess.run([path, *map(str, args)], capture_output=True, text=True, timeout=300)
    return run


@pytest.fixture(scope="session")
def repo_root():
    return pathlib.Path(__file__).resolve().parents[2]
