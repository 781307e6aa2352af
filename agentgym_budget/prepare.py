"""Preparing a split's tasks ahead of use: games generated, loaded and stored in the cache, in parallel.

The first episode of a task waits for its data: a TextWorld game is generated and compiled (about a
second for Coin Collector level 110), an ALFWorld game is generated and parsed into its stored form.
:func:`prepare_tasks` does that for many tasks beforehand, in worker processes, under a progress bar
(``agentgym-budget prepare``); the evaluation commands call it for the tasks they are about to play
before their episodes start.

* Resumable: a task already prepared is skipped (TextWorld's generated games: a look in the
  cache, nothing is loaded; other families, whose
  :meth:`~agentgym_budget.core.env.TextEnv.task_prepared` cannot tell: their
  :meth:`~agentgym_budget.core.env.TextEnv.prepare_task` finds the cache entries and returns quickly).
  An interrupted run keeps every task it finished. With ``known_only=True`` (what the runners use)
  only the tasks the family knows to be missing are prepared.
* Safe beside other users of the cache: entries are built under their entry locks
  (:func:`~agentgym_budget.storage.cache.cached_directory`), so a task being prepared here and played
  elsewhere at the same time is built once, and nobody sees it half-written.
* The result is the same cache content whatever the number of workers.

Example:
    >>> from agentgym_budget.runner.rollout import EnvRef
    >>> ref = EnvRef.parse("TextWorld-CoinCollector-v0", "level=1")
    >>> result = prepare_tasks(ref, select_tasks(ref, 1), workers=1, progress=False)
    >>> result.prepared + result.skipped
    1
    >>> prepare_tasks(ref, select_tasks(ref, 1), workers=1, progress=False).skipped
    1
    >>> select_tasks(ref, ["coin_l1_0"])
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: TextWorld-CoinCollector-v0(level=1) has no task 'coin_l1_0' in its 'train' split. Did you mean 'coin-l1-0'...?
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentgym_budget.errors import InvalidOptionError, did_you_mean
from agentgym_budget.runner.pool import Emit, run_jobs
from agentgym_budget.storage.cache import build_count

__all__ = ["prepare_tasks", "select_tasks"]

_CHUNK = 4
"""Tasks per job: small, so that workers share the slow tasks evenly."""

_ENVS = threading.local()
"""Each thread's envs, by reference (a worker process reuses them across its jobs)."""


@dataclass(frozen=True)
class PrepareResult:
    """What :func:`prepare_tasks` did.

    Attributes:
        prepared: Tasks prepared by this call (data generated, loaded or checked by the env).
        skipped: Tasks found already prepared (a look in the cache only).
        built: Cache entries built by this call (0 when everything was cached already).
        seconds: Wall-clock time.
    """

    prepared: int
    skipped: int
    built: int
    seconds: float


def select_tasks(ref: Any, tasks: int | Sequence[str] | None) -> tuple[str, ...]:
    """The tasks of ``ref``'s split to prepare: the first ``tasks``, the given ids, or all (``None``).

    Raises:
        InvalidOptionError: A count below 1, or an id not in the split (with a did-you-mean).
    """
    available = ref.task_ids()
    if tasks is None:
        return available
    if isinstance(tasks, int):
        if tasks < 1:
            raise InvalidOptionError(f"The number of tasks to prepare must be >= 1, got {tasks}.")
        return available[:tasks]
    known = set(available)
    for task in tasks:
        if task not in known:
            raise InvalidOptionError(
                f"{ref.label} has no task {task!r} in its {ref.split!r} split.{did_you_mean(task, available)}"
            )
    return tuple(tasks)


def _envs() -> dict[Any, Any]:
    if not hasattr(_ENVS, "by_ref"):
        _ENVS.by_ref = {}
    return _ENVS.by_ref


def _env(ref: Any) -> Any:
    envs = _envs()
    if ref not in envs:
        envs[ref] = ref.make_base()
    return envs[ref].unwrapped


def _prepare_job(job: tuple[Any, tuple[str, ...]], emit: Emit) -> None:
    ref, tasks = job
    env = _env(ref)
    for task in tasks:
        before = build_count()
        env.prepare_task(task)
        emit(build_count() - before)


def _close_envs() -> None:
    envs = _envs()
    while envs:
        envs.popitem()[1].close()


def prepare_tasks(
    ref: Any, tasks: Sequence[str], *, workers: int = 1, progress: bool = True, known_only: bool = False
) -> PrepareResult:
    """Prepare ``tasks`` of the env ``ref`` (an :class:`~agentgym_budget.runner.env_ref.EnvRef`); see the module docstring.

    Args:
        ref: The environment configuration (id, arguments, split).
        tasks: Task ids of its split (:func:`select_tasks`).
        workers: Worker processes (``1``: in this process).
        progress: Show a progress bar on stderr.
        known_only: Prepare only the tasks the env knows to be missing
            (:meth:`~agentgym_budget.core.env.TextEnv.task_prepared` is ``False``); the others count as skipped.

    Raises:
        InvalidOptionError: A task id not in the split (with a did-you-mean), or ``workers < 1``.
        GenerationError: A task's data could not be generated (in a worker: a ``WorkerError`` naming it).
    """
    from tqdm import tqdm

    began = time.perf_counter()
    if workers < 1:
        raise InvalidOptionError(f"workers must be >= 1, got {workers}.")
    tasks = select_tasks(ref, tuple(tasks))
    env, todo = _env(ref), []
    try:
        states = [(task, env.task_prepared(task)) for task in tasks]
        todo = [task for task, prepared in states if prepared is False or (prepared is None and not known_only)]
    finally:
        if workers > 1 or not todo:  # else the jobs run here, on this env, and close it when done
            _close_envs()
    built = [0]
    bar = tqdm(
        total=len(tasks),
        initial=len(tasks) - len(todo),
        desc=f"preparing {ref.label}",
        unit="task",
        disable=not progress or not todo,
        file=sys.stderr,
        dynamic_ncols=True,
    )

    def on_result(count: int) -> None:
        built[0] += count
        bar.update(1)

    chunk = max(1, min(_CHUNK, -(-len(todo) // workers)))
    jobs = [(ref, tuple(todo[start : start + chunk])) for start in range(0, len(todo), chunk)]
    try:
        run_jobs(_prepare_job, jobs, workers=workers, on_result=on_result, finalize=_close_envs)
    finally:
        bar.close()
    return PrepareResult(len(todo), len(tasks) - len(todo), built[0], round(time.perf_counter() - began, 3))
