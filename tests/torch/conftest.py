"""fmtcheck.torch's tests: `import fmtcheck` from the build tree (PYTHONPATH set by CTest), torch's
CPU build as the oracle. Without torch the tests skip, saying how to install it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SOURCE = Path(os.environ.get("FMTCHECK_SOURCE_DIR", HERE.parent.parent))

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -r scripts/requirements-torch.txt")


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("FMTCHECK_CLI")
    if not path:
        pytest.fail("FMTCHECK_CLI is not set: run these tests through ctest (tests/torch/CMakeLists.txt)")
    return path


def run_cli(cli, *args, check=True):
    """Runs the CLI; returns (exit code, stdout, stderr)."""
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"fmtcheck {' '.join(map(str, args))} failed: {r.stderr}")
    return r.returncode, r.stdout, r.stderr
