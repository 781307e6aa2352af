"""Silencing what the training libraries print per step when progress output is off (``--no-progress``).

With ``disable_tqdm=True`` Hugging Face's ``Trainer`` swaps its progress bar for ``PrinterCallback``,
which prints every log dict; ``datasets`` draws a bar per ``map``. :func:`quiet_trainer` removes
the printer, turns the ``datasets`` bars off and keeps ``transformers`` / ``trl`` loggers to errors.
Metrics still reach ``metrics.jsonl`` through the project's own callback.
"""

from __future__ import annotations

import logging
from typing import Any

__all__: list[str] = []


def quiet_trainer(trainer: Any) -> Any:
    """Remove ``trainer``'s per-step printing and the libraries' progress bars; returns ``trainer``."""
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)
    try:
        import datasets

        datasets.disable_progress_bars()
    except ImportError:  # datasets comes with trl; without it there is no bar to hide
        pass
    for name in ("transformers", "trl", "datasets"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return trainer
