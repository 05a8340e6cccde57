"""The one shape of every bad-input failure: exit code 2, one stderr line
holding the message and the names, and no output file (out*) or temporary
file (.*) left in the test's folder."""


def assert_clean_failure(r, tmp_path, names, message):
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert message in lines[0], lines[0]
    for name in names:
        assert name in lines[0], lines[0]
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith((".", "out"))]
    assert leftovers == [], leftovers
