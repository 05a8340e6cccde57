"""Commands that do not use cuBLASLt do not load it: linked, it would cost every
start ~0.1 s and ~200 MiB of RSS; `hw gemm` opens it when it runs."""
import os
import subprocess

import pytest


def test_ranges_does_not_load_cublaslt():
    cli = os.environ["FMTCHECK_CLI"]
    hw = subprocess.run([cli, "hw", "info"], capture_output=True, text=True, timeout=60)
    if "this build has no CUDA support" in hw.stderr:
        pytest.skip("this build has no CUDA: nothing in it could load cuBLASLt")
    # glibc's loader lists every library it loads, linked or through a linked one.
    r = subprocess.run([cli, "ranges"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "LD_DEBUG": "libs"})
    assert r.returncode == 0, r.stderr
    if "libc.so" not in r.stderr:
        pytest.skip("LD_DEBUG=libs lists nothing here: not glibc's dynamic loader")
    loaded = [line.strip() for line in r.stderr.splitlines() if "libcublasLt" in line]
    assert not loaded, "fmtcheck ranges loaded cuBLASLt:\n" + "\n".join(loaded)
