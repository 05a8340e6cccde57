"""Runs the fmtcheck CLI under test ($FMTCHECK_CLI, set by ctest)."""
import os
import pathlib
import subprocess

import pytest


@pytest.fixture(scope="session")
def fmtcheck():
    path = os.environ.get("FMTCHECK_CLI")
    if not path or not pathlib.Path(path).is_file():
        pytest.exit(f"FMTCHECK_CLI must name the built fmtcheck executable (got {path!r})", returncode=3)

    def run(*args, stdin=None):
        return subprocess.run([path, *map(str, args)], input=stdin, capture_output=True, timeout=120)
    run.path = path
    return run

