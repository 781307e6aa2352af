"""The Ray executor of :func:`~agentgym_budget.runner.pool.run_jobs`: jobs played by Ray actors, results streamed back.

:class:`RayBackend` (``--backend ray [--ray-address ADDR]``) has the contract of the local process
pool (:mod:`~agentgym_budget.runner.pool`), so every evaluation command runs on it unchanged and gives
the same records for the same seed:

* ``workers`` actors (one CPU each) are started on the cluster (:mod:`~agentgym_budget.runner.ray_cluster`
  says which cluster, and how the workers import this package). Each actor is one worker: it takes
  the next job when it is free, keeps its per-process resources (pooled env stacks) across its jobs,
  and runs ``finalize`` after the last one. An actor the cluster has no room for simply never takes
  a job.
* A job runs as a streaming generator: every result ``fn`` emits travels back at once and is handed
  to ``on_result`` in this process (the driver), which logs it (:func:`~agentgym_budget.runner.pool.run_logged_jobs`):
  the log is written incrementally by the driver, and a rerun plays only what is missing.
* A job that raises stops the run with :class:`~agentgym_budget.errors.WorkerError` naming the job and
  the remote traceback; an actor that dies (killed, out of memory, a package that does not import)
  is reported the same way. Results delivered before are kept.
* On Ctrl-C (or any exception in the driver) every actor is killed, which cancels its running job.

Example (not a doctest: it starts a local cluster, ~15 s; ``tests/test_ray_backend.py`` runs it)::

    from agentgym_budget.eval.passkt.config import PassKTConfig

    from agentgym_budget.eval.passkt.plan import run_passkt
    from agentgym_budget.runner.ray_executor import RayBackend
    from agentgym_budget.runner.env_ref import EnvRef

    config = PassKTConfig(EnvRef.parse("TextWorld-CoinCollector-v0", "level=3"), ["random"], ks=(1,), budgets=(5,))
    run_passkt(config, "runs/coin", backend=RayBackend())  # same records as run_passkt(config, "runs/coin")
"""

from __future__ import annotations

import queue
import re
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from agentgym_budget.errors import WorkerError
from agentgym_budget.runner.jobs import Deliver, Finalize, Work
from agentgym_budget.runner.ray_cluster import ray_connection

__all__ = ["RayBackend"]


_POLL_SECONDS = 0.5
_FINALIZE_SECONDS = 120.0
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_END = ("__agentgym_budget_end_of_job__",)


class RayWorker:
    """One worker of a :class:`RayBackend` run, as a Ray actor (the class is wrapped by ``ray.remote`` lazily).

    Jobs and ``finalize`` run one at a time on one thread of the actor (so per-process resources
    are made and closed on the same thread); :meth:`run` streams what the job emits.
    """

    def __init__(self, fn: Work, finalize: Finalize) -> None:
        self._fn = fn
        self._finalize = finalize
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentgym-budget-job")

    def run(self, job: Any) -> Iterator[Any]:
        """Run ``fn(job, emit)``, yielding every emitted result as it comes; re-raise what the job raised."""
        results: queue.SimpleQueue[Any] = queue.SimpleQueue()

        def play() -> None:
            try:
                self._fn(job, results.put)
            finally:
                results.put(_END)

        done = self._thread.submit(play)
        while (item := results.get()) is not _END:
            yield item
        done.result()

    def finalize(self) -> None:
        """Run ``finalize`` (after the last job)."""
        if self._finalize is not None:
            self._thread.submit(self._finalize).result()


def _describe(job: Any) -> str:
    describe = getattr(job, "describe", None)
    return describe() if callable(describe) else repr(job)[:200]


def _cause(err: BaseException) -> str:
    """The remote error without Ray's terminal colours."""
    return _ANSI.sub("", str(err)).strip()


@dataclass(frozen=True)
class RayBackend:
    """Run :func:`~agentgym_budget.runner.pool.run_jobs` on a Ray cluster (see the module docstring).

    Attributes:
        address: Cluster address (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``); ``None``: start
            a local cluster for the run (or use ``$RAY_ADDRESS``). When this process is already
            connected (``ray.init`` called before), that connection is used.
        ship_package: Ship this package's directory to the workers (``None``: only to an existing
            cluster; see :mod:`~agentgym_budget.runner.ray_cluster`).
        num_cpus: CPUs each worker actor reserves.
        runtime_env: The job's Ray runtime environment (e.g. ``{"env_vars": {...}}``).
        init_options: Further ``ray.init`` arguments (e.g. ``{"num_cpus": 2}`` for a local cluster).
    """

    address: str | None = None
    ship_package: bool | None = None
    num_cpus: float = 1.0
    runtime_env: Mapping[str, Any] | None = None
    init_options: Mapping[str, Any] | None = None

    def describe(self) -> str:
        """Where the jobs run, for the commands' headers.

        Example:
            >>> RayBackend().describe(), RayBackend("auto").describe()
            ('Ray actors on a local cluster', "Ray actors on the cluster at 'auto'")
        """
        return (
            "Ray actors on a local cluster"
            if self.address is None
            else f"Ray actors on the cluster at {self.address!r}"
        )

    def run(self, fn: Work, jobs: Sequence[Any], *, workers: int, on_result: Deliver, finalize: Finalize) -> None:
        """Run ``fn(job, emit)`` for every job in ``workers`` Ray actors; see the module docstring.

        Raises:
            WorkerError: A job raised, or an actor died or could not start.
            MissingDependencyError: Ray is not installed.
            RunConfigError: The cluster cannot be reached.
        """
        if not jobs:
            return
        with ray_connection(
            self.address, ship_package=self.ship_package, runtime_env=self.runtime_env, init_options=self.init_options
        ) as ray:
            _Run(ray, self, fn, finalize, list(jobs), max(1, workers), on_result).play()


class _Run:
    """One :meth:`RayBackend.run`: the actors, the jobs handed out, the streams being read."""

    def __init__(
        self,
        ray: Any,
        backend: RayBackend,
        fn: Work,
        finalize: Finalize,
        jobs: list[Any],
        workers: int,
        on_result: Deliver,
    ) -> None:
        self.ray, self.jobs, self.on_result = ray, jobs, on_result
        actor_class = ray.remote(RayWorker).options(num_cpus=backend.num_cpus, max_restarts=0)
        self.actors = [actor_class.remote(fn, finalize) for _ in range(min(workers, len(jobs)))]
        self.starting = {actor.__ray_ready__.remote(): actor for actor in self.actors}
        self.streams: dict[Any, tuple[Any, int]] = {}
        self.idle: list[Any] = []
        self.next_job = 0

    def play(self) -> None:
        try:
            pending = len(self.jobs)
            while pending:
                ready, _ = self.ray.wait([*self.starting, *self.streams], num_returns=1, timeout=_POLL_SECONDS)
                for item in ready:
                    if item in self.starting:
                        self._started(self.starting.pop(item), item)
                    elif self._read(item):
                        pending -= 1
            self._finalize()
        finally:
            for actor in self.actors:
                self.ray.kill(actor, no_restart=True)

    def _started(self, actor: Any, ready: Any) -> None:
        try:
            self.ray.get(ready)
        except self.ray.exceptions.RayError as err:
            raise WorkerError(
                "A Ray worker actor could not start; results delivered so far were kept. If the cause is that "
                "agentgym_budget cannot be imported, install it on the cluster's nodes or ship it "
                f"(RayBackend(ship_package=True)). Cause: {_cause(err)}"
            ) from None
        self._assign(actor)

    def _assign(self, actor: Any) -> None:
        if self.next_job >= len(self.jobs):
            self.idle.append(actor)
            return
        index, self.next_job = self.next_job, self.next_job + 1
        self.streams[actor.run.remote(self.jobs[index])] = (actor, index)

    def _read(self, stream: Any) -> bool:
        """Deliver the next result of ``stream``; ``True`` when its job is done."""
        actor, index = self.streams.pop(stream)
        try:
            ref = next(stream)
        except StopIteration:
            self._assign(actor)
            return True
        try:
            result = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as err:
            raise WorkerError(
                f"Job {_describe(self.jobs[index])} failed in a Ray worker; results delivered so far were kept. "
                f"Cause: {_cause(err)}"
            ) from None
        except self.ray.exceptions.RayError as err:
            raise WorkerError(
                f"The Ray worker playing job {_describe(self.jobs[index])} died ({type(err).__name__}); results "
                f"delivered so far were kept. Rerun the same command to resume. Cause: {_cause(err)}"
            ) from None
        self.on_result(result)
        self.streams[stream] = (actor, index)
        return False

    def _finalize(self) -> None:
        started = [*self.idle, *(actor for actor, _ in self.streams.values())]
        try:
            self.ray.get([actor.finalize.remote() for actor in started], timeout=_FINALIZE_SECONDS)
        except self.ray.exceptions.RayError as err:
            raise WorkerError(
                f"Every job finished, but releasing a Ray worker's resources failed. Cause: {_cause(err)}"
            ) from None
