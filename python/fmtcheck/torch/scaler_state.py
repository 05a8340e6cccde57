"""What a torch.amp.GradScaler decided in a step, read from the scaler itself (torch/amp/grad_scaler.py)."""

from __future__ import annotations

import torch


def scale_of(scaler) -> float:
    """The scale the step's backward ran with: GradScaler.get_scale() before update()."""
    return float(scaler.get_scale())


def found_inf(scaler) -> bool:
    """Whether unscale_ found an inf or NaN gradient this step: the found_inf_per_device flags that
    GradScaler.step reads (_maybe_opt_step skips optimizer.step when their sum is nonzero) and
    update() backs off on. Read before update(), which clears them."""
    states = scaler._per_optimizer_states.values()
    return any(bool(v.item()) for state in states for v in state.get("found_inf_per_device", {}).values())


def unscaled(grad: torch.Tensor, scale: float) -> torch.Tensor:
    """A gradient of the scaled loss divided by the scale as GradScaler.unscale_ does it: in float32,
    times inv_scale = scale.double().reciprocal().float() (exact for the powers of two GradScaler
    uses; inf and NaN stay inf and NaN)."""
    inv_scale = torch.tensor(scale, dtype=torch.float32).double().reciprocal().float()
    return grad.detach().float() * inv_scale


def settings_of(scaler) -> dict:
    """The scaler's knobs, as `fmtcheck scale --recipe gradscaler` names them."""
    return {"init_scale": float(scaler._init_scale), "growth_factor": float(scaler._growth_factor),
            "backoff_factor": float(scaler._backoff_factor), "growth_interval": int(scaler._growth_interval)}
