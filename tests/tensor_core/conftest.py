"""The CLI tests' fmtcheck fixture (tests/cli/conftest.py: runs $FMTCHECK_CLI,
set by ctest), shared with the AMD matrix-core cases here."""
import importlib.util
import pathlib

_spec = importlib.util.spec_from_file_location("cli_conftest", pathlib.Path(__file__).parents[1] / "cli" / "conftest.py")
_cli = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cli)
fmtcheck = _cli.fmtcheck
