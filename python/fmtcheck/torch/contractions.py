"""einsum, tensordot and inner for fmtcheck.torch.emulate: a two-operand contraction rewritten as
one (batched) matmul of the library, as torch's own einsum does (permute each operand to batch x
rows x contracted, reshape, bmm, reshape and permute back). The rewriting is torch's view
arithmetic; the product is emulate's: a layer GEMM when no index is shared by both operands and the
output (the right operand acts as a weight), else the activation matmul of batched products.
Patterns that are not one matmul (a diagonal, an index summed within one operand, three operands)
are Unsupported, naming the equation."""

from __future__ import annotations

import math
import string

from .errors import Error
from .unsupported import Unsupported


def _explicit(equation: str, dims):
    """The equation with '...' spelled out in letters it does not use, and its output made explicit
    (implicit: the indices seen once, in alphabetical order, after the ellipsis)."""
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    ins = lhs.split(",")
    if len(ins) != len(dims):
        raise Error(f"einsum '{equation}' names {len(ins)} operands and is given {len(dims)}")
    free = [c for c in string.ascii_letters if c not in equation]
    spans = [d - (len(s) - 3) if "..." in s else 0 for s, d in zip(ins, dims)]
    top = max(spans)
    ins = [s.replace("...", "".join(free[top - e:top])) for s, e in zip(ins, spans)]
    if arrow:
        out = out.replace("...", "".join(free[:top]))
    else:
        letters = "".join(ins)
        out = "".join(free[:top]) + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in free))
    return ins, out


def contract(em, op, equation, a, b):
    em._check(op, a, b)
    (sa, sb), out = _explicit(equation, (a.dim(), b.dim()))
    for s, t in ((sa, a), (sb, b)):
        if len(s) != t.dim():
            raise Error(f"{op} '{equation}': an operand of {t.dim()} dimensions has {len(s)} indices")
        if len(set(s)) != len(s):
            raise Unsupported(f"{op} '{equation}': a repeated index (a diagonal) is not one matmul")
    if len(set(out)) != len(out) or not set(out) <= set(sa + sb):
        raise Error(f"{op} '{equation}': each output index must appear once and in an operand")
    batch = [c for c in out if c in sa and c in sb]
    left = [c for c in out if c in sa and c not in sb]
    right = [c for c in out if c in sb and c not in sa]
    inner = [c for c in sa if c in sb and c not in out]
    if len(batch) + len(left) + len(inner) != len(sa) or len(batch) + len(right) + len(inner) != len(sb):
        raise Unsupported(f"{op} '{equation}': an index summed within one operand is not one matmul")
    size_a, size_b = dict(zip(sa, a.shape)), dict(zip(sb, b.shape))
    if any(size_a[c] != size_b[c] for c in inner):
        raise Error(f"{op} '{equation}' of shapes {tuple(a.shape)} and {tuple(b.shape)}: contracted sizes differ")
    m = math.prod(size_a[c] for c in left)
    k = math.prod(size_a[c] for c in inner)
    n = math.prod(size_b[c] for c in right)
    pa = a.permute([sa.index(c) for c in batch + left + inner]).reshape(*[size_a[c] for c in batch], m, k)
    pb = b.permute([sb.index(c) for c in batch + inner + right]).reshape(*[size_b[c] for c in batch], k, n)
    y = em._product(op, pa, pb, layer=not batch)  # batch sizes of 1 broadcast, as in einsum
    y = y.reshape(*y.shape[:len(batch)], *[size_a[c] for c in left], *[size_b[c] for c in right])
    order = batch + left + right
    return y.permute([order.index(c) for c in out])


def einsum(em, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise Unsupported("einsum in sublist form: emulate reads the equation form")
    if len(operands) != 2:
        raise Unsupported(f"einsum '{equation}' of {len(operands)} operands: emulate takes two")
    return contract(em, "einsum", equation, *operands)


def tensordot(em, a, b, dims=2, op="tensordot"):
    if isinstance(dims, int):
        if dims < 0 or dims > min(a.dim(), b.dim()):
            raise Error(f"{op} of shapes {tuple(a.shape)} and {tuple(b.shape)}: dims={dims}")
        dims = (list(range(a.dim() - dims, a.dim())), list(range(dims)))
    da, db = ([int(i) % t.dim() for i in (d.tolist() if hasattr(d, "tolist") else d)] for d, t in zip(dims, (a, b)))
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(a.dim())]
    sb = [next(letters) for _ in range(b.dim())]
    if len(da) != len(db):
        raise Error(f"{op}: dims {dims} pair unequal numbers of dimensions")
    for i, j in zip(da, db):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in da] + [c for j, c in enumerate(sb) if j not in db]
    return contract(em, op, f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


def inner(em, input, other):
    a, b = input, other
    if a.dim() == 0 or b.dim() == 0:  # a product of each element, no sum: torch's own
        return a * b
    return tensordot(em, a, b, ([a.dim() - 1], [b.dim() - 1]), op="inner")
