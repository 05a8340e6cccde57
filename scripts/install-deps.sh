#!/usr/bin/env bash
# Installs what fmtcheck needs on Debian 12, skipping what is already there:
# the Debian packages for building (and, for the test command's hardening
# job, clang with libFuzzer and ccache), and a virtual environment (.venv) with
# the Python oracles (numpy, ml_dtypes, gfloat), notebook tools, and what
# builds the Python package (python3-dev, nanobind, scikit-build-core), and
# PyTorch with transformers for fmtcheck.torch's tests (about 5.4 GB).
#   bash scripts/install-deps.sh [--no-python]
# --no-python: the Debian packages for the library and CLI only (the main
# job runs no Python).
set -euo pipefail
cd "$(dirname "$0")/.."
python=1
[[ "${1:-}" == "--no-python" ]] && python=0

packages=(build-essential cmake ninja-build pkg-config libeigen3-dev libboost-dev libfmt-dev doctest-dev
          libbenchmark-dev libcli11-dev nlohmann-json3-dev libhwy-dev zlib1g-dev python3 python3-venv python3-pip python3-dev)
# scripts/harden.sh: the sanitizer build and the fuzz targets.
if [[ $python == 1 ]]; then packages+=(clang libclang-rt-14-dev ccache); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[[ $python == 1 ]] || exit 0
# The Python the tests run under; Debian's system Python refuses pip installs.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
for requirements in requirements requirements-torch; do
  stamp=.venv/.$requirements-installed
  if [ ! -f "$stamp" ] || ! cmp -s scripts/$requirements.txt "$stamp"; then
    echo "installing Python packages into .venv (scripts/$requirements.txt)"
    .venv/bin/python -m pip install -q --disable-pip-version-check -r scripts/$requirements.txt
    cp scripts/$requirements.txt "$stamp"
  fi
done
