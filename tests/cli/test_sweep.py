"""`fmtcheck sweep`: the stream layout, that a failed or interrupted
sweep leaves no output file, and --digest. A whole sweep is 2^32 results
(~40-70 s written, ~4 s digested); tests/python reads complete ones, these
only read the start."""
import os
import pathlib
import signal
import stat
import subprocess
import time

import pytest

from usage_error import assert_usage_error


def first_bytes(fmtcheck_path, args, count):
    """The first `count` bytes of `fmtcheck sweep ... --out -`, then stop it."""
    proc = subprocess.Popen([fmtcheck_path, "sweep", *args, "--out", "-"], stdout=subprocess.PIPE)
    data = proc.stdout.read(count)
    proc.kill()
    proc.wait()
    return data


@pytest.fixture
def cli_path(fmtcheck):
    return os.environ["FMTCHECK_CLI"]  # the fmtcheck fixture has checked it


def test_stream_starts_with_the_smallest_positive_inputs(cli_path):
    # Inputs 0x00000000.. are +0 and float32 subnormals (< 2^-126): far
    # below half of fp16's min subnormal 2^-25, so every result is +0,
    # two little-endian bytes each.
    data = first_bytes(cli_path, ["--to", "fp16"], 1 << 20)
    assert data == bytes(1 << 20)


def read_fifo(path, count, seconds=60):
    """Up to `count` bytes from the FIFO `path`, waiting at most `seconds`
    for a writer (non-blocking, so a writer that never comes fails the test
    instead of hanging it)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    data = b""
    deadline = time.monotonic() + seconds
    try:
        while len(data) < count and time.monotonic() < deadline:
            try:
                data += os.read(fd, count - len(data))
            except BlockingIOError:
                pass
            time.sleep(0.01)
    finally:
        os.close(fd)
    return data


def test_device_or_pipe_target_is_written_in_place(cli_path, tmp_path):
    # --out /dev/null or a FIFO must stay what it is: a temporary file renamed
    # over it would replace the device with a plain file.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = subprocess.Popen([cli_path, "sweep", "--to", "e8m0", "--out", str(fifo)], stderr=subprocess.PIPE)
    try:
        data = read_fifo(fifo, 1 << 16)
    finally:
        proc.kill()
        proc.wait()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert list(tmp_path.iterdir()) == [fifo]
    assert data == first_bytes(cli_path, ["--to", "e8m0"], 1 << 16)


def test_stream_is_in_input_order(cli_path):
    # e8m0 has no zero: input 0 (+0) gives the NaN 0xff; inputs 1.. are
    # float32 subnormals below 2^-127, which give the smallest value, code 0.
    data = first_bytes(cli_path, ["--to", "e8m0"], 1 << 16)
    assert data == b"\xff" + bytes((1 << 16) - 1)


@pytest.mark.parametrize("args,words", [
    (["--to", "fp17"], ["fp17"]),
    (["--to", "e4m3", "--round", "up"], ["--round"]),
    (["--to", "e4m3", "--round", "sr"], ["--sr-bits"]),
    (["--to", "e4m3", "--seed", "x"], ["--seed"]),
    (["--to", "e4m3", "--device", "gpu"], ["bad --device 'gpu'", "cpu or cuda"]),
])
def test_bad_input_creates_no_file(fmtcheck, tmp_path, args, words):
    out = tmp_path / "sweep.bin"
    assert_usage_error(fmtcheck("sweep", *args, "--out", out), *words)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_directory(fmtcheck, tmp_path):
    out = tmp_path / "no" / "such" / "dir" / "sweep.bin"
    assert_usage_error(fmtcheck("sweep", "--to", "e4m3", "--out", out), str(out))


def start_sweep_to_file(cli_path, out):
    proc = subprocess.Popen([cli_path, "sweep", "--to", "e4m3", "--out", str(out)], stderr=subprocess.PIPE)
    # Wait until the temporary file holds some results: the sweep is writing.
    deadline = time.time() + 60
    while time.time() < deadline:
        temps = [p for p in out.parent.iterdir() if p != out]
        if temps and temps[0].stat().st_size > 0:
            return proc
        time.sleep(0.05)
    proc.kill()
    pytest.fail("the sweep wrote nothing in 60 s")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_interrupted_sweep_leaves_no_output_file(cli_path, tmp_path, sig):
    # Results go to a temporary file renamed to --out only when complete, so
    # an interrupted sweep never leaves a partial file under the asked name.
    out = tmp_path / "sweep.bin"
    proc = start_sweep_to_file(cli_path, out)
    proc.send_signal(sig)
    proc.wait()
    assert not out.exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_sweep_removes_its_temporary_file(cli_path, tmp_path, sig):
    out = tmp_path / "sweep.bin"
    proc = start_sweep_to_file(cli_path, out)
    proc.send_signal(sig)
    proc.wait()
    assert list(tmp_path.iterdir()) == []


def test_a_digest_instead_of_a_file(fmtcheck):
    # Every float32 into e4m3 under CUDA's saturating policy (4 s on 2 cores): the digest and
    # counts of the CPU's sweep that cuda/emulator_sweep_digests.csv holds for the GPU's proof
    # (cuda-emulator-sweep-table checks that row set against the library).
    r = fmtcheck("sweep", "--to", "e4m3", "--overflow", "sat", "--nan", "cuda", "--digest")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert all(len(line) <= 100 for line in lines)
    assert lines[0] == "every float32 into e4m3 (rne,sat,keep,after,cuda), on the CPU:"
    table = pathlib.Path(__file__).resolve().parents[2] / "cuda" / "emulator_sweep_digests.csv"
    header, *rows = table.read_text().splitlines()
    row = dict(zip(header.split(","), next(r for r in rows if r.startswith("e4m3:rne:sat:keep:cuda,")).split(",")))
    assert lines[1] == f"  digest {row['digest']} over {row['values']} inputs"
    printed = dict(zip(*[iter(" ".join(lines[2:-2]).split())] * 2))
    assert printed == {k: v for k, v in row.items() if k not in ("pair", "digest", "values")}
    assert lines[-2].startswith("The same digest and counts from another device or build mean the same code")


@pytest.mark.parametrize("args", [["--digest", "--out", "x.bin"], []], ids=["both", "neither"])
def test_a_file_or_a_digest(fmtcheck, args):
    assert_usage_error(fmtcheck("sweep", "--to", "e4m3", *args), "--out FILE or prints a --digest")
