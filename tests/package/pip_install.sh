#!/usr/bin/env bash
# `pip install .` from the repository into a fresh virtual environment (pip
# fetches scikit-build-core, nanobind and numpy as a user's pip would), then
# `import fmtcheck` there, convert three values and find fmtcheck.torch. Usage: pip_install.sh REPO PYTHON
set -euo pipefail
repo=$1
python=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
# The build compiles the library again; ccache, where present, makes a rerun quick.
if command -v ccache >/dev/null; then export CMAKE_CXX_COMPILER_LAUNCHER=ccache; fi
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "$repo"
cd "$work"
"$work/venv/bin/python" - <<'PY'
import numpy as np
import fmtcheck
r = fmtcheck.convert(np.array([0.1, 464, 465], np.float32), "e4m3")
assert r.codes.view(np.uint8).tolist() == [0x1D, 0x7E, 0x7F], r
assert r.flags["nan_produced"] == 1
# fmtcheck.torch is installed with the package (importing it needs torch, finding it does not).
import importlib.util, pathlib
spec = importlib.util.find_spec("fmtcheck.torch")
assert spec and (pathlib.Path(spec.submodule_search_locations[0]) / "recorder.py").is_file(), "no fmtcheck/torch"
print("ok:", fmtcheck.__file__)
PY
