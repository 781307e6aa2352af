"""Pass@(K,T) runs: plan the (agent, task, T, sample) grid, play it in parallel, resume, summarise.

What a run measures is a :class:`~agentgym_budget.eval.passkt.config.PassKTConfig`.

Definitions (also in :data:`~agentgym_budget.eval.passkt.summary.DEFINITION`):

* an episode with budget ``T`` succeeds if the task is won within ``T`` turns;
* Pass@(K,T) of a task is the probability that at least one of ``K`` independent episodes, each with
  budget ``T``, succeeds; it is estimated from ``n >= K`` samples per (task, T) with the unbiased
  estimator ``1 - C(n-c, K) / C(n, K)``, averaged over tasks, with bootstrap intervals over tasks.

Run modes:

``independent``
    ``n`` episodes per (task, T), each run with its own budget ``T``. Always valid; required when
    the agent is shown its budget (``show_budget``), since its behaviour may then depend on ``T``.
``prefix``
    ``n`` episodes per task at ``T_max = max(T)``, recording the turn of success; the outcome at every
    ``T <= T_max`` is read from the same episode (won by turn ``T``). ``|T|`` times cheaper, and valid
    only when the budget is hidden: :class:`~agentgym_budget.eval.passkt.config.PassKTConfig` refuses ``prefix`` with ``show_budget``.

Seeds: sample ``s`` of task ``t`` uses the seed :func:`~agentgym_budget.runner.seeds.episode_seed` ``(seed, t, s)`` for both the env
reset and the agent, at every ``T`` and for every agent (common random numbers: cells and agents are
compared on matched episodes). Hence, for an agent that does not see its budget, the independent
episode at ``T`` is exactly the prefix of length ``T`` of the episode at ``T_max``: both modes give
identical outcomes, and the same command and seed give the same results.

Output directory (:func:`run_passkt`): ``run.json`` (settings; a rerun must keep the env, seed, mode
and budget visibility, and may add agents, tasks, budgets or samples), ``episodes.jsonl`` (one record
per finished episode, appended durably at once; a rerun skips logged episodes), ``summary.json``,
``summary.csv``, ``difference.csv`` (two or more agents) and the plots of :mod:`.plots`.

Before the episodes start, the tasks still to play whose data is missing from the cache (TextWorld's
generated games) are generated in ``workers`` processes under their own progress bar
(:func:`~agentgym_budget.prepare.prepare_tasks`), so episodes do not stall on them and episode
times do not include generation. Families that cannot tell cheaply whether a task is prepared
(ALFWorld, WebShop) are left to ``agentgym-budget prepare``; on a Ray backend the workers prepare
what they play.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_budget.agents.registry import AgentSpec
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.summary import Summary, summarize
from agentgym_budget.prepare import prepare_tasks
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.runner.outputs import output_set, parse_plot_formats, plot_names, write_csv
from agentgym_budget.runner.pool import JobBackend
from agentgym_budget.runner.provenance import run_inputs
from agentgym_budget.runner.records import episode_problem
from agentgym_budget.runner.seeds import episode_seed
from agentgym_budget.runner.skeleton import Analysis, JobPlan, run_analysis, summary_options
from agentgym_budget.runner.store import JsonlStore, atomic_write_json, pin_settings

__all__ = ["PassKTRun", "episode_key", "run_passkt"]

RUN_FILE = "run.json"
EPISODES_FILE = "episodes.jsonl"
_PINNED = ("env_id", "env_kwargs", "split", "seed", "mode", "show_budget")


def episode_key(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """Identity of a logged episode (what a resumed run checks before playing it again)."""
    return (
        record["agent"],
        record["env_id"],
        json.dumps(record.get("env_kwargs") or {}, sort_keys=True),
        record.get("split"),
        record["task_id"],
        record["mode"],
        bool(record["show_budget"]),
        int(record["budget"]),
        int(record["sample"]),
        int(record["seed"]),
    )


@dataclass(frozen=True)
class EpisodePlan:
    """One episode to play: agent, task, budget, sample and its seed."""

    agent: AgentSpec
    task_id: str
    budget: int
    sample: int
    seed: int


@dataclass(frozen=True)
class PassKTJob:
    """The episodes of one or more tasks, played by one worker (the unit of parallel work).

    Attributes:
        env: The environment configuration.
        mode: The run mode.
        show_budget: Whether the agent is told its budget.
        tasks: The tasks whose episodes the job holds (a single task id is accepted for one task).
        episodes: The episodes, in plan order.
        episode_concurrency: Episodes played at once for async agents (``None``: the agent's setting).
    """

    env: EnvRef
    mode: str
    show_budget: bool
    tasks: tuple[str, ...]
    episodes: tuple[EpisodePlan, ...]
    episode_concurrency: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.tasks, str):
            object.__setattr__(self, "tasks", (self.tasks,))

    def describe(self) -> str:
        """Short description for error messages."""
        if len(self.tasks) == 1:
            return f"task {self.tasks[0]!r} of {self.env.label} ({len(self.episodes)} episodes)"
        named = ", ".join(repr(task) for task in self.tasks[:3]) + (", ..." if len(self.tasks) > 3 else "")
        return f"{len(self.tasks)} tasks ({named}) of {self.env.label} ({len(self.episodes)} episodes)"


def _stream(config: PassKTConfig, spec: AgentSpec, task: str) -> str:
    return task if config.streams == "common" else f"{spec.name}|{task}"


def plan_episodes(config: PassKTConfig, task_ids: Sequence[str]) -> list[EpisodePlan]:
    """Every episode of the run, grouped by task (independent: each T; prefix: T_max only)."""
    budgets = config.budgets if config.mode == "independent" else (max(config.budgets),)
    return [
        EpisodePlan(spec, task, budget, sample, episode_seed(config.seed, _stream(config, spec, task), sample))
        for task in task_ids
        for spec in config.specs
        for budget in budgets
        for sample in range(config.samples)
    ]


JOB_WAVES = 8
"""A job of an async agent holds about this many times its concurrency in episodes (see :func:`group_tasks`)."""


def group_tasks(config: PassKTConfig, todo: Sequence[EpisodePlan]) -> list[PassKTJob]:
    """The jobs that play ``todo``: one task per job, or several when one task cannot fill a worker.

    A worker plays an async agent's episodes ``c`` at a time (``c``: the concurrency), from every task
    of its job; when a job runs dry the worker waits for its last episodes before taking the next job.
    So consecutive tasks are grouped until a job holds about ``JOB_WAVES * c`` episodes, keeping at
    least as many jobs as workers. Synchronous agents (``c = 1``) keep one task per job.

    Example:
        >>> from agentgym_budget.runner.rollout import EnvRef
        >>> config = PassKTConfig(EnvRef.parse("TextWorld-CoinCollector-v0"), ["openai:m:concurrency=16"],
        ...                       ks=(1,), budgets=(5,), samples=4, tasks=("a", "b", "c", "d", "e"), workers=2)
        >>> [job.tasks for job in group_tasks(config, plan_episodes(config, config.tasks))]
        [('a', 'b', 'c'), ('d', 'e')]
    """
    from agentgym_budget.eval.passkt.worker import episode_concurrency

    by_task: dict[str, list[EpisodePlan]] = {}
    for plan in todo:
        by_task.setdefault(plan.task_id, []).append(plan)
    probe = PassKTJob(config.env, config.mode, config.show_budget, (), (), config.episode_concurrency)
    concurrency = max(episode_concurrency(probe, spec) for spec in config.specs)
    per_task = max(1, max((len(plans) for plans in by_task.values()), default=1))
    tasks_to_fill = -(-JOB_WAVES * concurrency // per_task)
    tasks_per_worker = -(-len(by_task) // config.workers)
    size = 1 if concurrency == 1 else max(1, min(tasks_to_fill, tasks_per_worker))
    tasks = list(by_task)
    return [
        PassKTJob(
            config.env,
            config.mode,
            config.show_budget,
            tuple(tasks[start : start + size]),
            tuple(plan for task in tasks[start : start + size] for plan in by_task[task]),
            config.episode_concurrency,
        )
        for start in range(0, len(tasks), size)
    ]


def _record_key(config: PassKTConfig, plan: EpisodePlan) -> tuple[Any, ...]:
    return episode_key(
        {
            **config.env.to_json(),
            "agent": plan.agent.name,
            "task_id": plan.task_id,
            "mode": config.mode,
            "show_budget": config.show_budget,
            "budget": plan.budget,
            "sample": plan.sample,
            "seed": plan.seed,
        }
    )


def _check_resume(out: Path, config: PassKTConfig, task_ids: Sequence[str]) -> None:
    pin_settings(out / RUN_FILE, config.to_json(task_ids), _PINNED, keep="the env, seed, mode and budget visibility")


@dataclass
class PassKTRun:
    """Result of :func:`run_passkt`.

    Attributes:
        out: The output directory.
        summary: The summary of the requested grid.
        played: Episodes played by this call.
        reused: Episodes found in the log and not played again.
        files: Paths written (summaries and plots).
    """

    out: Path
    summary: Summary
    played: int
    reused: int
    files: list[Path] = field(default_factory=list)


SUMMARY_FILES = ("summary.json", "summary.csv", "difference.csv")
"""The summary files of a Pass@(K,T) run or report (plots: :data:`~agentgym_budget.eval.passkt.plots.PLOT_STEMS`)."""


def write_summary(
    summary: Summary,
    out: Path,
    config: Mapping[str, Any],
    *,
    plots: bool = True,
    plot_formats: Sequence[str] = ("png",),
) -> list[Path]:
    """Write ``summary.json``, ``summary.csv``, ``difference.csv`` (if any) and the plots into ``out``.

    They are written as one :func:`~agentgym_budget.runner.outputs.output_set`: summary files and plots
    of an earlier write that this one does not produce are removed, so the files in ``out`` always
    describe the same summary. Returns the paths written.
    """
    from agentgym_budget.eval.passkt.plots import PLOT_STEMS

    with output_set(out, [*SUMMARY_FILES, *plot_names(PLOT_STEMS)]) as outputs:
        atomic_write_json(outputs.path("summary.json"), summary.to_json(config))
        write_csv(outputs.path("summary.csv"), summary.csv_rows())
        if summary.differences:
            rows = [
                {"first": d.first, "second": d.second, **cell, "tasks": len(d.tasks)}
                for d in summary.differences
                for cell in d.cells()
            ]
            write_csv(outputs.path("difference.csv"), rows)
        if plots:
            from agentgym_budget.eval.passkt.plots import write_plots

            write_plots(summary, outputs, parse_plot_formats(plot_formats))
    return outputs.written


def run_passkt(
    config: PassKTConfig,
    out: str | Path,
    *,
    progress: bool = True,
    plots: bool = True,
    plot_formats: Sequence[str] = ("png",),
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    backend: JobBackend | None = None,
) -> PassKTRun:
    """Play the missing episodes of ``config`` into ``out``, then summarise (see the module docstring).

    Args:
        config: The run's settings.
        out: Output directory (created; an existing run there is resumed). It is locked while the
            run writes into it (:func:`~agentgym_budget.runner.run_lock.lock_directory`).
        progress: Show a progress bar on stderr.
        plots: Write the plots.
        plot_formats: Their file formats (``png``, ``pdf``, ``svg``).
        on_episode: Called with every new episode record after it was logged.
        backend: Where the jobs run (``None``: ``config.workers`` local processes; a
            :class:`~agentgym_budget.runner.ray_executor.RayBackend`: as many Ray actors). The records
            are the same either way.

    Raises:
        RunConfigError: ``out`` holds a run with other pinned settings, or another command is
            writing into it.
        DataError: A line of the log is corrupt or not an episode record (the message names it).
        WorkerError: An episode failed in a worker process (logged episodes are kept; rerun to resume).
    """
    analysis = _PassKT(config, plots, parse_plot_formats(plot_formats), progress)
    return run_analysis(analysis, out, workers=config.workers, progress=progress, backend=backend, on_new=on_episode)


class _PassKT(Analysis):
    """Pass@(K,T) in the run skeleton: episodes of the grid, played in jobs of whole tasks."""

    name, log_file, desc, unit = "passkt", EPISODES_FILE, "episodes", "ep"
    check = staticmethod(episode_problem)
    key = staticmethod(episode_key)

    def __init__(self, config: PassKTConfig, plots: bool, plot_formats: Sequence[str], progress: bool) -> None:
        self.config, self.plots, self.plot_formats, self.progress = config, plots, plot_formats, progress

    def prepare(self, out: Path) -> None:
        self.out = out
        self.task_ids = self.config.resolve_tasks()
        _check_resume(out, self.config, self.task_ids)
        self.planned = plan_episodes(self.config, self.task_ids)

    def provenance(self) -> dict[str, Any]:
        return run_inputs([self.config.env], self.config.specs)

    def plan(self, store: JsonlStore, backend: JobBackend | None) -> JobPlan:
        config = self.config
        todo = [plan for plan in self.planned if _record_key(config, plan) not in store.keys]
        if backend is None and todo:
            tasks = list(dict.fromkeys(plan.task_id for plan in todo))
            prepare_tasks(config.env, tasks, workers=config.workers, progress=self.progress, known_only=True)
        return JobPlan(group_tasks(config, todo), total=len(self.planned), done=len(self.planned) - len(todo))

    def job(self) -> tuple[Callable[..., None], Callable[[], None]]:
        from agentgym_budget.eval.passkt.worker import close_worker_resources, play_job

        return play_job, close_worker_resources

    def collect(self, store: JsonlStore) -> list[dict[str, Any]]:
        wanted = {_record_key(self.config, plan) for plan in self.planned}
        return [record for record in store.records if episode_key(record) in wanted]

    def summarise(self, records: list[dict[str, Any]], played: int, plan: JobPlan) -> PassKTRun:
        config = self.config
        summary = summarize(
            records,
            ks=config.ks,
            budgets=config.budgets,
            samples=config.samples,
            **summary_options(config),
        )
        files = write_summary(
            summary, self.out, config.to_json(self.task_ids), plots=self.plots, plot_formats=self.plot_formats
        )
        return PassKTRun(self.out, summary, played, plan.done, files)
