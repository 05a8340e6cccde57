"""`fmtcheck train`'s softmax cross-entropy as a torch function: exp and log correctly rounded, rows
summed in order (fmtcheck/train/layers.hpp). torch's own cross_entropy reduces in an unpublished
order with its own exp and log, so a model held to train bit for bit takes its loss from here."""

from __future__ import annotations

import numpy as np
import torch

from fmtcheck import _core

from .errors import Error


class _ExactCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, labels):
        ctx.l = np.ascontiguousarray(logits.detach().numpy())
        ctx.y = np.ascontiguousarray(labels.detach().numpy().astype(np.int32))
        loss, _ = _core.softmax_cross_entropy(ctx.l, ctx.y, ctx.l.shape[1], 1.0)
        return torch.tensor(loss, dtype=torch.float32)

    @staticmethod
    def backward(ctx, grad):
        # The gradient of loss x g for the incoming g (GradScaler's scale), as train computes it:
        # g / rows times the probabilities, minus that at the label.
        _, d = _core.softmax_cross_entropy(ctx.l, ctx.y, ctx.l.shape[1], float(grad))
        return torch.from_numpy(d), None


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of rows x classes float32 CPU logits against integer labels."""
    if logits.dim() != 2 or logits.dtype != torch.float32 or logits.device.type != "cpu":
        raise Error(f"cross_entropy takes rows x classes float32 CPU logits, not {logits.dtype} "
                    f"{tuple(logits.shape)} on {logits.device.type}")
    if labels.shape != logits.shape[:1] or labels.is_floating_point():
        raise Error(f"cross_entropy takes one integer label per row, not {labels.dtype} {tuple(labels.shape)}")
    try:
        return _ExactCrossEntropy.apply(logits, labels)
    except ValueError as e:
        raise Error(str(e)) from None
