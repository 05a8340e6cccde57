"""torch tensors as fmtcheck reads them: CPU tensors in place (DLPack), CUDA tensors copied to the
host one batch at a time, every dtype checked first so a bad one is one clear error."""

from __future__ import annotations

from typing import Dict, Iterator, List, Mapping, Tuple

import torch

from .errors import Error

# torch's floating dtypes fmtcheck reads (their bits are fmtcheck's fp32, fp64, fp16, bf16, e4m3, e5m2,
# e4m3fnuz, e5m2fnuz and e8m0 codes); integer and bool tensors hold no floating-point values.
READABLE = {torch.float32, torch.float64, torch.float16, torch.bfloat16}
READABLE |= {getattr(torch, name) for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                                              "float8_e8m0fnu") if hasattr(torch, name)}


def is_value_tensor(t: torch.Tensor) -> bool:
    """Whether a tensor holds numbers a float format could hold (not integers or bools)."""
    return t.is_floating_point() or t.is_complex()


def check(name: str, t: torch.Tensor) -> None:
    """Raises Error, naming the tensor, for what fmtcheck cannot read: the meta device (no values),
    complex numbers and floating dtypes it does not know."""
    if not isinstance(t, torch.Tensor):
        raise Error(f"{name} is a {type(t).__name__}, not a torch tensor")
    if t.is_meta:
        raise Error(f"tensor {name} is on the meta device: it has no values to analyze (load the weights first)")
    if t.dtype not in READABLE:
        raise Error(f"tensor {name} has dtype {t.dtype}, which fmtcheck does not read "
                    f"(it reads float32, float64, float16, bfloat16 and the float8 types)")


def on_host(t: torch.Tensor) -> torch.Tensor:
    """The tensor as the extension reads it: a detached C-contiguous CPU tensor, the same memory
    when it already is one (read in place through DLPack), else a copy."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.to("cpu")
    return t.contiguous()


def host_batches(tensors: Mapping[str, torch.Tensor], max_bytes: int) -> Iterator[Dict[str, torch.Tensor]]:
    """The tensors in batches of at most `max_bytes` of copies (a tensor larger than that is a batch
    of its own): CPU tensors cost nothing, tensors on another device are copied to the host one batch
    at a time, so the host memory held stays bounded by the batch, not the model."""
    batch: Dict[str, torch.Tensor] = {}
    held = 0
    for name, t in tensors.items():
        copy_bytes = 0 if t.device.type == "cpu" and t.is_contiguous() else t.numel() * t.element_size()
        if batch and held + copy_bytes > max_bytes:
            yield batch
            batch, held = {}, 0
        batch[name] = on_host(t)
        held += copy_bytes
    if batch:
        yield batch


def named_tensors(obj, what: str = "obj") -> List[Tuple[str, torch.Tensor]]:
    """(name, tensor) for what fmtcheck.torch.analyze takes: an nn.Module (its parameters as
    "path:weight" and their .grad as "path:grad"), a state_dict or dict of tensors (integer and
    bool entries, such as BatchNorm's num_batches_tracked, are left out), or one tensor."""
    if isinstance(obj, torch.nn.Module):
        params = list(obj.named_parameters())
        if not params:
            raise Error(f"the model ({type(obj).__name__}) has no parameters to analyze")
        out = [(f"{n}:weight", p) for n, p in params]
        out += [(f"{n}:grad", p.grad) for n, p in params if p.grad is not None]
    elif isinstance(obj, torch.Tensor):
        out = [("tensor", obj)]
    elif isinstance(obj, Mapping):
        out = []
        for n, t in obj.items():
            if not isinstance(t, torch.Tensor):
                raise Error(f"{what}[{n!r}] is a {type(t).__name__}, not a torch tensor")
            if is_value_tensor(t):
                out.append((str(n), t))
        if not out:
            raise Error(f"{what} holds no floating-point tensors to analyze")
    else:
        raise Error(f"{what} is a {type(obj).__name__}: expected an nn.Module, a state_dict, a dict of tensors "
                    f"or a tensor")
    for n, t in out:
        check(n, t)
    return out
