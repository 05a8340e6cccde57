"""Streams `fmtcheck sweep --out -` chunk by chunk, so a 4 GiB sweep never
touches the disk and the comparison runs while fmtcheck computes."""
import subprocess

import numpy as np

from float32_inputs import CHUNK, COUNT

# Container of each storage width, little-endian (`fmtcheck sweep --help`).
STORAGE = {8: np.dtype("<u1"), 16: np.dtype("<u2"), 32: np.dtype("<u4")}


def _read_exactly(stream, size):
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = stream.readinto(view[got:])
        if not n:
            raise AssertionError(f"fmtcheck sweep stopped after {got} of {size} bytes of a chunk")
        got += n
    return buf


def sweep_chunks(cli, fmt, storage_bits, policy=()):
    """Yields (first_input, results) for each chunk of the sweep of all 2^32
    float32 inputs into `fmt` under the policy options `policy`. Fails if
    fmtcheck exits non-zero or writes more or fewer than 2^32 results."""
    dtype = STORAGE[storage_bits]
    cmd = [cli, "sweep", "--to", fmt, *policy, "--out", "-"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    complete = False
    try:
        for first in range(0, COUNT, CHUNK):
            raw = _read_exactly(proc.stdout, CHUNK * dtype.itemsize)
            yield first, np.frombuffer(raw, dtype=dtype)
        assert proc.stdout.read(1) == b"", "fmtcheck sweep wrote more than 2^32 results"
        complete = True
    finally:
        if not complete:
            proc.kill()  # the consumer stopped early, e.g. on a failed assertion
        proc.stdout.close()
        err = proc.stderr.read().decode()
        rc = proc.wait()
    assert rc == 0, f"{' '.join(cmd)} exited {rc}: {err}"
