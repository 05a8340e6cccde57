"""Record a real gradient trace: a small MLP trained on scikit-learn's
bundled digits data set (load_digits: 1797 8x8 handwritten digits, UCI
"Optical Recognition of Handwritten Digits", shipped inside the
scikit-learn wheel), in float32 numpy on the CPU.

Model 64 -> 32 (ReLU) -> 10, softmax cross-entropy (mean over the batch),
minibatch SGD (batch 32, learning rate 0.05), seed 0. The gradient of every
parameter at every step is written, before the update, to
data/digits_mlp_trace/step_NNNN.safetensors (tensors fc1.weight, fc1.bias,
fc2.weight, fc2.bias), so `fmtcheck scale` can replay it.

Run by hand:  python3 data/scripts/make_digits_trace.py
Needs: numpy, scikit-learn, safetensors.
"""
import pathlib

import numpy as np
from safetensors.numpy import save_file
from sklearn.datasets import load_digits

STEPS = 300
BATCH = 32
LR = np.float32(0.05)
OUT = pathlib.Path(__file__).resolve().parents[1] / "digits_mlp_trace"


def main() -> None:
    rng = np.random.default_rng(0)
    digits = load_digits()
    x_all = (digits.data / 16.0).astype(np.float32)  # pixels 0..16 -> 0..1
    y_all = digits.target
    # PyTorch's nn.Linear default initialisation: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    def linear(fan_in, fan_out):
        bound = 1.0 / np.sqrt(fan_in)
        return (rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                rng.uniform(-bound, bound, fan_out).astype(np.float32))
    w1, b1 = linear(64, 32)
    w2, b2 = linear(32, 10)
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("step_*.safetensors"):
        old.unlink()
    order = np.array([], dtype=int)
    for step in range(STEPS):
        if order.size < BATCH:
            order = np.concatenate([order, rng.permutation(len(x_all))])
        idx, order = order[:BATCH], order[BATCH:]
        x, y = x_all[idx], y_all[idx]
        # forward
        h_pre = x @ w1.T + b1
        h = np.maximum(h_pre, 0)
        logits = h @ w2.T + b2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.log(p[np.arange(BATCH), y]).mean()
        # backward (mean cross-entropy)
        d_logits = p.copy()
        d_logits[np.arange(BATCH), y] -= 1
        d_logits /= BATCH
        g_w2 = d_logits.T @ h
        g_b2 = d_logits.sum(axis=0)
        d_h = (d_logits @ w2) * (h_pre > 0)
        g_w1 = d_h.T @ x
        g_b1 = d_h.sum(axis=0)
        grads = {"fc1.weight": g_w1, "fc1.bias": g_b1, "fc2.weight": g_w2, "fc2.bias": g_b2}
        save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in grads.items()},
                  str(OUT / f"step_{step:04d}.safetensors"), metadata={"loss": f"{loss:.6f}"})
        w1 -= LR * g_w1
        b1 -= LR * g_b1
        w2 -= LR * g_w2
        b2 -= LR * g_b2
        if step % 50 == 0 or step == STEPS - 1:
            accuracy = ((np.maximum(x_all @ w1.T + b1, 0) @ w2.T + b2).argmax(axis=1) == y_all).mean()
            print(f"step {step:4d} loss {loss:.4f} train accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
