"""Arguments of a torch call taken by position or by torch's parameter names (models name them:
BLOOM calls baddbmm(input=, batch1=, batch2=)), in torch's order."""

from __future__ import annotations

from .errors import Error


def in_order(op: str, names: tuple, args: tuple, kwargs: dict) -> tuple:
    """The values of `names`, every one given, the first len(args) by position."""
    if len(args) + len(kwargs) != len(names) or not set(kwargs) <= set(names[len(args):]):
        raise Error(f"{op} takes {', '.join(names)}, not {len(args)} values by position and {sorted(kwargs)}")
    return args + tuple(kwargs[n] for n in names[len(args):])
