"""Error-recovery probes: force wrong actions at shared states, then see whether agents recover in budget.

Perturbation probes
    Decision states at depth ``t`` are taken from reference trajectories (as for the single-step
    probes, :mod:`.probe_states`) and snapshotted once. At each, ``k`` wrong actions are forced
    (admissible, not optimal, leaving the task solvable; errors preferred: actions after which the
    expert's plan gets longer or progress falls; ``k = 0`` is the unperturbed control), then the agent
    continues with ``R`` turns left: restore + fork, never a replay. The agent is reset at the start of
    the episode and told the reference prefix and the forced actions as turns it did not choose (its
    ``observe``), so an agent that keeps a stale plan really has one. The **recovery rate** is the
    share of continuations that win within their ``R`` turns; it is reported against ``t``, ``k`` and
    ``R``. Forced actions and continuation seeds depend on the state, ``k`` and the sample only, so
    agents are compared on identical perturbations (paired).
Natural recovery
    Each agent also plays ``natural`` episodes per task from the seeded reset (budget
    ``natural_budget``; the seeds of ``passkt``), traced while played; logged episodes of other runs
    (``episodes``: ``episodes.jsonl`` files) are traced by replaying them once. The first error, the
    share of episodes that still succeed after it, and the turns spent getting back on track are
    summarised per agent (:mod:`.natural_recovery`), and the traces feed the process-signal analysis.

Outputs: ``run.json`` (settings; a rerun resumes and must keep the envs, seed, reference, error
preference, budget visibility and natural budget), ``episodes.jsonl`` (every episode, ``kind``
``perturbed``, ``natural`` or ``traced``), ``summary.json`` (per agent ``recovery_rate`` at the largest
``R`` over ``k >= 1`` with its interval, ``control_success``, rates by budget, by ``k``, by depth and
by family, paired comparisons, natural recovery, process signal), ``summary.csv`` and
``recovery_vs_budget.png``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_budget.eval.figures import write_summary_set
from agentgym_budget.eval.probes.references import Trajectory, logged_episodes
from agentgym_budget.eval.process_signal import analyze_signal
from agentgym_budget.eval.recovery.config import RecoveryConfig
from agentgym_budget.eval.recovery.natural import natural_recovery, trace_signal_points
from agentgym_budget.eval.recovery.summary import RecoverySummary, summarize_recovery
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.runner.outputs import parse_plot_formats
from agentgym_budget.runner.pool import JobBackend
from agentgym_budget.runner.provenance import run_inputs
from agentgym_budget.runner.skeleton import Analysis, JobPlan, run_analysis, summary_options
from agentgym_budget.runner.store import JsonlStore, pin_settings

__all__ = ["RecoveryRun", "run_recovery"]

EPISODES_FILE = "episodes.jsonl"
RUN_FILE = "run.json"
_PINNED = ("envs", "seed", "reference", "reference_agent", "harmful", "show_budget", "natural_budget")


def recovery_key(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """Identity of a recovery record (what a resumed run checks before playing again)."""
    return (
        record["kind"],
        record["agent"],
        record["env_id"],
        json.dumps(record.get("env_kwargs") or {}, sort_keys=True),
        record.get("split"),
        record.get("source", ""),
        record.get("state_id") or record["task_id"],
        int(record.get("k", -1)),
        int(record["sample"]),
        int(record["budget"]),
        record.get("mode", ""),
    )


@dataclass(frozen=True)
class PerturbJob:
    """Perturbations along one reference trajectory; ``done`` holds ``(agent, state_id, k, sample, R)``."""

    config: RecoveryConfig
    env: EnvRef
    trajectory: Trajectory
    done: frozenset[tuple[Any, ...]] = frozenset()
    kind: str = "perturbed"

    def describe(self) -> str:
        """Short description for error messages."""
        return f"perturbations on the {self.trajectory.source} trajectory of {self.trajectory.task_id!r} ({self.env.label})"


@dataclass(frozen=True)
class NaturalJob:
    """Natural episodes of every agent on one task; ``done`` holds ``(agent, sample)``."""

    config: RecoveryConfig
    env: EnvRef
    task_id: str
    done: frozenset[tuple[Any, ...]] = frozenset()
    kind: str = "natural"

    def describe(self) -> str:
        """Short description for error messages."""
        return f"natural episodes on {self.task_id!r} ({self.env.label})"


@dataclass(frozen=True)
class TraceJob:
    """Logged episodes of one log to trace by replay."""

    config: RecoveryConfig
    env: EnvRef
    source: str
    records: tuple[Mapping[str, Any], ...]
    kind: str = "traced"

    def describe(self) -> str:
        """Short description for error messages."""
        return f"tracing {len(self.records)} logged episodes of {self.source} ({self.env.label})"


def _same_env(record: Mapping[str, Any], env: EnvRef) -> bool:
    return (
        record.get("env_id") == env.env_id
        and (record.get("env_kwargs") or {}) == dict(env.kwargs)
        and record.get("split") == env.split
    )


@dataclass
class _Plan:
    jobs: list[Any] = field(default_factory=list)
    total: int = 0
    done: int = 0
    wanted: list[dict[str, Any]] = field(default_factory=list)


def _plan_perturbed(
    plan: _Plan, config: RecoveryConfig, env: EnvRef, trajectory: Trajectory, records: Sequence[Mapping[str, Any]]
) -> None:
    """Add the perturbed episodes of one reference trajectory: its logged records, and a job if some are missing."""
    names = {spec.name for spec in config.specs}
    budgets = set(config.budgets) if config.show_budget else {max(config.budgets)}
    per_state = len(config.specs) * len(config.ks) * config.samples * len(budgets)
    logged = [
        r
        for r in records
        if r.get("kind") == "perturbed"
        and r.get("task_id") == trajectory.task_id
        and r.get("source") == trajectory.source
        and r.get("mode") == config.mode
        and _same_env(r, env)
    ]
    done = frozenset((r["agent"], r["state_id"], r["k"], r["sample"], r["budget"]) for r in logged)
    depths = config.chosen_depths(trajectory, int(logged[0]["length"])) if logged else []
    states = {trajectory.state_id(d) for d in depths}
    wanted = [
        r
        for r in logged
        if r["state_id"] in states
        and r["agent"] in names
        and r["k"] in config.ks
        and r["sample"] < config.samples
        and r["budget"] in budgets
    ]
    plan.wanted += wanted
    expected = per_state * (len(depths) if logged else (len(config.depths or ()) or config.per_trajectory))
    plan.total += expected
    plan.done += len(wanted)
    if not logged or len(wanted) < expected:
        plan.jobs.append(PerturbJob(config, env, trajectory, done))


def _plan_natural(
    plan: _Plan, config: RecoveryConfig, env: EnvRef, task: str, records: Sequence[Mapping[str, Any]]
) -> None:
    """Add the natural (unperturbed) episodes of one task: its logged records, and a job if some are missing."""
    names = {spec.name for spec in config.specs}
    logged = [
        r
        for r in records
        if r.get("kind") == "natural"
        and r.get("task_id") == task
        and r.get("budget") == config.natural_budget
        and _same_env(r, env)
    ]
    wanted = [r for r in logged if r["agent"] in names and r["sample"] < config.natural]
    plan.wanted += wanted
    plan.total += len(config.specs) * config.natural
    plan.done += len(wanted)
    if len(wanted) < len(config.specs) * config.natural:
        done = frozenset((r["agent"], r["sample"]) for r in logged)
        plan.jobs.append(NaturalJob(config, env, task, done))


def _plan_traced(
    plan: _Plan, config: RecoveryConfig, env: EnvRef, source: str, records: Sequence[Mapping[str, Any]]
) -> None:
    """Add the logged episodes of ``source`` to trace: those traced already, and one job per task of the rest."""
    logged_keys = {recovery_key(r) for r in records if r.get("kind") == "traced" and r.get("source") == source}
    episodes = logged_episodes(source, env)
    traced = [r for r in records if r.get("kind") == "traced" and r.get("source") == source and _same_env(r, env)]
    plan.wanted += traced
    plan.total += len(episodes)
    plan.done += len(traced)
    todo = [
        e
        for e in episodes
        if recovery_key({**e, "kind": "traced", "source": source, "k": -1, "mode": ""}) not in logged_keys
    ]
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for episode in todo:
        by_task.setdefault(episode["task_id"], []).append(episode)
    plan.jobs += [TraceJob(config, env, source, tuple(chunk)) for chunk in by_task.values()]


def plan_recovery_jobs(
    config: RecoveryConfig,
    records: Sequence[Mapping[str, Any]] = (),
    trajectories: Mapping[EnvRef, list[Trajectory]] | None = None,
) -> _Plan:
    """The jobs still to run, the expected record count and the logged records the summary uses.

    For each env: the perturbed episodes of each reference trajectory, then the natural episodes of
    each of their tasks (if asked), then the logged episodes to trace.
    """
    trajectories = trajectories if trajectories is not None else {env: config.trajectories(env) for env in config.envs}
    plan = _Plan()
    for env, planned in trajectories.items():
        for trajectory in planned:
            _plan_perturbed(plan, config, env, trajectory, records)
        for task in dict.fromkeys(t.task_id for t in planned) if config.natural else ():
            _plan_natural(plan, config, env, task, records)
        for source in config.episodes:
            _plan_traced(plan, config, env, source, records)
    return plan


@dataclass
class RecoveryRun:
    """Result of :func:`run_recovery`.

    Attributes:
        out: The output directory.
        summary: The summary.
        played: Episodes played or traced by this call.
        reused: Records of the run found in the log.
        files: Paths written.
    """

    out: Path
    summary: RecoverySummary
    played: int
    reused: int
    files: list[Path] = field(default_factory=list)


def run_recovery(
    config: RecoveryConfig,
    out: str | Path,
    *,
    progress: bool = True,
    plots: bool = True,
    plot_formats: Sequence[str] = ("png",),
    backend: JobBackend | None = None,
) -> RecoveryRun:
    """Play the missing episodes of ``config`` into ``out``, then summarise (see the module docstring).

    ``out`` is locked while the run writes into it (:func:`~agentgym_budget.runner.run_lock.lock_directory`);
    the logs named by the config are read before ``run.json`` is written. ``plot_formats``: ``png``,
    ``pdf``, ``svg``. ``backend``: where the jobs run (``None``: ``config.workers`` local processes; a
    :class:`~agentgym_budget.runner.ray_executor.RayBackend`: as many Ray actors); same records either way.

    Raises:
        RunConfigError: ``out`` holds a run with other pinned settings, or another command writes into it.
        DataError: A reference or episode log is missing, has no usable episode, or a line of it is
            not a usable record (the message names the line).
        WorkerError: A job failed in a worker (logged records are kept; rerun to resume).
    """
    analysis = _Recovery(config, plots, parse_plot_formats(plot_formats))
    return run_analysis(analysis, out, workers=config.workers, progress=progress, backend=backend)


class _Recovery(Analysis):
    """Recovery in the run skeleton: perturbed, natural and traced episodes from the reference states."""

    name, log_file, desc, unit = "recovery", EPISODES_FILE, "episodes", "ep"
    key = staticmethod(recovery_key)

    def __init__(self, config: RecoveryConfig, plots: bool, plot_formats: Sequence[str]) -> None:
        self.config, self.plots, self.plot_formats = config, plots, plot_formats

    def prepare(self, out: Path) -> None:
        config = self.config
        self.out = out
        self.trajectories = {env: config.trajectories(env) for env in config.envs}
        for source in config.episodes:
            for env in config.envs:
                logged_episodes(source, env)
        pin_settings(
            out / RUN_FILE,
            config.to_json(),
            _PINNED,
            keep="the envs, seed, reference, error preference, budget visibility and natural budget",
            files=("reference",),
        )

    def provenance(self) -> dict[str, Any]:
        config = self.config
        return run_inputs(config.envs, config.specs, {"reference": config.reference, "episodes": config.episodes})

    def plan(self, store: JsonlStore, backend: JobBackend | None) -> JobPlan:
        plan = plan_recovery_jobs(self.config, store.records, self.trajectories)
        return JobPlan(plan.jobs, total=plan.total, done=plan.done)

    def job(self) -> tuple[Callable[..., None], Callable[[], None]]:
        from agentgym_budget.eval.recovery.worker import close_worker_resources, recovery_job

        return recovery_job, close_worker_resources

    def collect(self, store: JsonlStore) -> list[dict[str, Any]]:
        return plan_recovery_jobs(self.config, store.records, self.trajectories).wanted

    def summarise(self, records: list[dict[str, Any]], played: int, plan: JobPlan) -> RecoveryRun:
        config = self.config
        perturbed = [r for r in records if r["kind"] == "perturbed"]
        natural = [r for r in records if r["kind"] in ("natural", "traced")]
        summary = summarize_recovery(
            perturbed,
            ks=config.ks,
            budgets=config.budgets,
            mode=config.mode,
            **summary_options(config),
        )
        options = {key: value for key, value in summary_options(config).items() if key != "order"}
        summary.natural = natural_recovery([r for r in natural if r["kind"] == "natural"], **options)
        summary.traced = natural_recovery([r for r in natural if r["kind"] == "traced"], **options)
        summary.process_signal = analyze_signal(trace_signal_points(natural))
        from agentgym_budget.eval.recovery.plots import recovery_vs_budget_figure

        draw = (lambda: recovery_vs_budget_figure(summary.curves())) if self.plots and summary.agents else None
        files = write_summary_set(
            self.out,
            summary.to_json(config.to_json()),
            summary.csv_rows(),
            "recovery_vs_budget",
            draw,
            self.plot_formats,
        )
        return RecoveryRun(self.out, summary, played, max(0, len(records) - played), files)
