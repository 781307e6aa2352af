"""Running jobs in parallel worker processes and streaming their results back as they are made.

:func:`run_jobs` is the execution engine of every evaluation command. A *job* is any picklable
object and ``fn(job, emit)`` a module-level function that does the work, calling ``emit(result)``
for each finished result (e.g. one episode); the parent process receives every result as soon as it
is emitted and hands it to ``on_result`` (which, in the evaluation commands, appends it to the
JSONL log at once). So results are saved one by one, not per job, and a killed run loses only the
results that were still being computed.

With ``workers <= 1`` the jobs run in the calling process (no pickling, easy debugging). Otherwise
``workers`` processes are started with the ``spawn`` method; each takes the next job when it is
free. If a job raises, the run stops: the other workers are terminated and
:class:`~agentgym_budget.errors.WorkerError` says which job failed and why (results already emitted
were delivered). A worker that dies without a word (killed, out of memory) is reported the same way.
Workers ignore ``SIGINT``; on Ctrl-C the parent terminates them. Workers end by themselves as soon
as the parent process dies, even by ``kill -9`` (:func:`~agentgym_budget.runner.parent_watch.exit_with_parent`).

``AGENTGYM_BUDGET_INJECT_DELAYS=SECONDS`` makes every job sleep random times before it starts and
before each result (:mod:`~agentgym_budget.runner.jitter`): a test that results do not depend on
how the workers interleave.

``finalize`` (module-level, optional) runs in each worker after its last job, and in the calling
process after the jobs when ``workers <= 1``, to release per-process resources. When every job is done,
workers get 30 seconds to finish it and exit by themselves before they are terminated.

:func:`run_jobs` only dispatches to an executor: ``_run_here`` (in this process) or
``_run_in_processes`` (spawned worker processes). Another executor (e.g. a cluster backend) has the
same contract: run ``fn(job, emit)`` for every job, hand every emitted result to ``on_result`` in
the calling process as soon as it arrives, run ``finalize`` once per worker, and raise
:class:`~agentgym_budget.errors.WorkerError` naming the failed job. Such an executor is a
:class:`JobBackend` passed as ``backend=``: :class:`~agentgym_budget.runner.ray_executor.RayBackend`
runs the jobs in Ray actors (``--backend ray``); :func:`make_backend` builds one from the command-line
flags.

:func:`run_logged_jobs` is :func:`run_jobs` as the evaluation commands use it: every result is
appended to a :class:`~agentgym_budget.runner.store.JsonlStore` at once, under a progress bar.

Example:
    >>> results = []
    >>> run_jobs(_demo_job, [1, 2, 3], workers=1, on_result=results.append)
    >>> results
    [1, 1, 2, 2, 3, 3]
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentgym_budget.errors import InvalidOptionError, WorkerError, did_you_mean
from agentgym_budget.runner.jitter import injected_delay
from agentgym_budget.runner.jobs import Deliver, Emit, Finalize, JobBackend, Work
from agentgym_budget.runner.parent_watch import exit_with_parent
from agentgym_budget.runner.quiet import quiet_progress

if TYPE_CHECKING:
    from agentgym_budget.runner.store import JsonlStore

__all__ = ["Emit", "make_backend", "run_jobs"]

BACKENDS = ("local", "ray")
"""Executors of :func:`make_backend`: ``local`` (this machine's processes) and ``ray`` (a Ray cluster)."""


def make_backend(name: str = "local", *, ray_address: str | None = None) -> JobBackend | None:
    """The executor named ``name``: ``None`` for ``local`` (the process pool), a ``RayBackend`` for ``ray``.

    Nothing is imported from Ray here; that happens when the backend runs.

    Raises:
        InvalidOptionError: An unknown name, or a Ray address without the Ray backend.

    Example:
        >>> make_backend("local") is None
        True
        >>> make_backend("ray", ray_address="ray://head:10001")
        RayBackend(address='ray://head:10001', ship_package=None, num_cpus=1.0, runtime_env=None, init_options=None)
        >>> make_backend("rya")
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: Unknown backend 'rya'. Did you mean 'ray'? Expected one of: local, ray.
    """
    if name not in BACKENDS:
        raise InvalidOptionError(
            f"Unknown backend {name!r}.{did_you_mean(str(name), BACKENDS)} Expected one of: {', '.join(BACKENDS)}."
        )
    if name == "local":
        if ray_address is not None:
            raise InvalidOptionError(
                f"A Ray address ({ray_address!r}) was given for the local backend; add --backend ray "
                "(backend='ray') to run on that cluster, or drop the address."
            )
        return None
    from agentgym_budget.runner.ray_executor import RayBackend

    return RayBackend(address=ray_address)


_POLL_SECONDS = 0.5
_FINALIZE_GRACE_SECONDS = 30.0


def _demo_job(job: int, emit: Emit) -> None:
    emit(job)
    emit(job)


def _worker_main(fn: Work, finalize: Finalize, jobs: Any, results: Any, parent: int) -> None:
    exit_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        while True:
            item = jobs.get()
            if item is None:
                return
            index, job = item
            try:
                injected_delay()
                fn(job, lambda result, _index=index: _delayed(results.put)(("result", _index, result)))
            except BaseException as err:
                results.put(("error", index, f"{type(err).__name__}: {err}\n{traceback.format_exc()}"))
                return
            results.put(("done", index, None))
    finally:
        if finalize is not None:
            finalize()


def _delayed(deliver: Callable[[Any], None]) -> Callable[[Any], None]:
    """``deliver`` after an injected delay (:mod:`~agentgym_budget.runner.jitter`; none unless asked for)."""

    def emit(result: Any) -> None:
        injected_delay()
        deliver(result)

    return emit


def _describe(job: Any) -> str:
    describe = getattr(job, "describe", None)
    return describe() if callable(describe) else repr(job)[:200]


def run_jobs(
    fn: Work,
    jobs: Sequence[Any],
    *,
    workers: int,
    on_result: Deliver,
    finalize: Finalize = None,
    backend: JobBackend | None = None,
) -> None:
    """Run ``fn(job, emit)`` for every job, in ``workers`` processes; see the module docstring.

    Args:
        fn: Module-level job function.
        jobs: Picklable jobs (a job's ``describe()``, if it has one, names it in errors).
        workers: Number of worker processes (``<= 1``: run here), or of the backend's workers.
        on_result: Called in this process with every emitted result, in arrival order.
        finalize: Module-level function run once per worker after its last job.
        backend: Another executor (e.g. :class:`~agentgym_budget.runner.ray_executor.RayBackend`);
            ``None``: this machine's processes.

    Raises:
        WorkerError: A job raised in a worker process, or a worker died.
    """
    if not jobs:
        return
    if backend is not None:
        backend.run(fn, jobs, workers=workers, on_result=on_result, finalize=finalize)
    elif workers <= 1:
        _run_here(fn, jobs, on_result, finalize)
    else:
        _run_in_processes(fn, jobs, workers, on_result, finalize)


def _run_here(fn: Work, jobs: Sequence[Any], on_result: Deliver, finalize: Finalize) -> None:
    try:
        for job in jobs:
            injected_delay()
            fn(job, _delayed(on_result))
    finally:
        if finalize is not None:
            finalize()


def _run_in_processes(fn: Work, jobs: Sequence[Any], workers: int, on_result: Deliver, finalize: Finalize) -> None:
    context = multiprocessing.get_context("spawn")
    job_queue, result_queue = context.Queue(), context.Queue()
    for index, job in enumerate(jobs):
        job_queue.put((index, job))
    count = min(workers, len(jobs))
    for _ in range(count):
        job_queue.put(None)
    processes = [
        context.Process(target=_worker_main, args=(fn, finalize, job_queue, result_queue, os.getpid()), daemon=True)
        for _ in range(count)
    ]
    for process in processes:
        process.start()
    pending, finished = len(jobs), False
    try:
        while pending:
            try:
                kind, index, payload = result_queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                dead = [p for p in processes if p.exitcode not in (None, 0)]
                if dead:
                    raise WorkerError(
                        f"A worker process died (exit code {dead[0].exitcode}) with {pending} job(s) unfinished; "
                        "results delivered so far were kept. Rerun the same command to resume."
                    ) from None
                if all(p.exitcode is not None for p in processes) and result_queue.empty():
                    raise WorkerError(f"All workers exited with {pending} job(s) unfinished.") from None
                continue
            if kind == "result":
                on_result(payload)
            elif kind == "done":
                pending -= 1
            else:
                raise WorkerError(
                    f"Job {_describe(jobs[index])} failed in a worker process; results delivered so far were "
                    f"kept. Cause: {payload}"
                )
        finished = True
    finally:
        _stop_workers(processes, grace=_FINALIZE_GRACE_SECONDS if finished else 0.0)
        job_queue.close()
        result_queue.close()
        job_queue.cancel_join_thread()
        result_queue.cancel_join_thread()


def _stop_workers(processes: Sequence[Any], grace: float) -> None:
    """Give workers ``grace`` seconds to run ``finalize`` and exit, then terminate the rest.

    After every job is done the workers are only releasing resources; a terminated worker skips that and
    its exit handlers, leaking what it registered (e.g. semaphores, reported by ``resource_tracker``).
    """
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=10)


def run_logged_jobs(
    fn: Work,
    jobs: Sequence[Any],
    *,
    store: JsonlStore,
    workers: int,
    total: int,
    done: int = 0,
    desc: str = "results",
    unit: str = "rec",
    progress: bool = True,
    finalize: Finalize = None,
    on_new: Callable[[dict[str, Any]], None] | None = None,
    backend: JobBackend | None = None,
) -> int:
    """:func:`run_jobs` whose results (JSON records) are appended to ``store`` as they arrive.

    Args:
        fn: Module-level job function emitting records.
        jobs: Picklable jobs.
        store: The log; a record whose key is already there is not appended again.
        workers: Worker processes.
        total: Records the whole run will hold (for the progress bar).
        done: Records already logged before this call.
        desc: Progress bar label.
        unit: Progress bar unit.
        progress: Show the bar (on stderr); when off, the model libraries' bars are off too (:func:`~agentgym_budget.runner.quiet.quiet_progress`).
        finalize: As for :func:`run_jobs`.
        on_new: Called with every newly appended record.
        backend: As for :func:`run_jobs`.

    Returns:
        The number of records appended.

    Example:
        >>> import tempfile, pathlib
        >>> from agentgym_budget.runner.store import JsonlStore
        >>> with JsonlStore(pathlib.Path(tempfile.mkdtemp()) / "log.jsonl", key=lambda r: r["n"]) as store:
        ...     run_logged_jobs(_demo_record_job, [1, 2], store=store, workers=1, total=2, progress=False)
        2
    """
    from tqdm import tqdm

    appended = 0
    bar = tqdm(
        total=total, initial=done, desc=desc, unit=unit, disable=not progress, file=sys.stderr, dynamic_ncols=True
    )

    def on_result(record: Mapping[str, Any]) -> None:
        nonlocal appended
        if store.append(record):
            appended += 1
            if on_new is not None:
                on_new(dict(record))
        bar.update(1)

    try:
        with quiet_progress(not progress):  # nor the bars of the libraries the jobs load models with
            run_jobs(fn, jobs, workers=workers, on_result=on_result, finalize=finalize, backend=backend)
    finally:
        bar.close()
    return appended


def _demo_record_job(job: int, emit: Emit) -> None:
    emit({"n": job})
