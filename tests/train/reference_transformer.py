"""The transformer of `fmtcheck train --model transformer` in numpy, on the
independent pieces of reference.py (casts, exact GEMMs, FMA chains, exp/log,
recipes). Every float32 operation follows the order that
lib/include/fmtcheck/train/transformer.hpp defines."""
import gzip

import numpy as np

import reference as ref
from reference import F32

L, C, W, H, HS, HIDDEN, VOCAB = 6, 12, 32, 2, 16, 64, 9
SCORE_SCALE = F32(0.25)


class LayerNorm:
    def __init__(self):
        self.gamma, self.beta = np.ones(W, dtype=F32), np.zeros(W, dtype=F32)

    def forward(self, x):
        d = F32(W)
        s = np.zeros(x.shape[0], dtype=F32)
        for c in range(W):
            s = s + x[:, c]
        mean = (s / d).astype(F32)
        sq = np.zeros(x.shape[0], dtype=F32)
        for c in range(W):
            diff = (x[:, c] - mean).astype(F32)
            sq = sq + (diff * diff).astype(F32)
        self.rstd = (F32(1) / np.sqrt((sq / d).astype(F32) + F32(1e-5))).astype(F32)
        self.xhat = ((x - mean[:, None]).astype(F32) * self.rstd[:, None]).astype(F32)
        return ((self.xhat * self.gamma).astype(F32) + self.beta).astype(F32)

    def backward(self, dy):
        d = F32(W)
        g = (dy * self.gamma).astype(F32)
        self.ggamma, self.gbeta = np.zeros(W, dtype=F32), np.zeros(W, dtype=F32)
        for r in range(dy.shape[0]):
            self.ggamma = self.ggamma + (dy[r] * self.xhat[r]).astype(F32)
            self.gbeta = self.gbeta + dy[r]
        sg = np.zeros(dy.shape[0], dtype=F32)
        sgx = np.zeros(dy.shape[0], dtype=F32)
        for c in range(W):
            sg = sg + g[:, c]
            sgx = sgx + (g[:, c] * self.xhat[:, c]).astype(F32)
        mg, mgx = (sg / d).astype(F32), (sgx / d).astype(F32)
        return (((g - mg[:, None]).astype(F32) - (self.xhat * mgx[:, None]).astype(F32)) * self.rstd[:, None]).astype(F32)


class Transformer:
    def __init__(self, seed):
        init = ref.Init(seed)
        self.tok = init.uniform(W, VOCAB * W).reshape(VOCAB, W)
        self.pos = init.uniform(W, C * W).reshape(C, W)
        self.ln1, self.ln2, self.lnf = LayerNorm(), LayerNorm(), LayerNorm()
        self.qkv = ref.Linear("attn.qkv", W, 3 * W, init)
        self.proj = ref.Linear("attn.proj", W, W, init)
        self.fc1 = ref.Linear("mlp.fc1", W, HIDDEN, init)
        self.fc2 = ref.Linear("mlp.fc2", HIDDEN, W, init)
        self.head = ref.Linear("head", W, VOCAB, init)

    def params(self):
        """(getter, setter, grad) per parameter, in the optimizer's order."""
        def attr(obj, name, grad):
            return (lambda: getattr(obj, name), lambda v: setattr(obj, name, v), lambda: getattr(obj, grad))
        out = [attr(self, "tok", "gtok"), attr(self, "pos", "gpos"),
               attr(self.ln1, "gamma", "ggamma"), attr(self.ln1, "beta", "gbeta")]
        for lin in [self.qkv, self.proj]:
            out += [attr(lin, "w", "gw"), attr(lin, "b", "gb")]
        out += [attr(self.ln2, "gamma", "ggamma"), attr(self.ln2, "beta", "gbeta")]
        for lin in [self.fc1, self.fc2]:
            out += [attr(lin, "w", "gw"), attr(lin, "b", "gb")]
        out += [attr(self.lnf, "gamma", "ggamma"), attr(self.lnf, "beta", "gbeta"),
                attr(self.head, "w", "gw"), attr(self.head, "b", "gb")]
        return out

    def attention(self, ac, qkv):
        B = qkv.shape[0] // C
        out = np.zeros((B * C, W), dtype=F32)
        self.p, self.pa = {}, {}
        for b in range(B):
            rows = qkv[b * C:(b + 1) * C]
            for h in range(H):
                q, k, v = (rows[:, o + h * HS:o + (h + 1) * HS] for o in (0, W, 2 * W))
                scores = ac.activation_matmul("attn.scores", q, k)
                p = np.zeros((C, C), dtype=F32)
                for t in range(C):
                    s = (scores[t, :t + 1] * SCORE_SCALE).astype(F32)
                    top = s.max()
                    e = ref.exp32((s - top).astype(F32))
                    total = F32(0)
                    for j in range(t + 1):
                        total = F32(total + e[j])
                    p[t, :t + 1] = (e / total).astype(F32)
                pa = ac.to_activation("attn.probs", p)
                self.p[b, h], self.pa[b, h] = p, pa
                out[b * C:(b + 1) * C, h * HS:(h + 1) * HS] = ac.activation_matmul("attn.output", pa, v.T)
        return out

    def attention_backward(self, ac, dout):
        B = dout.shape[0] // C
        dqkv = np.zeros((B * C, 3 * W), dtype=F32)
        for b in range(B):
            rows = self.qkv_out[b * C:(b + 1) * C]
            for h in range(H):
                q, k, v = (rows[:, o + h * HS:o + (h + 1) * HS] for o in (0, W, 2 * W))
                do = dout[b * C:(b + 1) * C, h * HS:(h + 1) * HS]
                p, pa = self.p[b, h], self.pa[b, h]
                dp = ac.activation_matmul("attn.grad_probs", do, v)
                dv = ac.activation_matmul("attn.grad_values", pa.T, do.T)
                ds = np.zeros((C, C), dtype=F32)
                for t in range(C):
                    dot = F32(0)
                    for j in range(C):
                        dot = F32(dot + F32(dp[t, j] * p[t, j]))
                    ds[t] = ((p[t] * (dp[t] - dot).astype(F32)).astype(F32) * SCORE_SCALE).astype(F32)
                dsa = ac.to_activation("attn.grad_scores", ds)
                dq = ac.activation_matmul("attn.grad_query", dsa, k.T)
                dk = ac.activation_matmul("attn.grad_key", dsa.T, q.T)
                base = slice(b * C, (b + 1) * C)
                dqkv[base, h * HS:(h + 1) * HS] = dq
                dqkv[base, W + h * HS:W + (h + 1) * HS] = dk
                dqkv[base, 2 * W + h * HS:2 * W + (h + 1) * HS] = dv
        return dqkv

    def forward(self, ac, seqs):
        B = seqs.shape[0]
        self.inputs = seqs[:, :C].reshape(-1)
        x = (self.tok[self.inputs] + np.tile(self.pos, (B, 1))).astype(F32)
        self.qkv_out = self.qkv.forward(ac, self.ln1.forward(x))
        x2 = (x + self.proj.forward(ac, self.attention(ac, self.qkv_out))).astype(F32)
        self.fc1_out = self.fc1.forward(ac, self.ln2.forward(x2))
        x3 = (x2 + self.fc2.forward(ac, ref.relu(self.fc1_out))).astype(F32)
        hf = self.lnf.forward(x3)
        self.selected = [b * C + t for b in range(B) for t in range(L, C)]
        targets = np.array([seqs[b, t + 1] for b in range(B) for t in range(L, C)])
        return self.head.forward(ac, hf[self.selected]), targets

    def backward(self, ac, dlogits):
        dsel = self.head.backward(ac, dlogits, True)
        dhf = np.zeros((len(self.inputs), W), dtype=F32)
        dhf[self.selected] = dsel
        dx3 = self.lnf.backward(dhf)
        # A residual branch's Linear gets its gradient in the activation format, as under torch autocast.
        dfc1 = np.where(self.fc1_out > 0, self.fc2.backward(ac, ac.to_activation("mlp.fc2.output.grad", dx3), True),
                        F32(0)).astype(F32)
        dx2 = (dx3 + self.ln2.backward(self.fc1.backward(ac, dfc1, True))).astype(F32)
        dqkv = self.attention_backward(ac, self.proj.backward(ac, ac.to_activation("attn.proj.output.grad", dx2), True))
        dx = (dx2 + self.ln1.backward(self.qkv.backward(ac, dqkv, True))).astype(F32)
        self.gtok = np.zeros_like(self.tok)
        self.gpos = np.zeros_like(self.pos)
        for r, token in enumerate(self.inputs):
            self.gtok[token] = self.gtok[token] + dx[r]
            self.gpos[r % C] = self.gpos[r % C] + dx[r]


def read_sort(path):
    return np.array([list(map(int, line.split(","))) for line in gzip.open(path, "rt").read().splitlines() if line])


def train(recipe, data_path, steps, batch, lr=0.003, seed=0, init_scale=65536.0, beta1=0.9, beta2=0.999, eps=1e-8,
          train_sequences=1800):
    """Adam, as `fmtcheck train --optimizer adam`; yields per step, then the evaluation."""
    import math
    data = read_sort(data_path)
    train_set, held_out = data[:train_sequences], data[train_sequences:]
    model = Transformer(seed)
    ac = ref.Autocast(recipe)
    scaler = ref.GradScaler(init_scale) if ref.RECIPES[recipe][5] else None
    state, updates = {}, 0
    params = model.params()
    for step in range(steps):
        ac.step = {}
        seqs = train_set[[(step * batch + i) % train_sequences for i in range(batch)]]
        scale = F32(scaler.scale) if scaler else F32(1)
        logits, targets = model.forward(ac, seqs)
        loss, grad, _ = ref.softmax_cross_entropy(logits, targets, scale)
        model.backward(ac, ac.to_activation("logits.grad", grad))
        grads, found_inf = [], False
        for _, _, g in params:
            g = np.asarray(g(), dtype=F32)
            if scaler:
                found_inf = found_inf or not np.isfinite(g).all()
                g = (g * F32(1.0 / scaler.scale)).astype(F32)
            grads.append(g)
        total = F32(0)
        for g in grads:
            for v in g.ravel():
                total = F32(total + F32(v * v))
        norm = np.sqrt(total)
        skipped = scaler.update(found_inf) if scaler else False
        if not skipped:
            updates += 1
            c1 = 1.0 - float(F32(beta1)) ** updates
            c2 = 1.0 - float(F32(beta2)) ** updates
            step_size, c2_sqrt = F32(float(F32(lr)) / c1), F32(math.sqrt(c2))
            for i, ((get, put, _), g) in enumerate(zip(params, grads)):
                m, v = state.get(i, (np.zeros_like(g), np.zeros_like(g)))
                m = (m + (F32(1) - F32(beta1)) * (g - m)).astype(F32)
                v = (v * F32(beta2) + (F32(1) - F32(beta2)) * (g * g)).astype(F32)
                state[i] = (m, v)
                denom = (np.sqrt(v) / c2_sqrt + F32(eps)).astype(F32)
                put((get() + (-step_size) * (m / denom)).astype(F32))
        yield {"step": step, "loss": loss, "grad_norm": norm, "loss_scale": scale, "skipped": skipped,
               "tensors": ac.step}
    logits, targets = model.forward(ref.Autocast("fp32"), held_out)
    loss, _, correct = ref.softmax_cross_entropy(logits, targets, F32(1))
    yield {"eval_loss": loss, "accuracy": correct / len(targets)}
