"""The Python package's tests: `import fmtcheck` from the build tree
(PYTHONPATH set by CTest), the oracles and input samples of tests/python
(numpy, ml_dtypes, gfloat; nothing there calls fmtcheck), and the CLI for the
checks that compare the two front ends."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("FMTCHECK_CLI")
    if not path:
        pytest.fail("FMTCHECK_CLI is not set: run these tests through ctest (tests/package/CMakeLists.txt)")
    return path


def run_cli(cli, *args, check=True):
    """Runs the CLI; returns (exit code, stdout, stderr)."""
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"fmtcheck {' '.join(map(str, args))} failed: {r.stderr}")
    return r.returncode, r.stdout, r.stderr
