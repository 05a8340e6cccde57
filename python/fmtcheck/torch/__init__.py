"""fmtcheck inside PyTorch: what each format does to a model, and a training run watched as it goes.

- ``analyze(obj, formats=...)``: an nn.Module's parameters and gradients, a state_dict, a dict of
  tensors or a tensor, as fmtcheck.analyze measures arrays (the same Analysis and verdict).
- ``Recorder(model, out_dir, scaler=...)``: a context manager that records a training run (weights,
  gradients, activations per module; the real GradScaler's decisions) as a trace `fmtcheck scale`
  and `fmtcheck analyze` read, and ends with the verdict per format.
- ``TrainerCallback(out_dir)``: the Recorder inside Hugging Face ``Trainer.train()``.
- ``emulate(recipe=..., gpu=..., model=...)``: a context manager that computes the model's GEMMs as a
  recipe of `fmtcheck train` on a GPU's tensor cores would, bit for bit, and counts what each cast did;
  ``cross_entropy``, ``softmax``, ``layer_norm``: train's float32 ops in a fixed order, exp and log
  correctly rounded (the same bits on every machine).
- ``Optimizer(params, recipe=...)``: train's SGD or Adam, under the pure recipes on weights stored in
  bf16/fp16 (nearest, stochastic or Kahan updates).

Imported only with torch installed (``pip install fmtcheck[torch]``). Bad input raises ``Error``.
"""

from .analyze import analyze
from .emulate import emulate
from .errors import Error
from .exact_ops import cross_entropy, layer_norm, softmax
from .optimizer import Optimizer
from .recorder import Recorder

__all__ = ["Error", "Optimizer", "Recorder", "TrainerCallback", "analyze", "cross_entropy", "emulate", "layer_norm",
           "softmax"]


def __getattr__(name: str):
    # transformers is imported only when the callback is asked for.
    if name == "TrainerCallback":
        from .trainer_callback import TrainerCallback

        return TrainerCallback
    raise AttributeError(f"module 'fmtcheck.torch' has no attribute {name!r}")
