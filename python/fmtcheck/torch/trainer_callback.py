"""fmtcheck.torch.TrainerCallback: the Recorder inside Hugging Face ``Trainer.train()``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import transformers

from .recorder import Recorder

logger = transformers.utils.logging.get_logger("fmtcheck")


class TrainerCallback(transformers.TrainerCallback):
    """Records a ``Trainer.train()`` run with a Recorder::

        trainer = Trainer(model, TrainingArguments(..., fp16=True), callbacks=[fmtcheck.torch.TrainerCallback()])

    The trace goes to `out_dir` (default: the run's output_dir/fmtcheck); with fp16 the Trainer's
    GradScaler (accelerate's) is watched, so scaler.csv holds its real decisions. At the end of
    training the verdict is logged (logger "fmtcheck", level info), printed by the main process and
    written to out_dir/verdict.txt. The other arguments are the Recorder's: ``emulate=em`` with
    ``trainer.train()`` run inside ``with fmtcheck.torch.emulate(recipe, gpu, model=trainer.model) as
    em`` records the emulated run (an fp16 or bf16 Trainer's autocast is taken as the recipe's).
    """

    def __init__(self, out_dir: Optional[str] = None, every: int = 1,
                 record: Sequence[str] = ("grad", "activation", "weight"), formats: str = "fp16,bf16,e4m3,e5m2",
                 **recorder_options: Any):
        self.out_dir, self.every, self.record, self.formats = out_dir, every, record, formats
        self.options = recorder_options
        self.recorder: Optional[Recorder] = None

    def on_train_begin(self, args, state, control, model=None, optimizer=None, **kwargs):
        # accelerate's AcceleratedOptimizer holds the GradScaler when fp16 is on, and calls its
        # update() once per optimizer step: the Recorder ends its steps there.
        scaler = getattr(optimizer, "scaler", None)
        out_dir = self.out_dir or str(Path(args.output_dir) / "fmtcheck")
        self.recorder = Recorder(model, out_dir, every=self.every, record=self.record, scaler=scaler,
                                 formats=self.formats, verbose=state.is_world_process_zero, **self.options)
        self.recorder.start()

    def on_optimizer_step(self, args, state, control, **kwargs):
        # Without a scaler a step ends here: after the optimizer's step, before the Trainer zeroes the
        # gradients (at on_step_end they are gone).
        if self.recorder is not None and self.recorder.scaler is None:
            self.recorder.step()

    def on_train_end(self, args, state, control, **kwargs):
        if self.recorder is None:
            return
        self.recorder.close()
        logger.info(self.recorder.report())
