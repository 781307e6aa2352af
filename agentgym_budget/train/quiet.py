"""Silencing what the training libraries print when progress output is off (``--no-progress``).

With ``disable_tqdm=True`` Hugging Face's ``Trainer`` swaps its progress bar for ``PrinterCallback``,
which prints every log dict; ``datasets`` draws a bar per ``map`` and ``filter``; ``transformers`` one
per model load and save. :func:`quiet_trainer` removes the printer and keeps the ``transformers`` /
``trl`` / ``datasets`` loggers to errors; :func:`quiet_progress` turns the libraries' bars, and the
FutureWarnings ``trl`` triggers in ``transformers``, off for a block and restores them after. Metrics still reach ``metrics.jsonl`` through the project's own callback.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__: list[str] = []

PROGRESS_VARIABLES = ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS")
"""Read by ``huggingface_hub`` (and so ``transformers``) and ``datasets`` when a process imports them."""


def quiet_trainer(trainer: Any) -> Any:
    """Remove ``trainer``'s per-step printing and keep the libraries' loggers to errors; returns ``trainer``."""
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)
    for name in ("transformers", "trl", "datasets"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return trainer


@contextmanager
def quiet_progress(quiet: bool = True) -> Iterator[None]:
    """Within the block (if ``quiet``), no progress bar from ``transformers`` or ``datasets``; restored after.

    Processes spawned in the block (evaluation workers) inherit it through :data:`PROGRESS_VARIABLES`.

    Example:
        >>> from transformers.utils import logging as hf_logging
        >>> with quiet_progress():
        ...     hf_logging.is_progress_bar_enabled()
        False
        >>> hf_logging.is_progress_bar_enabled()
        True
    """
    if not quiet:
        yield
        return
    try:  # both come with the trl extra; without them there is no bar to hide
        import datasets
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    bars_were_on, map_bars_were_on = hf_logging.is_progress_bar_enabled(), not datasets.are_progress_bars_disabled()
    environment = {name: os.environ.get(name) for name in PROGRESS_VARIABLES}
    os.environ.update(dict.fromkeys(PROGRESS_VARIABLES, "1"))  # worker processes spawned in the block
    hf_logging.disable_progress_bar()
    datasets.disable_progress_bars()
    try:
        with warnings.catch_warnings():  # the libraries' deprecation notices to each other (trl -> transformers)
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"transformers\.")
            yield
    finally:
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if bars_were_on:
            hf_logging.enable_progress_bar()
        if map_bars_were_on:
            datasets.enable_progress_bars()
