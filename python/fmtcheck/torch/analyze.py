"""fmtcheck.torch.analyze: what each format does to a model's parameters and gradients, a state_dict
or tensors, as fmtcheck.analyze measures arrays (the same Analysis, the same verdict)."""

from __future__ import annotations

import itertools
from typing import Any, List, Optional

import torch

import fmtcheck

from .errors import Error
from .progress import bar
from .tensors import host_batches, named_tensors

# Host memory for copies of tensors that are not on the CPU, per batch.
DEFAULT_HOST_BYTES = 256 << 20


def merge(parts: List["fmtcheck.Analysis"], formats: str) -> "fmtcheck.Analysis":
    """One Analysis of the tensors of several (each tensor is in one part; the measures are per tensor)."""
    raw = {"policy": parts[0].policy, "scale": parts[0].scale, "results": [], "histograms": [], "blocks": [],
           "outcomes": []}
    for p in parts:
        raw["results"] += p.results
        raw["histograms"] += p.histograms
        raw["blocks"] += p.blocks
        raw["outcomes"] += p.outcomes
    return fmtcheck.Analysis(raw, formats)


def analyze(obj: Any, formats: fmtcheck.Formats = "fp16,bf16,e4m3,e5m2", *, progress: Optional[bool] = None,
            max_host_bytes: int = DEFAULT_HOST_BYTES, **options: Any) -> "fmtcheck.Analysis":
    """What each format does to `obj`: an nn.Module (its parameters, named "path:weight", and the
    .grad of those that have one, "path:grad"), a state_dict or dict of tensors, or one tensor.

    Returns the Analysis of fmtcheck.analyze (``.results``, ``.table()``, ``.verdict()``); the
    other keywords are fmtcheck.analyze's (scale, block, the policy). CPU tensors are read in place;
    bfloat16 and float8 tensors as their codes. float32 tensors on a GPU are measured there, where
    fmtcheck was built with CUDA (their results come first); other tensors on another device are
    copied to the host in batches of at most `max_host_bytes` (one tensor larger than that is a batch
    of its own).
    ``progress``: a tqdm bar over the tensors (None: when stderr is a terminal). Raises
    fmtcheck.torch.Error for what cannot be read (meta tensors, complex or unknown dtypes).
    """
    tensors = dict(named_tensors(obj))
    formats = fmtcheck._format_list(formats)
    parts = []
    shown = bar(len(tensors), "fmtcheck analyze", progress, "tensor")
    gpu = not fmtcheck._core.gpu_unavailable()
    on_gpu = {n: t.detach().contiguous() for n, t in tensors.items()
              if gpu and t.device.type == "cuda" and t.dtype == torch.float32}
    on_host = {n: t for n, t in tensors.items() if n not in on_gpu}
    for batch in itertools.chain([on_gpu] if on_gpu else [], host_batches(on_host, max_host_bytes)):
        try:
            parts.append(fmtcheck.analyze(batch, formats, **options))
        except (ValueError, TypeError) as e:  # a bad format or option, in fmtcheck's words
            raise Error(str(e)) from None
        if shown is not None:
            shown.update(len(batch))
    if shown is not None:
        shown.close()
    return merge(parts, formats) if len(parts) > 1 else parts[0]
