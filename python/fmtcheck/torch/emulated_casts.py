"""An emulated run's casts in a Recorder's trace. fmtcheck.torch.emulate counts what each cast of
its recipe did; given to a Recorder (``Recorder(model, dir, emulate=em)``), those counts become one
row per Recorder step and cast (emulated.csv, summary.json's "emulated"), the steps ending where the
Recorder's end, and a part of the Recorder's report."""

from __future__ import annotations

from typing import Any, Dict, List

import fmtcheck

from .emulate import MEASURES, emulate
from .errors import Error
from .summary_rows import worst_tensors

COLUMNS = ("step", "tensor", "recipe", "values", "overflow", "saturated", "underflow_to_zero", "amax", "nan_produced",
           "scale")


class EmulatedCasts:
    """The rows of one emulate's casts, per step of the Recorder that holds it. A Recorder step may
    span several of emulate's (one per forward under gradient accumulation): their counts add up,
    amax is the largest, scale the last cast's."""

    def __init__(self, em: Any):
        if not isinstance(em, emulate):
            raise Error(f"emulate={type(em).__name__}: expected the fmtcheck.torch.emulate the loop runs under")
        self.em = em
        self.rows: List[Dict[str, Any]] = []
        self._step: Dict[str, Dict[str, float]] = {}
        self._scales: Dict[str, float] = {}

    def attach(self) -> None:
        if self.em.on_step is not None:
            raise Error("this emulate already reports its casts to another Recorder")
        self.em.step()  # casts made before the Recorder started belong to none of its steps
        self.em.on_step = self._take

    def _take(self, stats: list) -> None:
        emulate._fold(stats, self._step)
        for name, _amax, scale, _flags in stats:
            self._scales[name] = scale

    def end_step(self, step: int) -> None:
        self.em.step()  # the casts since emulate's last step reach _take
        for name, t in self._step.items():
            self.rows.append({"step": step, "tensor": name, "recipe": self.em.recipe, **t, "scale": self._scales[name]})
        self._step.clear()
        self._scales.clear()

    def detach(self, step: int) -> None:
        """Stops taking emulate's steps; casts made since the last step ended (an evaluation pass)
        become a row of `step`, the step under way, so the rows hold every cast."""
        if self.em.casts.step_stats() or self._step:
            self.end_step(step)
        self.em.on_step = None

    def report(self, width: int = 100) -> str:
        """The totals over every row, and the casts that lost most."""
        if not self.rows:
            return ""
        steps = len({r["step"] for r in self.rows})
        total = {m: sum(int(r[m]) for r in self.rows) for m in MEASURES}
        n = total["values"]

        def share(k):
            return str(k) if k == 0 else f"{k} ({100 * k / n:.2g}%)"

        lost = total["overflow"] + total["saturated"] + total["underflow_to_zero"]
        text = fmtcheck._core.wrap(
            f"emulated {self.em.recipe} on {self.em.gpu}: ",
            f"{n} values cast over {steps} steps (emulated.csv): {share(total['overflow'])} overflowed, "
            f"{share(total['saturated'])} saturated, {share(total['underflow_to_zero'])} underflowed to zero, "
            f"{total['nan_produced']} NaN produced: "
            + ("the recipe loses no value at its casts." if lost == 0 else
               f"the values {self.em.recipe} loses at its casts on {self.em.gpu}; the table says where."),
            width)
        return text + worst_tensors(self.rows, "recipe", f"the emulated casts that lost most values (overflow / "
                                    f"underflow to zero, over {steps} steps):", width=width)
