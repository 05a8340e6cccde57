"""fmtcheck.torch's tests: `import fmtcheck` from the build tree (PYTHONPATH set by CTest), torch's
CPU build as the oracle. Without torch the tests skip, saying how to install it."""
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python"))
from cli_runner import cli_path, run_cli  # noqa: E402,F401 (run_cli: the tests import it from here)
SOURCE = Path(os.environ.get("FMTCHECK_SOURCE_DIR", HERE.parent.parent))

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -r scripts/requirements-torch.txt")


@pytest.fixture(scope="session")
def cli():
    return cli_path("tests/torch")


def assert_one_error(call, words):
    """call() under emulate("bf16", "hopper") raises one fmtcheck.torch.Error matching `words`, on one
    line."""
    import fmtcheck.torch as ft
    with ft.emulate("bf16", "hopper"), pytest.raises(ft.Error, match=words) as e:
        call()
    assert "\n" not in str(e.value)
