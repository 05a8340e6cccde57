"""What emulate does with a GEMM-bearing call it cannot compute as the preset would: by default one
Error naming the call; with emulate(unsupported="warn"), torch computes it and one warning per op
says that the result is torch's. Never an unemulated result without a word."""

from __future__ import annotations

import warnings

from .errors import Error

POLICIES = ("error", "warn")


class Unsupported(Error):
    """A call emulate does not compute (an op, an operand's dtype or device, a pattern of an op);
    under unsupported="warn" torch runs it instead. Bad input stays a plain Error."""


class Fallback:
    """The unsupported= policy of one emulate: raise, or run torch and warn once per op name."""

    def __init__(self, policy: str, preset: str):
        if policy not in POLICIES:
            raise Error(f"unsupported={policy!r}: expected one of {', '.join(POLICIES)}")
        self.policy, self.preset = policy, preset
        self.warned: set = set()

    def __call__(self, op: str, reason: Unsupported, run):
        if self.policy == "error":
            raise reason
        if op not in self.warned:
            self.warned.add(op)
            warnings.warn(f"emulate: {op} ran in torch; its result is torch's, not {self.preset}'s ({reason})",
                          stacklevel=3)
        return run()
