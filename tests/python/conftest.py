"""Shared setup for the Python oracle tests.

The oracles (numpy, ml_dtypes, gfloat) are independent implementations of the
formats; a missing one is a broken test environment, never a reason to skip,
so collection stops with a message naming the package to install.
"""
import importlib
import os
import pathlib

import pytest

_ORACLES = ("numpy", "ml_dtypes", "gfloat")


def pytest_configure(config):
    missing = []
    for name in _ORACLES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        pytest.exit(
            f"oracle packages missing: {', '.join(missing)} "
            f"(pip install {' '.join(missing)}); these tests need them and do not skip",
            returncode=3,
        )


@pytest.fixture(scope="session")
def cli():
    """Path of the fmtcheck CLI under test, from $FMTCHECK_CLI (set by ctest)."""
    path = os.environ.get("FMTCHECK_CLI")
    if not path or not pathlib.Path(path).is_file():
        pytest.exit(f"FMTCHECK_CLI must name the built fmtcheck executable (got {path!r})", returncode=3)
    return path
