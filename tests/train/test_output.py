"""What `fmtcheck train` prints on a terminal: every line fits 100 columns,
whatever the recipe names and however many --infer recipes, and the output
ends with the verdict on inference: which trained weights infer in which
precision without loss, the same verdict the JSON's numbers give."""
import json
import re

import numpy as np
import pytest

WIDTH = 100
PURE = "fp32,bf16,bf16-pure,bf16-pure-sr,bf16-pure-kahan,bf16-pure-fp32-states"
MANY_INFER = "fp32,tf32,bf16,fp16,fp8-current,bf16-pure-fp32-states,fp16-pure-fp32-states,bf16-pure-kahan"


def train(fmtcheck, digits, tmp_path, *args):
    summary = tmp_path / "summary.json"
    r = fmtcheck("train", "--data", digits, "--json", summary, *args)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode(), json.loads(summary.read_text())


def names(text):
    """"a", "a and b", "a, b and c" as a list."""
    return re.split(r", | and ", text)


def verdict(stdout):
    """{inferred recipe: trained recipes whose weights infer in it without loss}, from the closing sentence."""
    tail = stdout[stdout.rindex("Inference without loss"):]
    assert tail.endswith(".\n") and "\n\n" not in tail, f"the output does not end with the verdict: {tail!r}"
    sentence = " ".join(tail.split())
    out = {}
    for clause in sentence[:-1].split("): ", 1)[1].split("; "):
        whose, precisions = clause.split(" in ")
        for p in names(precisions):
            out[p] = whose
    return out


def expected(summary, tolerance):
    """The same from the JSON: accuracy no lower, the loss at most `tolerance` higher (relative)."""
    passing = {}
    for r in summary["recipes"]:
        float32_loss = float(np.float32(r["eval_loss"]))  # the float the command compared with
        for i in r["inference"]:
            ok = i["accuracy_change"] >= 0 and i["loss_change"] <= tolerance * abs(float32_loss)
            passing.setdefault(i["recipe"], [])
            if ok:
                passing[i["recipe"]].append(r["recipe"])
    everyone = [r["recipe"] for r in summary["recipes"]]
    return {p: "every recipe's weights" if t == everyone else "no recipe's weights" if not t
            else "those of " + (t[0] if len(t) == 1 else ", ".join(t[:-1]) + " and " + t[-1])
            for p, t in passing.items()}


def listed_changes(stdout):
    """(trained, inferred) of the lines under "changes from the float32 evaluation"."""
    return {tuple(m) for m in re.findall(r"^  (\S+) weights in (\S+): loss ", stdout, re.M)}


def lossy(summary, tolerance):
    return {(r["recipe"], i["recipe"]) for r in summary["recipes"] for i in r["inference"]
            if not (i["accuracy_change"] >= 0 and i["loss_change"] <= tolerance * abs(float(np.float32(r["eval_loss"]))))}


def assert_fits(stdout):
    wide = [l for l in stdout.splitlines() if len(l) > WIDTH]
    assert not wide, f"{len(wide)} lines wider than {WIDTH} columns, e.g. {wide[0]!r}"


def test_default_run_fits_and_ends_with_the_verdict(fmtcheck, digits, tmp_path):
    # The README's run: FP8 inference costs some recipes' weights loss or
    # accuracy, the 16-bit formats none.
    stdout, summary = train(fmtcheck, digits, tmp_path, "--steps", 300)
    assert_fits(stdout)
    got = verdict(stdout)
    assert got == expected(summary, 0.01)
    assert got["bf16"] == got["fp16"] == "every recipe's weights"
    assert got["fp8-current"] != "every recipe's weights"
    assert listed_changes(stdout) == lossy(summary, 0.01) != set()


def test_long_recipe_names_and_many_infer_recipes_fit(fmtcheck, digits, tmp_path):
    # 21-character recipe names and eight --infer columns: the old tables were
    # 130 and 190 columns wide here; the losses now continue in a second table.
    stdout, summary = train(fmtcheck, digits, tmp_path, "--recipe", PURE, "--infer", MANY_INFER, "--optimizer", "adam",
                            "--lr", "1e-4", "--steps", 4, "--batch", 8, "--params", "7e9")
    assert_fits(stdout)
    assert stdout.count("trained \\ inferred") == 2
    assert verdict(stdout) == expected(summary, 0.01)
    assert listed_changes(stdout) == lossy(summary, 0.01)


@pytest.mark.parametrize("tolerance", ["0", "0.05"])
def test_infer_tolerance_moves_the_line(fmtcheck, digits, tmp_path, tolerance):
    stdout, summary = train(fmtcheck, digits, tmp_path, "--steps", 100, "--infer-tolerance", tolerance)
    assert_fits(stdout)
    assert f"at most {float(tolerance) * 100:g}% higher" in " ".join(stdout.split())
    assert verdict(stdout) == expected(summary, float(tolerance))
    assert listed_changes(stdout) == lossy(summary, float(tolerance))


def test_no_infer_recipes_no_verdict(fmtcheck, digits, tmp_path):
    stdout, _ = train(fmtcheck, digits, tmp_path, "--steps", 3, "--infer", "")
    assert_fits(stdout)
    assert "Inference" not in stdout and "trained \\ inferred" not in stdout
