"""The one shape of a bad-input failure, shared by every command's tests."""


def assert_usage_error(result, *words):
    """Bad input: exit 2, nothing on stdout, one line on stderr naming the problem."""
    err = result.stderr.decode()
    assert result.returncode == 2, (result.returncode, err)
    assert result.stdout == b""
    assert err.endswith("\n") and err.count("\n") == 1, f"expected one line on stderr, got {err!r}"
    assert err.startswith("fmtcheck: "), err
    for w in words:
        assert w in err, f"{w!r} not in {err!r}"
