"""Which dtype each result of a torch op would have on a GPU under torch.autocast, asked of torch itself.

emulate keeps every tensor float32, some of them standing for autocast's float16 or bfloat16 ones
(low_precision.py). Whether an op's result is low precision too follows from torch's type promotion
(Python numbers do not widen, a float32 tensor does, a zero-dimensional one does not) and from
autocast's op lists for CUDA (sum, softmax, exp, pow, mse_loss ... run in float32; elementwise ops
on fp16 stay fp16), lists that change between torch releases. So emulate does not keep a copy of
either: it runs the op once on fake CUDA tensors (torch's FakeTensorMode: shapes and dtypes, no data,
no GPU needed) of the dtypes the GPU would hold, with autocast for CUDA switched on, and reads the
dtypes of what comes back. Answers are cached by op, dtypes, shapes and the other arguments."""

from __future__ import annotations

import warnings
from typing import List, Optional, Tuple

import torch
from torch.utils._pytree import tree_flatten, tree_map

# One result tensor: its dtype on the GPU, and whether it is a view of an operand (no new values).
Result = Tuple[torch.dtype, bool]


class DtypeFlow:
    def __init__(self, low: torch.dtype):
        self.low = low
        self._mode = None
        self._cache = {}

    def results(self, func, args, kwargs, is_low) -> Optional[List[Optional[Result]]]:
        """Per leaf of func(*args, **kwargs)'s result (tree order): (dtype, is a view) for a tensor,
        None for anything else; None for all when the op cannot run on fake tensors (data-dependent
        shapes, .item(), .numpy() ...). `is_low(t)`: whether t stands for a low-precision tensor."""
        leaves, spec = tree_flatten((args, kwargs))
        key = (func, spec, tuple(_key(t, self.low if isinstance(t, torch.Tensor) and is_low(t) else None)
                                 for t in leaves))
        try:
            return self._cache[key]
        except KeyError:
            pass
        except TypeError:  # an argument that cannot be hashed: ask without keeping the answer
            return self._ask(func, args, kwargs, is_low)
        if len(self._cache) > 4096:
            self._cache.clear()
        answer = self._cache[key] = self._ask(func, args, kwargs, is_low)
        return answer

    def _ask(self, func, args, kwargs, is_low):
        from torch._subclasses.fake_tensor import FakeTensorMode

        if self._mode is None:
            self._mode = FakeTensorMode()
        enabled, dtype = torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda")
        cache = torch.is_autocast_cache_enabled()
        try:
            with self._mode, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fakes = []

                def fake(t):
                    if not isinstance(t, torch.Tensor):
                        return t
                    f = torch.empty_strided(t.shape, t.stride(), dtype=self.low if is_low(t) else t.dtype,
                                            device="cuda")
                    fakes.append(f)
                    return f

                fargs, fkwargs = tree_map(fake, (args, kwargs))
                torch.set_autocast_enabled("cuda", True)
                torch.set_autocast_dtype("cuda", self.low)
                torch.set_autocast_cache_enabled(False)
                out = func(*fargs, **fkwargs)
        except Exception:  # noqa: BLE001 -- any failure means: torch cannot say without data
            return None
        finally:
            torch.set_autocast_enabled("cuda", enabled)
            torch.set_autocast_dtype("cuda", dtype)
            torch.set_autocast_cache_enabled(cache)
        return [(t.dtype, any(torch._C._is_alias_of(t, f) for f in fakes)) if isinstance(t, torch.Tensor)
                else None for t in tree_flatten(out)[0]]


def _key(x, low):
    """What of one argument can change the answer: a tensor's dtype (as the GPU holds it) and shape,
    anything else itself (or its text when it cannot be hashed, as a slice before Python 3.12)."""
    if isinstance(x, torch.Tensor):
        return (low or x.dtype, tuple(x.shape), x.device.type)
    try:
        hash(x)
        return x
    except TypeError:
        return (type(x), repr(x))
