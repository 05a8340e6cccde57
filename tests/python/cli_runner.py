"""The built CLI as pytest suites call it: its path from FMTCHECK_CLI (set by CTest), and one run of
it with the exit code and both streams."""
import os
import subprocess

import pytest


def cli_path(suite: str) -> str:
    """The CLI's path; fails the test, naming `suite`'s CMakeLists.txt, when CTest did not set it."""
    path = os.environ.get("FMTCHECK_CLI")
    if not path:
        pytest.fail(f"FMTCHECK_CLI is not set: run these tests through ctest ({suite}/CMakeLists.txt)")
    return path


def run_cli(cli, *args, check=True):
    """Runs the CLI; returns (exit code, stdout, stderr)."""
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"fmtcheck {' '.join(map(str, args))} failed: {r.stderr}")
    return r.returncode, r.stdout, r.stderr
