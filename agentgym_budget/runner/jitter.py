"""Injected scheduling delays, to test that results do not depend on how workers interleave.

With the environment variable ``AGENTGYM_BUDGET_INJECT_DELAYS`` set to a number of seconds ``d``
(e.g. ``0.05``), every job of :func:`~agentgym_budget.runner.pool.run_jobs` sleeps a random time in
``[0, d]`` before it starts and before each result it emits, in the worker processes and in the
calling process alike. The delays come from the operating system's randomness, not from any seed of
the run, so two runs interleave their episodes differently; a run's records and summaries must not
change. Unset or ``0`` (the default): no delay, nothing is drawn.

Example:
    >>> import os
    >>> os.environ.pop(INJECT_DELAYS_ENV, None) and None
    >>> injected_delay()
    0.0
    >>> os.environ[INJECT_DELAYS_ENV] = "0.001"
    >>> 0.0 <= injected_delay() <= 0.001
    True
    >>> del os.environ[INJECT_DELAYS_ENV]
"""

from __future__ import annotations

import os
import random
import time

from agentgym_budget.errors import InvalidOptionError

__all__: list[str] = []

INJECT_DELAYS_ENV = "AGENTGYM_BUDGET_INJECT_DELAYS"
"""Environment variable: the largest injected delay in seconds (unset or 0: none)."""

_SYSTEM = random.SystemRandom()


def max_delay() -> float:
    """The largest delay asked for by :data:`INJECT_DELAYS_ENV` (0.0 when unset).

    Raises:
        InvalidOptionError: The variable is not a non-negative number of seconds.
    """
    text = os.environ.get(INJECT_DELAYS_ENV, "").strip()
    if not text:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise InvalidOptionError(f"{INJECT_DELAYS_ENV} must be a number of seconds >= 0, got {text!r}.")
    return value


def injected_delay() -> float:
    """Sleep a random time up to :func:`max_delay` (none when it is 0); returns the time slept."""
    limit = max_delay()
    if limit <= 0:
        return 0.0
    seconds = _SYSTEM.uniform(0.0, limit)
    time.sleep(seconds)
    return seconds
