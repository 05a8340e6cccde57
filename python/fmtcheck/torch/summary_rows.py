"""The per-step summary rows a Recorder keeps, its own (one per step, tensor and format) and an
emulated run's (one per step and cast): the CSV text they are written as, and the table of the
tensors that lose most values, which the report prints for both."""

from __future__ import annotations

import csv
import io
from typing import Any, Dict, Iterable, List, Mapping, Sequence


def fmtcheck_number(v: Any) -> str:
    """A cell as the CLI writes numbers: whole numbers without ".0", booleans as true/false."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def csv_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([fmtcheck_number(r[k]) for k in columns])
    return out.getvalue()


def worst_tensors(rows: Iterable[Mapping[str, Any]], column: str, head: str, count: int = 8,
                  width: int = 100) -> str:
    """The tensors that lose most values over `rows` (overflow or saturation plus underflow to zero,
    as a share of their values, in the `column` value, a format or a recipe, where it is largest):
    `head`, then a table of their overflow / underflow shares per `column` value, within `width`
    columns. Empty when nothing was lost."""
    totals: Dict[str, Dict[str, List[int]]] = {}
    for r in rows:
        t = totals.setdefault(r["tensor"], {}).setdefault(r[column], [0, 0, 0])
        t[0] += int(r["values"])
        t[1] += int(r["overflow"] + r["saturated"])
        t[2] += int(r["underflow_to_zero"])
    lost = {name: max((o + u) / max(n, 1) for n, o, u in kinds.values()) for name, kinds in totals.items()}
    worst = [name for name in sorted(lost, key=lambda n: -lost[n]) if lost[name] > 0][:count]
    if not worst:
        return ""
    kinds = list(totals[worst[0]])

    def pct(k, n):
        return "0" if k == 0 else f"{100 * k / n:.2g}%"

    cells = [[name] + [f"{pct(o, n)} / {pct(u, n)}" for n, o, u in (totals[name][f] for f in kinds)]
             for name in worst]
    widths = [max(len(c[i]) for c in cells + [["tensor"] + kinds]) for i in range(len(kinds) + 1)]
    room = width - sum(widths[1:]) - 2 * len(kinds)
    if widths[0] > room:  # long module paths: cut in the middle, keeping the role
        widths[0] = max(room, 16)
        for c in cells:
            c[0] = c[0] if len(c[0]) <= widths[0] else c[0][:(widths[0] - 3) // 2] + "..." + \
                c[0][len(c[0]) - (widths[0] - 3 - (widths[0] - 3) // 2):]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [["tensor"] + kinds] + cells]
    return head + "\n" + "\n".join(lines) + "\n"
