"""Keeping the model libraries' progress bars off while a run's own progress output is off (``--no-progress``).

``transformers`` draws a bar per model load and save, ``datasets`` one per ``map`` and ``filter``, and
``huggingface_hub`` decides for both from ``HF_HUB_DISABLE_PROGRESS_BARS`` when it is imported.
:func:`quiet_progress` turns them off for a block, in this process and in the worker processes the
block spawns, and restores them after. It never imports a library itself: a run of scripted agents
stays as light as it was.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__: list[str] = []

PROGRESS_VARIABLES = ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS")
"""Read by ``huggingface_hub`` (and so ``transformers``) and ``datasets`` when a process imports them."""

READ_AT_IMPORT = {
    "HF_HUB_DISABLE_PROGRESS_BARS": ("huggingface_hub.constants", "huggingface_hub.utils.tqdm"),
    "HF_DATASETS_DISABLE_PROGRESS_BARS": ("datasets.config", "datasets.utils.tqdm"),
}
"""The modules that keep each variable's value, read once at import, under the variable's own name: one first
imported inside the block would keep the block's "off" for good (and warn at every attempt to turn bars on)."""

_TRUE = ("1", "ON", "YES", "TRUE")


def _switches() -> dict[str, tuple[Any, Any, Any]]:
    """``(is_on, turn_off, turn_on)`` of each bar-drawing library this process has imported.

    ``huggingface_hub`` has its own: imported before the block, it read the variable already, and a
    ``transformers`` first imported inside the block takes its setting from it.
    """
    found = {}
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        found["transformers"] = (
            hf_logging.is_progress_bar_enabled,
            hf_logging.disable_progress_bar,
            hf_logging.enable_progress_bar,
        )
    if "huggingface_hub.utils.tqdm" in sys.modules:  # after transformers, whose switch flips the hub's too
        from huggingface_hub import utils as hub

        found["huggingface_hub"] = (
            lambda: not hub.are_progress_bars_disabled(),
            hub.disable_progress_bars,
            hub.enable_progress_bars,
        )
    if "datasets" in sys.modules:
        import datasets

        found["datasets"] = (
            lambda: not datasets.are_progress_bars_disabled(),
            datasets.disable_progress_bars,
            datasets.enable_progress_bars,
        )
    return found


def _forget_the_blocks_setting(imported_before: set[str], environment: dict[str, str | None]) -> None:
    """Give modules first imported inside the block the value their variable had outside it."""
    for variable, modules in READ_AT_IMPORT.items():
        outside = environment[variable]
        setting = None if outside is None else outside.upper() in _TRUE
        for name in modules:
            module = sys.modules.get(name)
            if module is not None and name not in imported_before and hasattr(module, variable):
                setattr(module, variable, setting)


@contextmanager
def quiet_progress(quiet: bool = True) -> Iterator[None]:
    """Within the block (if ``quiet``), no progress bar from ``transformers`` or ``datasets``; restored after.

    Either way the block hides the FutureWarnings ``trl`` triggers in ``transformers`` (a deprecation
    between the two libraries that a user of this one cannot act on).

    Processes spawned in the block (evaluation workers) inherit it through :data:`PROGRESS_VARIABLES`;
    a library first imported inside the block gets its bars back after it (:data:`READ_AT_IMPORT`)
    unless the environment turned them off before the block.

    Example:
        >>> from transformers.utils import logging as hf_logging
        >>> with quiet_progress():
        ...     hf_logging.is_progress_bar_enabled()
        False
        >>> hf_logging.is_progress_bar_enabled()
        True
    """
    with warnings.catch_warnings():  # the libraries' deprecation notices to each other (trl -> transformers)
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"transformers\.")
        if quiet:
            with _bars_off():
                yield
        else:
            yield


@contextmanager
def _bars_off() -> Iterator[None]:
    """The libraries' bars off for the block, here and in processes it spawns; as they were after it."""
    environment = {name: os.environ.get(name) for name in PROGRESS_VARIABLES}
    bars_on_outside = not any(value and value.upper() in _TRUE for value in environment.values())
    imported_before = set(sys.modules)
    were_on = {name: switch[0]() for name, switch in _switches().items()}
    os.environ.update(dict.fromkeys(PROGRESS_VARIABLES, "1"))
    for _, turn_off, _ in _switches().values():
        turn_off()
    try:
        yield
    finally:
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _forget_the_blocks_setting(imported_before, environment)
        for name, (_, turn_off, turn_on) in _switches().items():  # in order: the hub's own state is set last
            (turn_on if were_on.get(name, bars_on_outside) else turn_off)()
