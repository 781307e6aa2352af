"""Silencing what the training libraries print when progress output is off (``--no-progress``).

With ``disable_tqdm=True`` Hugging Face's ``Trainer`` swaps its progress bar for ``PrinterCallback``,
which prints every log dict; ``datasets`` draws a bar per ``map`` and ``filter``; ``transformers`` one
per model load and save. :func:`quiet_trainer` removes the printer and keeps the ``transformers`` /
``trl`` / ``datasets`` loggers to errors; :func:`~agentgym_budget.runner.quiet.quiet_progress` turns the
libraries' bars, and the FutureWarnings ``trl`` triggers in ``transformers``, off for a block and restores
them after. Metrics still reach ``metrics.jsonl`` through the project's own callback.

With progress output on, :func:`bar_only` keeps the ``Trainer``'s progress bar but stops it writing every
log dict under the bar (``{'loss': '0', 'grad_norm': ...}``): those belong in ``metrics.jsonl``, not on the
terminal.
"""

from __future__ import annotations

import logging
from typing import Any

__all__: list[str] = []


def quiet_trainer(trainer: Any) -> Any:
    """Remove ``trainer``'s per-step printing and keep the libraries' loggers to errors; returns ``trainer``."""
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)
    for name in ("transformers", "trl", "datasets"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return trainer


def bar_only(trainer: Any) -> Any:
    """Keep ``trainer``'s progress bar but not its printing of every log dict; returns ``trainer``."""
    from transformers.trainer_callback import ProgressCallback

    class ProgressBarOnly(ProgressCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            """Logs go to ``metrics.jsonl`` (the project's callback), not under the bar."""

    if any(type(callback) is ProgressCallback for callback in trainer.callback_handler.callbacks):
        trainer.remove_callback(ProgressCallback)
        trainer.add_callback(ProgressBarOnly)
    return trainer
