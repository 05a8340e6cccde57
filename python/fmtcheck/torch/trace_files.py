"""The files a Recorder writes, in the layout `fmtcheck scale` and `fmtcheck analyze` read: a
safetensors file per recorded step (step_000010.safetensors), or above a size limit the step's
shards with a Hugging Face index (step_000010-00001-of-00003.safetensors and
step_000010.safetensors.index.json), and a manifest (steps.txt) listing each step's files in order.
Every file is written under a temporary name and renamed when complete, so a failure (a full disk)
leaves no half-written file."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Dict, List, Mapping

import torch

from .errors import Error


def write_atomically(path: Path, write) -> None:
    """Calls write(temporary_path) and renames the result to `path`; on any error the temporary file
    is removed and the error is raised as Error naming `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError):
            raise Error(f"cannot write {path}: {e.strerror or e}") from e
        if type(e).__name__ == "SafetensorError":  # safetensors' writer reports I/O errors as its own
            reason = re.search(r"I/O error: (.*?)(?: \(os error \d+\))?$", str(e).splitlines()[0])
            raise Error(f"cannot write {path}: {reason.group(1) if reason else str(e).splitlines()[0]}") from e
        raise


def write_text(path: Path, text: str) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    write_atomically(path, write)


def _save(tensors: Mapping[str, torch.Tensor], metadata: Dict[str, str], tmp: str) -> None:
    from safetensors.torch import save_file

    save_file(dict(tensors), tmp, metadata=metadata)


def shards(tensors: Mapping[str, torch.Tensor], max_bytes: int) -> List[Dict[str, torch.Tensor]]:
    """The tensors in order, cut into groups of at most `max_bytes` (a larger tensor alone)."""
    groups: List[Dict[str, torch.Tensor]] = [{}]
    size = 0
    for name, t in tensors.items():
        n = t.numel() * t.element_size()
        if groups[-1] and size + n > max_bytes:
            groups.append({})
            size = 0
        groups[-1][name] = t
        size += n
    return groups


def write_step(out_dir: Path, step: int, tensors: Mapping[str, torch.Tensor], metadata: Dict[str, str],
               max_bytes: int) -> List[str]:
    """Writes one step's tensors (CPU, contiguous) and returns the names of the files that hold them."""
    stem = f"step_{step:06d}"
    groups = shards(tensors, max_bytes)
    if len(groups) == 1:
        name = f"{stem}.safetensors"
        write_atomically(out_dir / name, lambda tmp: _save(groups[0], metadata, tmp))
        return [name]
    names = [f"{stem}-{i + 1:05d}-of-{len(groups):05d}.safetensors" for i in range(len(groups))]
    for name, group in zip(names, groups):
        write_atomically(out_dir / name, lambda tmp, g=group: _save(g, metadata, tmp))
    index = {"metadata": {"total_size": sum(t.numel() * t.element_size() for t in tensors.values()), **metadata},
             "weight_map": {t: name for name, group in zip(names, groups) for t in group}}
    write_text(out_dir / f"{stem}.safetensors.index.json", json.dumps(index, indent=2) + "\n")
    return names


def check_writable(out_dir: Path) -> None:
    """Makes out_dir and proves a file can be written there, before any training step is spent."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out_dir, prefix=".fmtcheck-probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise Error(f"cannot write to out_dir {out_dir}: {e.strerror or e}") from e
