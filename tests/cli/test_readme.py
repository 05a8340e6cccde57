"""The README's example outputs are what the current code prints: every
indented block that starts with `$ fmtcheck ...` is run from the repository
root and its output compared line by line (trailing spaces aside)."""
import os
import pathlib
import shlex
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def examples():
    """(line number, command, expected output lines) per `$ fmtcheck` block."""
    lines = (ROOT / "README.md").read_text().splitlines()
    found = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("    $ fmtcheck "):
            start, command = i + 1, lines[i][len("    $ "):]
            i += 1
            expected = []
            while i < len(lines) and (lines[i].startswith("    ") or lines[i] == ""):
                expected.append(lines[i][4:])
                i += 1
            while expected and expected[-1] == "":
                expected.pop()
            found.append((start, command, expected))
        else:
            i += 1
    return found


EXAMPLES = examples()


def test_readme_has_examples():
    # convert, ranges, analyze, scale, mma --check: a README that lost its
    # examples (or their `$ fmtcheck` lines) fails here, not silently.
    assert {shlex.split(c)[1] for _, c, _ in EXAMPLES} >= {"convert", "ranges", "analyze", "scale", "mma"}


@pytest.mark.parametrize("line,command,expected", EXAMPLES, ids=[f"README.md:{n}" for n, _, _ in EXAMPLES])
def test_readme_example(fmtcheck, line, command, expected):
    args = shlex.split(command)[1:]
    needs = [a for a in args if a.startswith("../shared/")]
    if needs and not (ROOT / needs[0]).exists():
        pytest.skip(f"{needs[0]} (the published data beside the repository) is not here")
    if args[0] == "train" and os.environ.get("FMTCHECK_SANITIZED"):
        pytest.skip("training (30 s of arithmetic, several minutes under the sanitizers) reads no outside input "
                    "beyond the CSV reader, which the analysis suite covers there")
    r = subprocess.run([fmtcheck.path, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = [l.rstrip() for l in r.stdout.rstrip("\n").splitlines()]
    assert timed(got) == timed([l.rstrip() for l in expected]), f"README.md:{line}: `{command}` prints\n" + r.stdout


def timed(lines):
    """The lines with the values of a table's last column "seconds" blanked:
    wall time is the one thing an example cannot pin."""
    out, in_table = [], False
    for l in lines:
        if l.endswith(" seconds"):
            in_table = True
        elif in_table and l.strip():
            l = l.rsplit(None, 1)[0]
        else:
            in_table = False
        out.append(l)
    return out
