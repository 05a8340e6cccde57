"""The models fmtcheck.torch's tests train with torch itself: the digits MLP and the sort-task
transformer of `fmtcheck train` (data/digits, data/sort), written as ordinary torch modules, and a
Hugging Face GPT-2 built from a config with random weights (no download). Each comes with its data
as an endless stream of batches and a loss, so one training loop serves all three."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import torch

SOURCE = Path(os.environ.get("FMTCHECK_SOURCE_DIR", Path(__file__).resolve().parent.parent.parent))


def _csv(path: Path) -> np.ndarray:
    with gzip.open(path, "rt") as f:
        return np.loadtxt(f, delimiter=",", dtype=np.int64)


class DigitsMlp(torch.nn.Module):
    """The 64-32-10 ReLU MLP of `fmtcheck train --model mlp`."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 32)
        self.fc2 = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class SortTransformer(torch.nn.Module):
    """A one-block transformer (width 32, 2 heads, MLP 64) that sorts six tokens 0..7, the task of
    `fmtcheck train --model transformer`: tokens, separator, sorted tokens; predicts the next token."""

    def __init__(self, vocabulary=9, width=32, heads=2, hidden=64, length=13):
        super().__init__()
        self.embed = torch.nn.Embedding(vocabulary, width)
        self.position = torch.nn.Parameter(torch.randn(length, width) * 0.02)
        self.norm1 = torch.nn.LayerNorm(width)
        self.attention = torch.nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, width))
        self.head = torch.nn.Linear(width, vocabulary)
        self.register_buffer("causal", torch.triu(torch.ones(length, length, dtype=torch.bool), 1))

    def forward(self, tokens):
        n = tokens.shape[1]
        h = self.embed(tokens) + self.position[:n]
        a = self.norm1(h)
        h = h + self.attention(a, a, a, attn_mask=self.causal[:n, :n], need_weights=False)[0]
        h = h + self.mlp(self.norm2(h))
        return self.head(h)


class TrainSortTransformer(torch.nn.Module):
    """`fmtcheck train --model transformer` written in torch, op for op as train computes it
    (lib/src/train/transformer.cpp): token and position embeddings, one pre-norm block with causal
    2-head attention (scores scaled by 1/4, softmax) and a ReLU MLP, a final layer norm, and the head
    on the separator and the positions after it. Its float32 ops equal train's under
    `emulate(..., exact_ops=True)`; parameters are named so that `train_name` maps them to train's."""

    width, heads, hidden, context, vocabulary, first_predicted = 32, 2, 64, 12, 9, 6

    def __init__(self):
        super().__init__()
        w = self.width
        self.embedding = torch.nn.ModuleDict({"token": torch.nn.Embedding(self.vocabulary, w),
                                              "position": torch.nn.Embedding(self.context, w)})
        self.ln1, self.ln2, self.ln_final = torch.nn.LayerNorm(w), torch.nn.LayerNorm(w), torch.nn.LayerNorm(w)
        self.attn = torch.nn.ModuleDict({"qkv": torch.nn.Linear(w, 3 * w), "proj": torch.nn.Linear(w, w)})
        self.mlp = torch.nn.ModuleDict({"fc1": torch.nn.Linear(w, self.hidden), "fc2": torch.nn.Linear(self.hidden, w)})
        self.head = torch.nn.Linear(w, self.vocabulary)
        self.register_buffer("causal", torch.triu(torch.ones(self.context, self.context, dtype=torch.bool), 1))

    @staticmethod
    def train_name(name):
        """train's name of a parameter ("ln1.weight" -> "ln1.gamma", "embedding.token.weight" ->
        "embedding.token")."""
        if name.startswith("embedding."):
            return name.removesuffix(".weight")
        if name.startswith("ln"):
            return name.replace(".weight", ".gamma").replace(".bias", ".beta")
        return name

    def forward(self, tokens):  # batch x context tokens -> (batch * 6) x vocabulary logits
        b, c = tokens.shape
        w, h = self.width, self.heads
        x = self.embedding["token"](tokens) + self.embedding["position"](torch.arange(c).expand(b, c))
        q, k, v = self.attn["qkv"](self.ln1(x)).view(b, c, 3, h, w // h).permute(2, 0, 3, 1, 4)
        scores = ((q @ k.transpose(-1, -2)) * 0.25).masked_fill(self.causal[:c, :c], float("-inf"))
        heads = torch.nn.functional.softmax(scores, dim=-1) @ v
        x2 = x + self.attn["proj"](heads.transpose(1, 2).reshape(b, c, w))
        x3 = x2 + self.mlp["fc2"](torch.relu(self.mlp["fc1"](self.ln2(x2))))
        return self.head(self.ln_final(x3)[:, self.first_predicted:].reshape(-1, w))


def digits(seed=0, batch=32):
    """The MLP, its batches (pixels 0..16 scaled by 1/16, labels) and cross-entropy."""
    torch.manual_seed(seed)
    data = _csv(SOURCE / "data" / "digits" / "digits.csv.gz")
    x = torch.tensor(data[:, :64], dtype=torch.float32) / 16
    y = torch.tensor(data[:, 64])

    def batches():
        g = torch.Generator().manual_seed(seed)
        while True:
            for i in torch.randperm(len(x), generator=g).split(batch):
                yield x[i], y[i]

    return DigitsMlp(), batches(), lambda out, y: torch.nn.functional.cross_entropy(out, y)


def sort_task(seed=0, batch=32):
    """The transformer, its batches (inputs: the first 12 tokens; targets: the next token at every
    position after the separator) and the cross-entropy over those positions."""
    torch.manual_seed(seed)
    seqs = torch.tensor(_csv(SOURCE / "data" / "sort" / "sort.csv.gz"))

    def batches():
        g = torch.Generator().manual_seed(seed)
        while True:
            for i in torch.randperm(len(seqs), generator=g).split(batch):
                yield seqs[i, :-1], seqs[i, 1:]

    def loss(out, target):
        return torch.nn.functional.cross_entropy(out[:, 6:].reshape(-1, out.shape[-1]), target[:, 6:].reshape(-1))

    return SortTransformer(), batches(), loss


def gpt2(seed=0, batch=8, length=32, layers=2, attention="eager"):
    """A Hugging Face GPT-2 from a config (2 layers, width 64, 4 heads, vocabulary 256), random
    weights, trained on random token sequences as a language model; `attention` its
    attn_implementation ("eager": matmul and softmax; "sdpa": F.scaled_dot_product_attention)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=256, n_positions=length, n_embd=64, n_layer=layers, n_head=4, bos_token_id=0,
                        eos_token_id=0, attn_implementation=attention)
    model = GPT2LMHeadModel(config)

    def batches():
        g = torch.Generator().manual_seed(seed)
        while True:
            yield torch.randint(0, 256, (batch, length), generator=g), None

    def loss(out, _):
        return out.loss

    return _Lm(model), batches(), loss


class _Lm(torch.nn.Module):
    """A causal LM called with its input as the labels: out.loss is the next-token loss."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens):
        return self.model(input_ids=tokens, labels=tokens)


MODELS = {"mlp": digits, "transformer": sort_task, "gpt2": gpt2}


def train(model, opt, batches, loss_fn, steps, *, autocast=torch.float16, scaler=None, on_step=None, device="cpu"):
    """`steps` steps of `opt`, the forward under autocast on `device` (`autocast`: a dtype, or None
    for float32; the batches are moved there), the backward through `scaler` when given;
    `on_step(step, loss)` after each step."""
    for step in range(steps):
        x, y = next(batches)
        if device != "cpu":
            x, y = x.to(device), (None if y is None else y.to(device))
        with torch.autocast(device, dtype=autocast or torch.float32, enabled=autocast is not None):
            loss = loss_fn(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.zero_grad(set_to_none=True)
        if on_step is not None:
            on_step(step, float(loss))
