"""What a job executor runs: the job function, its callbacks, and the protocol every executor follows.

:func:`~agentgym_budget.runner.pool.run_jobs` runs ``fn(job, emit)`` for every job in local worker processes;
any other executor (:class:`~agentgym_budget.runner.ray_executor.RayBackend`) implements :class:`JobBackend`
with the same contract. Both import these names from here, so neither imports the other's module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

__all__: list[str] = []

Emit = Callable[[Any], None]
"""Callback a job function calls with each finished result."""

Work = Callable[[Any, Emit], None]
"""A job function: ``fn(job, emit)`` plays one job and emits its results."""

Deliver = Callable[[Any], None]
"""Where the driver receives each result (``on_result``)."""

Finalize = Callable[[], None] | None
"""Run once in every worker when it stops (closes the worker's shared resources), or ``None``."""


@runtime_checkable
class JobBackend(Protocol):
    """An executor of :func:`run_jobs` other than the local one (see the module docstring for its contract)."""

    def run(self, fn: Work, jobs: Sequence[Any], *, workers: int, on_result: Deliver, finalize: Finalize) -> None:
        """Run ``fn(job, emit)`` for every job with ``workers`` workers, delivering results to ``on_result``."""
