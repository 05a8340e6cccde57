"""An fp16 overflow born between two GEMMs, and where emulate's report finds it: a hand-written RMS norm
squares its input in the input's dtype, fp16 on the GPU under autocast.

    PYTHONPATH=build/python .venv/bin/python docs/examples/overflow_between_gemms.py"""

import torch
import fmtcheck.torch


class RMSNorm(torch.nn.Module):
    """An RMS norm as often written by hand: x * x in the input's dtype."""

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6)


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), RMSNorm(), torch.nn.Linear(256, 10))
x = torch.randn(32, 64) * 300
reference = model(x)
for recipe in ("fp16", "bf16"):
    with fmtcheck.torch.emulate(recipe, "hopper", model=model) as em:
        out = model(x)
    print(em.report())
    off = ((out - reference).norm(dim=-1) > 0.1 * reference.norm(dim=-1)).sum()
    print(f"{recipe}: {int(off)} of 32 rows of the output more than 10% from float32's\n")
