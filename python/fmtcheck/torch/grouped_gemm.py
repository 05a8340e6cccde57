"""torch._grouped_mm (what F.grouped_mm calls: mixture-of-experts layers, each expert's tokens times
its own weight) for fmtcheck.torch.emulate. Each group's product is a layer GEMM of the recipe, with
casts (and FP8 scales) of its own, named path.grouped_mm.groupG, as a grouped GEMM runs one GEMM per
expert. The forms a forward pass takes: A (tokens, K) sorted by group with `offs` (each group's
cumulative end row) and B (groups, K, N); or A (groups, M, K) and B (groups, K, N). Rows of A past
the last offset give zeros (torch leaves them unwritten). Two matrices split along K (the form of a
weight gradient) are Unsupported: emulate's backward is the layer GEMMs' own."""

from __future__ import annotations

import torch

from .errors import Error
from .unsupported import Unsupported

OP = "grouped_mm"


def grouped_mm(em, mat_a, mat_b, offs=None, bias=None, out_dtype=None):
    em._check(OP, mat_a, mat_b, bias)
    if out_dtype not in (None, torch.float32):
        raise Unsupported(f"{OP} into {out_dtype}: emulate computes float32")
    if mat_b.dim() != 3 or mat_a.dim() not in (2, 3):
        raise Unsupported(f"{OP} of {mat_a.dim()}-D and {mat_b.dim()}-D operands: emulate takes B as groups x K x N")
    groups, k, n = mat_b.shape
    if mat_a.shape[-1] != k or (bias is not None and tuple(bias.shape) != (groups, n)):
        raise Error(f"{OP} of A {tuple(mat_a.shape)}, B {tuple(mat_b.shape)} and bias "
                    f"{None if bias is None else tuple(bias.shape)}: expected K = {k} and a bias of {groups} x {n}")

    def gemm(g, rows):
        return em.layer_gemm(f"{OP}.group{g}", rows, mat_b[g].t(), None if bias is None else bias[g])

    if mat_a.dim() == 3:
        if offs is not None or mat_a.shape[0] != groups:
            raise Error(f"{OP} of A {tuple(mat_a.shape)} and B {tuple(mat_b.shape)}: 3-D operands take one "
                        f"group each and no offs")
        return torch.stack([gemm(g, mat_a[g]) for g in range(groups)])
    ends = [int(e) for e in offs.tolist()] if offs is not None and offs.dim() == 1 else None
    if ends is None or len(ends) != groups or any(b < a for a, b in zip([0] + ends, ends)) or \
            ends[-1] > mat_a.shape[0]:
        raise Error(f"{OP} of A {tuple(mat_a.shape)}: offs must hold {groups} nondecreasing end rows "
                    f"within A, not {None if offs is None else offs.tolist()}")
    parts, start = [], 0
    for g, end in enumerate(ends):
        if end > start:  # an expert without tokens runs no GEMM
            parts.append(gemm(g, mat_a[start:end]))
        start = end
    parts.append(mat_a.new_zeros(mat_a.shape[0] - start, n))
    return torch.cat(parts)
