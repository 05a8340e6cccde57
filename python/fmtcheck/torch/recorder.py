"""fmtcheck.torch.Recorder: watches a training run through module and tensor hooks, writes each
recorded step as a trace `fmtcheck scale` and `fmtcheck analyze` read, keeps a live per-step summary
computed in-process by the library, and ends with the verdict `fmtcheck analyze` prints."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import torch

import fmtcheck

from . import scaler_state
from .analyze import merge
from .emulated_casts import COLUMNS as EMULATED_COLUMNS, EmulatedCasts
from .errors import Error
from .progress import bar
from .summary_rows import csv_text, fmtcheck_number, worst_tensors
from .tensors import check, is_value_tensor
from .trace_files import check_writable, write_step, write_text

ROLES = ("weight", "grad", "activation", "activation_grad")
SUMMARY_MEASURES = ("values", "overflow", "saturated", "underflow_to_zero", "amax")
SCALER_COLUMNS = ("step", "scale", "found_inf", "skipped", "next_scale", "recorded")


class _AppendedLines:
    """A text file that grows a whole line at a time (steps.txt, scaler.csv): a line the disk cannot
    take is cut off again, so the file always ends after a complete line."""

    def __init__(self, path: Path, first: str):
        self.path = path
        try:
            self.file = open(path, "w", newline="")
        except OSError as e:
            raise Error(f"cannot write {path}: {e.strerror or e}") from e
        self.add(first)

    def add(self, line: str) -> None:
        end = self.file.tell()
        try:
            self.file.write(line + "\n")
            self.file.flush()
        except OSError as e:
            self.file.truncate(end)
            raise Error(f"cannot write {self.path}: {e.strerror or e}") from e

    def close(self) -> None:
        self.file.close()


class Recorder:
    """Records a training run for fmtcheck, as a context manager around the training loop::

        with fmtcheck.torch.Recorder(model, "trace", scaler=scaler):
            for x, y in batches: ...   # the loop as it was

    Per recorded step (every `every`-th, counting from 0) it writes out_dir/step_NNNNNN.safetensors
    (shards and an index above `shard_bytes`) with the tensors `record` names, as
    "module.path:role": weight (parameters at the step's first forward, named by the parameter's
    path), grad (each parameter's .grad as the optimizer steps with it: after DDP's averaging and
    every micro-batch), activation (the output of each leaf module in a forward with gradients on;
    the last micro-batch's) and activation_grad (the gradient reaching that output). With a
    GradScaler the gradients are unscaled, as GradScaler.unscale_ computes them (float32, times
    1/scale; inf and NaN kept): the parameters' .grad is torch's own unscale_ result (so gradient
    clipping between unscale_ and step is in it), and scaler.csv holds the real scaler's scale,
    found_inf and skipped per step. steps.txt lists the recorded steps' files for `fmtcheck scale`.

    A step ends at scaler.update() when a scaler is given, else at optimizer.step() when an optimizer
    is, else when the loop calls ``recorder.step()``. ``summary`` holds, per recorded step, tensor and
    format, the counts of ``SUMMARY_MEASURES`` computed by the library in-process; at exit the verdict
    over every recorded tensor is printed (``verbose``) and written with the summary as verdict.txt,
    summary.csv and summary.json. Under torch.distributed each rank writes out_dir/rank_NNNNN/.
    Bad input (no parameters, meta tensors, an unreadable dtype, an out_dir that cannot be written, a
    full disk) raises fmtcheck.torch.Error; a step file is complete or absent.

    ``emulate``: the fmtcheck.torch.emulate the loop runs under. Its casts' counts then end their
    steps with the Recorder's, every step whatever `every`, as ``emulated`` (one row per step and
    cast: ``EMULATED_COLUMNS``) and emulated.csv, and the report says what the casts lost.
    """

    def __init__(self, model: torch.nn.Module, out_dir: Union[str, os.PathLike], every: int = 1,
                 record: Sequence[str] = ("grad", "activation", "weight"), scaler: Any = None,
                 optimizer: Optional[torch.optim.Optimizer] = None, formats: fmtcheck.Formats = "fp16,bf16,e4m3,e5m2",
                 shard_bytes: int = 1 << 30, verbose: bool = True, progress: Optional[bool] = None,
                 emulate: Any = None, **policy: Any):
        if not isinstance(model, torch.nn.Module):
            raise Error(f"model is a {type(model).__name__}, not a torch.nn.Module")
        if isinstance(record, str):
            record = (record,)
        unknown = [r for r in record if r not in ROLES]
        if unknown or not record:
            raise Error(f"record={tuple(record)!r}: expected some of {', '.join(ROLES)}")
        if not isinstance(every, int) or every < 1:
            raise Error(f"every={every!r}: expected a whole number of steps, at least 1")
        params = [(n, p) for n, p in model.named_parameters()]
        if not params and ("weight" in record or "grad" in record):
            raise Error(f"the model ({type(model).__name__}) has no parameters to record")
        for n, p in params:
            check(n, p)
        self.model, self.every, self.record = model, every, tuple(record)
        self.scaler = scaler if scaler is not None and scaler.is_enabled() else None
        self.optimizer = optimizer
        self.formats = fmtcheck._format_list(formats)
        self.policy = policy
        try:  # bad formats or policy: fail now, before any training step is spent
            fmtcheck.analyze({"probe": torch.zeros(1)}, self.formats, **policy)
        except (ValueError, TypeError) as e:
            raise Error(str(e)) from None
        self.shard_bytes, self.verbose, self.show_progress = shard_bytes, verbose, progress
        self._emulated = EmulatedCasts(emulate) if emulate is not None else None
        self.out_dir = Path(out_dir)
        if torch.distributed.is_available() and torch.distributed.is_initialized() and torch.distributed.get_world_size() > 1:
            self.out_dir = self.out_dir / f"rank_{torch.distributed.get_rank():05d}"
        self.step_index = 0  # the training step under way, counting from 0
        self.recorded_steps: List[int] = []
        self.summary: List[Dict[str, Any]] = []
        self.last: Optional[fmtcheck.Analysis] = None  # the last recorded step's Analysis
        self.scaler_rows: List[Dict[str, Any]] = []
        self._analyses: List[fmtcheck.Analysis] = []
        self._pending: Dict[str, torch.Tensor] = {}
        self._handles: List[Any] = []
        self._weights_taken = False  # this step's weights are in _pending
        self._bar: Any = None
        self._open = False

    # -- the context -------------------------------------------------------------------------------

    def __enter__(self) -> "Recorder":
        self.start()
        return self

    def __exit__(self, kind, error, trace) -> None:
        self.close(report=kind is None)

    def start(self) -> None:
        """Makes out_dir, opens its files and installs the hooks (what ``with`` does)."""
        if self._open:
            raise Error("this Recorder is already recording")
        check_writable(self.out_dir)
        self._manifest = _AppendedLines(self.out_dir / "steps.txt", "# the recorded steps' files, one step a line")
        self._scaler_csv = _AppendedLines(self.out_dir / "scaler.csv", ",".join(SCALER_COLUMNS)) if self.scaler else None
        names = {m: path or "model" for path, m in self.model.named_modules()}
        leaves = [m for m in names if not any(True for _ in m.children())]
        if "activation" in self.record or "activation_grad" in self.record:
            for m in leaves:
                self._handles.append(m.register_forward_hook(self._forward_hook(names[m])))
        if "weight" in self.record:
            self._handles.append(self.model.register_forward_pre_hook(self._capture_weights))
        if self.scaler is not None:
            update = self.scaler.update

            def update_and_end_step(new_scale=None):
                scale, found_inf = scaler_state.scale_of(self.scaler), scaler_state.found_inf(self.scaler)
                update(new_scale)
                self._end_step(scale, found_inf, scaler_state.scale_of(self.scaler))

            self.scaler.update = update_and_end_step
        elif self.optimizer is not None:
            self._handles.append(self.optimizer.register_step_post_hook(lambda *_: self._end_step()))
        self._bar = bar(None, "fmtcheck recording", self.show_progress, "step")
        if self._emulated is not None:
            self._emulated.attach()
        self._open = True

    def step(self) -> None:
        """Ends the training step under way: for loops without a scaler or optimizer given."""
        if self.scaler is not None or self.optimizer is not None:
            raise Error("steps end by themselves at scaler.update() or optimizer.step(): do not call step()")
        self._end_step()

    def close(self, report: bool = True) -> None:
        """Removes the hooks and writes the summary and verdict (and prints it, when verbose)."""
        if not self._open:
            return
        self._open = False
        for h in self._handles:
            h.remove()
        self._handles.clear()
        if self.scaler is not None:
            del self.scaler.update  # the class's own method again
        if self._emulated is not None:
            self._emulated.detach(self.step_index)
        self._pending.clear()
        if self._bar is not None:
            self._bar.close()
        self._manifest.close()
        if self._scaler_csv:
            self._scaler_csv.close()
        if report:
            text = self.report()
            self._write_summary(text)
            if self.verbose:
                print(text, end="")

    # -- hooks -------------------------------------------------------------------------------------

    @property
    def recording(self) -> bool:
        """Whether the step under way is recorded."""
        return self._open and self.step_index % self.every == 0

    def _keep(self, name: str, t: torch.Tensor) -> None:
        check(name, t)
        self._pending[name] = t.detach().to("cpu", copy=True).contiguous()

    def _forward_hook(self, path: str):
        def hook(module, inputs, output):
            if not self.recording or not torch.is_grad_enabled():
                return  # evaluation passes are not part of the step
            outs = [t for t in (output if isinstance(output, (tuple, list)) else [output])
                    if isinstance(t, torch.Tensor) and is_value_tensor(t)]
            for i, t in enumerate(outs):
                suffix = f".{i}" if len(outs) > 1 else ""
                if "activation" in self.record:
                    self._keep(f"{path}:activation{suffix}", t)
                if "activation_grad" in self.record and t.requires_grad:
                    # A hook on the output tensor, not register_full_backward_hook: it sees the same
                    # gradient without wrapping the module's outputs (which breaks in-place ops after it).
                    t.register_hook(lambda g, n=f"{path}:activation_grad{suffix}": self._keep(n, g))
        return hook

    def _capture_weights(self, module, inputs):
        if self.recording and torch.is_grad_enabled() and not self._weights_taken:
            self._weights_taken = True  # the weights this step's first forward used
            for n, p in self.model.named_parameters():
                self._keep(f"{n}:weight", p)

    # -- steps -------------------------------------------------------------------------------------

    def _end_step(self, scale: Optional[float] = None, found_inf: Optional[bool] = None,
                  next_scale: Optional[float] = None) -> None:
        if self.recording and "grad" in self.record:
            # The .grad the optimizer steps with, read when the step ends rather than by a
            # post-accumulate hook: DDP writes its averaged gradient after that hook, micro-batches
            # accumulate after it, and with a GradScaler this is torch's own unscale_ result.
            for n, p in self.model.named_parameters():
                if p.grad is not None:
                    self._keep(f"{n}:grad", p.grad)
        step, recorded = self.step_index, self.recording and bool(self._pending)
        if recorded:
            self._write_step(step, scale, found_inf)
        self._pending = {}
        self._weights_taken = False
        if scale is not None:
            row = {"step": step, "scale": scale, "found_inf": found_inf, "skipped": found_inf,
                   "next_scale": next_scale, "recorded": recorded}
            self.scaler_rows.append(row)
            self._scaler_csv.add(",".join(fmtcheck_number(row[c]) for c in SCALER_COLUMNS))
        if self._emulated is not None:
            self._emulated.end_step(step)
        self.step_index += 1
        if self._bar is not None:
            self._bar.update(1)

    def _write_step(self, step: int, scale: Optional[float], found_inf: Optional[bool]) -> None:
        tensors = dict(sorted(self._pending.items()))
        if scale is not None:  # gradients of the scaled loss that unscale_ leaves alone, unscaled as it does
            for name, t in tensors.items():
                if ":activation_grad" in name:
                    tensors[name] = scaler_state.unscaled(t, scale)
        metadata = {"step": str(step), "fmtcheck_recorder": "1",
                    "gradients": "unscaled by GradScaler's scale" if scale is not None else "as computed"}
        if scale is not None:
            metadata.update(scale=repr(scale), found_inf=str(bool(found_inf)).lower())
        files = write_step(self.out_dir, step, tensors, metadata, self.shard_bytes)
        self._manifest.add(" ".join(files) + f"  # step {step}")
        analysis = fmtcheck.analyze(tensors, self.formats, **self.policy)
        self._analyses.append(analysis)
        self.last = analysis
        self.recorded_steps.append(step)
        for r in analysis.results:
            m = r["measures"]
            self.summary.append({"step": step, "tensor": r["tensor"], "format": r["format"],
                                 **{k: m[k] for k in SUMMARY_MEASURES}})

    @property
    def emulated(self) -> List[Dict[str, Any]]:
        """With ``emulate=``: per step and cast of the emulated recipe, the counts of
        ``EMULATED_COLUMNS`` (what emulate's ``summary`` totals); else empty."""
        return self._emulated.rows if self._emulated is not None else []

    # -- the report --------------------------------------------------------------------------------

    def analysis(self) -> Optional[fmtcheck.Analysis]:
        """Every recorded tensor of every recorded step as one Analysis (None before any step)."""
        return merge(self._analyses, self.formats) if self._analyses else None

    def report(self, width: int = 100) -> str:
        """What the run showed: the steps recorded, the scaler's decisions, the verdict over every
        recorded tensor, and how to replay the loss scaling."""
        wrap = fmtcheck._core.wrap
        text = wrap("fmtcheck.torch: ", f"{len(self.recorded_steps)} of {self.step_index} steps recorded in "
                    f"{self.out_dir} ({', '.join(self.record)})", width)
        if self.scaler_rows:
            skipped = sum(1 for r in self.scaler_rows if r["skipped"])
            text += wrap("GradScaler: ", f"{skipped} of {len(self.scaler_rows)} steps skipped for inf/NaN gradients, "
                         f"scale {fmtcheck_number(self.scaler_rows[0]['scale'])} -> "
                         f"{fmtcheck_number(self.scaler_rows[-1]['next_scale'])} (scaler.csv)", width)
        if self._emulated is not None:
            text += self._emulated.report(width)
        whole = self.analysis()
        if whole is None:
            return text + "nothing was recorded: no step ended inside the Recorder\n"
        text += self.worst_tensors(width=width)
        text += f"verdict over the recorded tensors ({whole.policy}):\n" + whole.verdict(width)
        if self.scaler_rows and self.every == 1 and "grad" in self.record:
            s = scaler_state.settings_of(self.scaler) if self.scaler else {}
            command = (f"fmtcheck scale {self.out_dir} --recipe gradscaler --format fp32 --tensors ':grad$' "
                       f"--init-scale {fmtcheck_number(self.scaler_rows[0]['scale'])} "
                       f"--growth-interval {s.get('growth_interval', 2000)}")
            for knob, cli_default in (("growth_factor", 2.0), ("backoff_factor", 0.5)):
                if s.get(knob, cli_default) != cli_default:
                    command += f" --{knob.replace('_', '-')} {fmtcheck_number(s[knob])}"
            text += wrap("replay torch's decisions: ", command, width)
        return text

    def worst_tensors(self, count: int = 8, width: int = 100) -> str:
        """The tensors that lose most values over the recorded steps (overflow or saturation plus
        underflow to zero, as a share of their values, in the format where it is largest): a table of
        their overflow / underflow shares per format, fitted to `width` columns."""
        return worst_tensors(self.summary, "format", f"the tensors that lose most values (overflow / underflow to "
                             f"zero, over {len(self.recorded_steps)} steps):", count, width)

    def _write_summary(self, text: str) -> None:
        write_text(self.out_dir / "verdict.txt", text)
        write_text(self.out_dir / "summary.csv", csv_text(self.summary, ("step", "tensor", "format") + SUMMARY_MEASURES))
        if self._emulated is not None:
            write_text(self.out_dir / "emulated.csv", csv_text(self.emulated, EMULATED_COLUMNS))
        doc = {"steps": self.step_index, "recorded_steps": self.recorded_steps, "every": self.every,
               "record": list(self.record), "formats": self.formats,
               "gradients": "unscaled by GradScaler's scale" if self.scaler_rows else "as computed",
               "scaler": scaler_state.settings_of(self.scaler) if self.scaler else None,
               "scaler_steps": self.scaler_rows, "summary": self.summary,
               "emulate": {"recipe": self._emulated.em.recipe, "gpu": self._emulated.em.gpu} if self._emulated else None,
               "emulated": self.emulated, "verdict": text}
        write_text(self.out_dir / "summary.json", json.dumps(doc, indent=1) + "\n")

