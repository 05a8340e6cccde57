"""`fmtcheck verify` error paths. Its verdicts on complete sweeps (exit 0
for a correct one, exit 1 and per-class counts for a corrupted one) are in
tests/python/test_verify_workflow.py: each costs a whole sweep."""
import pytest

from usage_error import assert_usage_error


def test_missing_file(fmtcheck, tmp_path):
    assert_usage_error(fmtcheck("verify", "--to", "e4m3", "--against", tmp_path / "none.bin"), "none.bin")


def test_directory_is_not_a_sweep_file(fmtcheck, tmp_path):
    # (An unreadable file cannot be made here: the tests may run as root.)
    assert_usage_error(fmtcheck("verify", "--to", "e4m3", "--against", tmp_path), str(tmp_path))


@pytest.mark.parametrize("target,size,expected", [
    ("e4m3", 1000, 2**32),          # 1 byte per input
    ("fp16", 2**32, 2**33),         # a sweep of an 8-bit format is half an fp16 one
    ("tf32", 2**33 + 1, 2**34),     # tf32 lives in a 4-byte float32 container
])
def test_wrong_size_file(fmtcheck, tmp_path, target, size, expected):
    f = tmp_path / "short.bin"
    with open(f, "wb") as out:
        out.truncate(size)  # sparse: no disk space used
    assert_usage_error(fmtcheck("verify", "--to", target, "--against", f), f"{size} bytes", f"{expected} bytes")


def test_short_standard_input(fmtcheck):
    assert_usage_error(fmtcheck("verify", "--to", "e4m3", "--against", "-", stdin=bytes(1000)), "ended early")


@pytest.mark.parametrize("args,words", [
    (["--to", "e4m3x", "--against", "-"], ["e4m3x"]),
    (["--to", "e4m3", "--against", "-", "--overflow", "saturate"], ["--overflow"]),
    (["--to", "e4m3", "--against", "-", "--examples", "many"], ["--examples"]),
    (["--to", "e4m3"], ["--against"]),
])
def test_bad_input(fmtcheck, args, words):
    assert_usage_error(fmtcheck("verify", *args, stdin=b""), *words)


def test_no_command_or_unknown_command(fmtcheck):
    assert_usage_error(fmtcheck())
    assert_usage_error(fmtcheck("frobnicate"))


def test_help_and_version(fmtcheck):
    for args in (["--help"], ["verify", "--help"], ["--version"]):
        r = fmtcheck(*args)
        assert r.returncode == 0 and r.stdout, args
