"""The Python package's tests: `import fmtcheck` from the build tree
(PYTHONPATH set by CTest), the oracles and input samples of tests/python
(numpy, ml_dtypes, gfloat; nothing there calls fmtcheck), and the CLI for the
checks that compare the two front ends."""
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
from cli_runner import cli_path, run_cli  # noqa: E402,F401 (run_cli: the tests import it from here)


@pytest.fixture(scope="session")
def cli():
    return cli_path("tests/package")
