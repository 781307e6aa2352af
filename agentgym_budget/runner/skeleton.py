"""One run skeleton for every analysis: plan the jobs, resume from the log, execute, summarise.

Pass@(K,T), the probes and the recovery runs differ in what they plan, play and summarise, not in
how a run goes. :func:`run_analysis` is that shared course, and an analysis plugs into it as an
:class:`Analysis`:

1. lock the output directory (:func:`~agentgym_budget.runner.run_lock.lock_directory`), so no other
   command writes into it;
2. :meth:`Analysis.prepare`: read the run's inputs (reference logs, task lists) and pin its settings
   (:func:`~agentgym_budget.runner.store.pin_settings`), so a resumed run is the same run; then record
   what produces it (:meth:`Analysis.provenance`, ``provenance.json``: :mod:`~agentgym_budget.runner.provenance`);
3. open the log (:class:`~agentgym_budget.runner.store.JsonlStore`) and :meth:`Analysis.plan` the jobs
   whose records it does not hold yet (resume);
4. execute them in local worker processes or Ray actors
   (:func:`~agentgym_budget.runner.pool.run_logged_jobs`), each record appended as it arrives;
5. :meth:`Analysis.collect` the records the run asked for and :meth:`Analysis.summarise` them into
   the run's result (summary files and plots written as one set).

Example:
    >>> import tempfile
    >>> class Count(Analysis):
    ...     name, log_file, key = "count", "log.jsonl", staticmethod(lambda record: record["n"])
    ...     def plan(self, store, backend):
    ...         todo = [n for n in (1, 2) if n not in store.keys]
    ...         return JobPlan(todo, total=2, done=2 - len(todo))
    ...     def job(self):
    ...         return _demo_job, None
    ...     def collect(self, store):
    ...         return store.records
    ...     def summarise(self, records, played, plan):
    ...         return sorted(r["n"] for r in records), played
    >>> out = tempfile.mkdtemp()
    >>> run_analysis(Count(), out, workers=1, progress=False)
    ([1, 2], 2)
    >>> run_analysis(Count(), out, workers=1, progress=False)  # resumed: nothing left to play
    ([1, 2], 0)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.runner.pool import Emit, JobBackend, run_logged_jobs
from agentgym_budget.runner.provenance import write_provenance
from agentgym_budget.runner.run_lock import lock_directory
from agentgym_budget.runner.store import Check, JsonlStore

__all__ = ["Analysis", "JobPlan", "run_analysis"]


@dataclass
class JobPlan:
    """The jobs still to run, and how many records the whole run holds.

    Attributes:
        jobs: Picklable jobs for the analysis's job function.
        total: Records the whole run will hold (for the progress bar).
        done: Records already in the log before this call.
    """

    jobs: Sequence[Any]
    total: int
    done: int


class Analysis:
    """What one analysis plugs into :func:`run_analysis` (override the methods; see the module docstring).

    Attributes:
        name: The command that writes the run (named by the directory lock).
        log_file: The log's file name in the output directory.
        desc: Progress bar label.
        unit: Progress bar unit.
        check: Checks every logged record (as :class:`~agentgym_budget.runner.store.JsonlStore` takes it).
    """

    name: str = "run"
    log_file: str = "records.jsonl"
    desc: str = "records"
    unit: str = "rec"
    check: Check | None = None

    def key(self, record: Mapping[str, Any]) -> Hashable:
        """The identity of a record in the log (a record whose key is logged is not played again)."""
        raise NotImplementedError

    def prepare(self, out: Path) -> None:
        """Read the run's inputs and pin its settings in ``out`` (before the log is opened)."""

    def provenance(self) -> dict[str, Any]:
        """What the run plays, for its ``provenance.json`` (:func:`~agentgym_budget.runner.provenance.run_inputs`)."""
        return {}

    def plan(self, store: JsonlStore, backend: JobBackend | None) -> JobPlan:
        """The jobs whose records ``store`` does not hold yet."""
        raise NotImplementedError

    def job(self) -> tuple[Callable[[Any, Emit], None], Callable[[], None] | None]:
        """``(job function, finalize)`` as :func:`~agentgym_budget.runner.pool.run_jobs` takes them."""
        raise NotImplementedError

    def collect(self, store: JsonlStore) -> list[dict[str, Any]]:
        """The logged records this run asked for (the log may hold more: other grids, other agents)."""
        raise NotImplementedError

    def summarise(self, records: list[dict[str, Any]], played: int, plan: JobPlan) -> Any:
        """The run's result from its ``records`` (``played`` of them by this call); writes its files."""
        raise NotImplementedError


def run_analysis(
    analysis: Analysis,
    out: str | Path,
    *,
    workers: int,
    progress: bool = True,
    backend: JobBackend | None = None,
    on_new: Callable[[dict[str, Any]], None] | None = None,
) -> Any:
    """Run ``analysis`` into ``out``: lock, prepare, plan, execute the missing jobs, summarise.

    Args:
        analysis: What is planned, played and summarised.
        out: Output directory (created; an existing run there is resumed).
        workers: Worker processes, or Ray actors with a Ray ``backend``.
        progress: Show a progress bar on stderr.
        backend: Where the jobs run (``None``: local processes).
        on_new: Called with every newly logged record.

    Returns:
        What :meth:`Analysis.summarise` returns.

    Raises:
        RunConfigError: ``out`` holds a run with other pinned settings, or another command writes into it.
        DataError: A line of the log is corrupt or not a usable record.
        WorkerError: A job failed in a worker (logged records are kept; rerun to resume).
    """
    out = Path(out)
    with lock_directory(out, analysis.name):
        analysis.prepare(out)
        write_provenance(out, **analysis.provenance())
        with JsonlStore(out / analysis.log_file, key=analysis.key, check=analysis.check) as store:
            plan = analysis.plan(store, backend)
            job, finalize = analysis.job()
            played = run_logged_jobs(
                job,
                plan.jobs,
                store=store,
                workers=workers,
                total=plan.total,
                done=plan.done,
                desc=analysis.desc,
                unit=analysis.unit,
                progress=progress,
                finalize=finalize,
                on_new=on_new,
                backend=backend,
            )
            records = analysis.collect(store)
        return analysis.summarise(records, played, plan)


def summary_options(config: Any) -> dict[str, Any]:
    """The summary arguments every evaluation config carries: agent order, confidence, resamples and seed."""
    return {
        "order": [spec.name for spec in config.specs],
        "confidence": config.confidence,
        "resamples": config.resamples,
        "seed": config.seed,
    }


def _demo_job(n: int, emit: Emit) -> None:
    emit({"n": n})
