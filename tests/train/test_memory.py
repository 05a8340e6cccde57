"""Memory per recipe, worked out by hand for the digits MLP (64-32-10):
2410 parameters (64·32 + 32 + 32·10 + 10). One step of batch 32 saves
fc1's and fc2's inputs as GEMM operands (32·(64 + 32) = 3072 values), fc1's
output for ReLU's backward (32·32 = 1024, activation format) and the
softmax's probabilities (32·10 = 320, float32)."""
import json

import pytest

P = 2410
ACTIVATIONS = {  # operand bytes · 3072 + activation bytes · 1024 + 4 · 320
    "fp32": 4 * 3072 + 4 * 1024 + 4 * 320,
    "bf16": 2 * 3072 + 2 * 1024 + 4 * 320,
    "fp8-current": 1 * 3072 + 2 * 1024 + 4 * 320,
    "mxfp8": 3072 + 3072 // 32 + 2 * 1024 + 4 * 320,  # an E8M0 scale per 32 values
}


def memory(fmtcheck, digits, tmp_path, optimizer, recipes):
    js = tmp_path / "summary.json"
    r = fmtcheck("train", "--data", digits, "--recipe", ",".join(recipes), "--gpu", "exact", "--steps", 1,
                 "--batch", 32, "--optimizer", optimizer, "--infer", "", "--params", 7e9, "--json", js)
    assert r.returncode == 0, r.stderr.decode()
    return {s["recipe"]: (s["memory_bytes"], s["memory_bytes_at_params"]) for s in json.loads(js.read_text())["recipes"]}


def test_sgd_with_momentum(fmtcheck, digits, tmp_path):
    got = memory(fmtcheck, digits, tmp_path, "sgd", ["fp32", "bf16", "fp8-current", "mxfp8", "bf16-pure"])
    # recipe: weights, master, gradients, momentum buffer (bytes per parameter), activations
    expected = {"fp32": (4, 0, 4, 4, ACTIVATIONS["fp32"]), "bf16": (0, 4, 4, 4, ACTIVATIONS["bf16"]),
                "fp8-current": (0, 4, 4, 4, ACTIVATIONS["fp8-current"]), "mxfp8": (0, 4, 4, 4, ACTIVATIONS["mxfp8"]),
                "bf16-pure": (2, 0, 2, 2, ACTIVATIONS["bf16"])}
    for recipe, (w, m, g, s, a) in expected.items():
        model, big = got[recipe]
        assert (model["weights"], model["master"], model["gradients"], model["optimizer_states"]) == (
            w * P, m * P, g * P, s * P), recipe
        assert model["activations"] == a and model["total"] == (w + m + g + s) * P + a, recipe
        assert (big["weights"], big["master"], big["gradients"], big["optimizer_states"]) == (
            w * 7e9, m * 7e9, g * 7e9, s * 7e9), recipe
        assert "activations" not in big


@pytest.mark.parametrize("recipe, per_parameter", [
    ("fp32", 4 + 4 + 8),                  # weights, gradients, m and v
    ("bf16", 4 + 4 + 8),                  # the float32 master instead of weights
    ("bf16-pure", 2 + 2 + 4),             # no master, bf16 gradients and states
    ("bf16-pure-sr", 2 + 2 + 4),
    ("bf16-pure-kahan", 2 + 2 + 4 + 2),   # plus the bf16 compensation
    ("bf16-pure-fp32-states", 2 + 2 + 8),
])
def test_adam_at_seven_billion_parameters(fmtcheck, digits, tmp_path, recipe, per_parameter):
    _, big = memory(fmtcheck, digits, tmp_path, "adam", [recipe])[recipe]
    assert big["total"] == per_parameter * 7e9
