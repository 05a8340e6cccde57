"""`--help` of every command within 100 columns, with nothing lost in the
wrapping (the mma presets each keep their line)."""
import re

import pytest

COMMANDS = ["ranges", "values", "convert", "sweep", "verify", "mma", "gemm-error", "analyze", "merge", "scale",
            "train", "hw"]


def help_text(fmtcheck, *args):
    r = fmtcheck(*args, "--help")
    assert r.returncode == 0, r.stderr
    return r.stdout.decode()


@pytest.mark.parametrize("command", [None] + COMMANDS)
def test_help_fits_100_columns(fmtcheck, command):
    text = help_text(fmtcheck, *([command] if command else []))
    too_wide = [line for line in text.splitlines() if len(line) > 100]
    assert not too_wide, too_wide


def test_top_level_help_lists_every_command(fmtcheck):
    text = help_text(fmtcheck)
    listed = set(re.findall(r"^  ([a-z][a-z-]*) ", text, re.MULTILINE))
    assert set(COMMANDS) <= listed


def test_wrapped_descriptions_keep_their_words(fmtcheck):
    # analyze's --nan description is longer than one line: every NaN
    # convention's name still appears, and each mma preset starts its own line.
    text = help_text(fmtcheck, "analyze")
    joined = " ".join(text.split())
    for name in ["ieee", "x86", "arm-dn", "riscv", "cuda", "numpy", "ml_dtypes", "torch", "canonical"]:
        assert name in joined
    mma = help_text(fmtcheck, "mma")
    for preset in ["volta", "hopper-wgmma", "blackwell-tcgen05", "mi300x", "exact"]:
        assert re.search(rf"^ {{32}}{preset}: ", mma, re.MULTILINE), preset
