"""Progress bars for long recordings and analyses of big models: tqdm when it is installed and
asked for (or, by default, when stderr is a terminal); otherwise nothing is shown."""

from __future__ import annotations

import sys
from typing import Any, Optional


def bar(total: Optional[int], desc: str, enabled: Optional[bool], unit: str) -> Any:
    """A tqdm bar (total None: a counter), or None when `enabled` is False (None: stderr is not a
    terminal) or tqdm is missing."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is optional: without it there is no bar
        return None
    return tqdm(total=total, desc=desc, unit=unit, leave=False, dynamic_ncols=True)
