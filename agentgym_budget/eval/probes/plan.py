"""Single-step decision probes: how good is an agent's next action from shared states?

A probe run takes decision states from reference trajectories (the expert's, or episodes an agent
played, logged in an ``episodes.jsonl``; :mod:`.probe_states`), snapshots each once, and at each asks
every agent for ``m`` actions. Each action is judged (:mod:`.judge`) by

1. **expert agreement**: it is one of the optimal next actions (the expert's own, an immediate win,
   or one after which the expert's plan is at least one step shorter);
2. **rollout value**: after the action a continuation policy (default ``expert``; any agent name, or
   ``self`` for the probed agent playing on) finishes the episode within its remaining budget; the
   value is the fraction of ``rollouts`` continuations that win;
3. **progress change**: ``progress`` after minus before.

The episode budget of a state is ``budget`` if given, else the logged episode's budget, else the
expert's solution length from the reset plus ``slack`` turns (default 1: a wasted turn can still
be made up by the expert, a detour cannot, so *value* separates harmless from harmful mistakes).
Agents are reset at the start of the episode and told the reference turns before the state (their
optional ``observe``), then asked to act; they see their budget only with ``show_budget``.

Outputs in the run directory: ``run.json`` (settings; a rerun resumes and must keep the envs, seed,
reference, budget, slack, continuation, rollouts and budget visibility), ``probes.jsonl`` (one
record per judged action, appended durably; a rerun skips logged ones), ``summary.json`` (per
agent ``step_accuracy``, ``step_value``, ``progress_change`` with intervals, by depth and by family,
paired comparisons, and the process-signal analysis), ``summary.csv`` and ``accuracy_by_depth.png``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.registry import AgentSpec
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.eval import estimator
from agentgym_budget.eval.figures import write_summary_set
from agentgym_budget.eval.probes.discriminate import STATE_AGENT, STATE_KIND, STATE_SAMPLE
from agentgym_budget.eval.probes.references import ReferenceStates, Trajectory
from agentgym_budget.eval.probes.summary import ProbeSummary, probe_signal_points, summarize_probes
from agentgym_budget.eval.process_signal import analyze_signal
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.runner.outputs import parse_plot_formats
from agentgym_budget.runner.pool import JobBackend
from agentgym_budget.runner.provenance import run_inputs
from agentgym_budget.runner.skeleton import Analysis, JobPlan, run_analysis, summary_options
from agentgym_budget.runner.store import JsonlStore, pin_settings
from agentgym_budget.runner.validation import count, run_agents, run_envs

__all__ = ["ProbeConfig", "ProbeRun", "run_probe"]

PROBES_FILE = "probes.jsonl"
RUN_FILE = "run.json"
SELF = "self"
"""Continuation name meaning "the probed agent plays on"."""

_PINNED = (
    "envs", "seed", "reference", "reference_agent", "budget", "slack", "continuation", "rollouts", "show_budget",
    "min_value_gap", "max_candidates",
)  # fmt: skip


def probe_key(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """Identity of a probe record (what a resumed run checks before probing again)."""
    return (
        record["agent"],
        record["env_id"],
        json.dumps(record.get("env_kwargs") or {}, sort_keys=True),
        record.get("split"),
        record["state_id"],
        int(record["sample"]),
        record["continuation"],
    )


@dataclass(frozen=True)
class ProbeConfig(ReferenceStates):
    """Settings of a probe run (see the module docstring).

    Attributes:
        envs: Environment configurations (one family each, or several).
        agents: Agent specs or names.
        states: Probe states per env (at ``per_trajectory`` per reference trajectory).
        samples: Actions ``m`` asked of each agent per state.
        depths: Depths to probe (those a trajectory reaches), or ``None`` for ``per_trajectory`` random ones.
        per_trajectory: Random depths per trajectory.
        reference: ``"expert"``, or the path of an ``episodes.jsonl`` log.
        reference_agent: With a log: only this agent's episodes.
        budget: Episode budget of every state (``None``: see the module docstring).
        slack: Turns beyond the expert's solution length when ``budget`` is ``None`` (expert reference).
        continuation: Continuation policy: an agent name, or ``"self"``.
        rollouts: Continuations per action (``self``: one per sample).
        min_value_gap: Keep only states where the admissible actions' continuation values differ by at least
            this much (:mod:`.discriminate`); ``0``: keep every state.
        max_candidates: Admissible actions valued per state by that filter (the first ones listed).
        show_budget: Agents see their budget.
        seed: Seed of the run.
        workers: Worker processes.
        confidence: Interval level.
        resamples: Bootstrap resamples.

    Raises:
        InvalidOptionError: Bad numbers, no agent, an agent twice, or the state filter with the ``self``
            continuation (the filter needs a fixed policy).
    """

    envs: tuple[EnvRef, ...]
    agents: tuple[AgentSpec | str, ...]
    states: int = 20
    samples: int = 4
    depths: tuple[int, ...] | None = None
    per_trajectory: int = 1
    reference: str = "expert"
    reference_agent: str | None = None
    budget: int | None = None
    slack: int = 1
    continuation: str = "expert"
    rollouts: int = 1
    min_value_gap: float = 0.0
    max_candidates: int = 8
    show_budget: bool = False
    seed: int = 0
    workers: int = 2
    confidence: float = estimator.DEFAULT_CONFIDENCE
    resamples: int = estimator.DEFAULT_BOOTSTRAP

    def __post_init__(self) -> None:
        object.__setattr__(self, "envs", run_envs(self.envs, "probe"))
        object.__setattr__(self, "agents", run_agents(self.agents, "probe"))
        for what in ("states", "samples", "per_trajectory", "rollouts", "workers"):
            count(getattr(self, what), what)
        estimator.check_interval_options(self.confidence, self.resamples)
        if self.budget is not None:
            count(self.budget, "budget")
        count(self.slack, "slack", zero=True)
        if self.depths is not None:
            depths = tuple(sorted({count(depth, "a depth", zero=True) for depth in self.depths}))
            if not depths:
                raise InvalidOptionError("depths is empty; give the turns to probe at, e.g. 0,2,4.")
            object.__setattr__(self, "depths", depths)
        if self.continuation != SELF:
            object.__setattr__(self, "continuation", parse_agent(self.continuation).name)
        count(self.max_candidates, "max_candidates")
        gap = self.min_value_gap
        if isinstance(gap, bool) or not isinstance(gap, int | float) or not 0 <= gap <= 1:
            raise InvalidOptionError(f"min_value_gap must be a number in [0, 1] (a difference of values), got {gap!r}.")
        if gap > 0 and self.continuation == SELF:
            raise InvalidOptionError(
                "min_value_gap > 0 values every candidate action with a fixed continuation policy; "
                f"continuation={SELF!r} is the probed agent. Give continuation='expert' (or another agent)."
            )

    @property
    def filters_states(self) -> bool:
        """Whether only discriminating states are probed (``min_value_gap > 0``)."""
        return self.min_value_gap > 0

    @property
    def specs(self) -> tuple[AgentSpec, ...]:
        """The agents as parsed specs."""
        return self.agents  # type: ignore[return-value]

    @property
    def continuation_spec(self) -> AgentSpec | None:
        """The continuation agent (``None`` for ``self``)."""
        return None if self.continuation == SELF else parse_agent(self.continuation)

    def to_json(self) -> dict[str, Any]:
        """JSON form (``run.json`` and the ``config`` of ``summary.json``)."""
        return {
            "envs": [env.to_json() for env in self.envs],
            "agents": [spec.name for spec in self.specs],
            "states": self.states,
            "samples": self.samples,
            "depths": list(self.depths) if self.depths else None,
            "per_trajectory": self.per_trajectory,
            "reference": self.reference,
            "reference_agent": self.reference_agent,
            "budget": self.budget,
            "slack": self.slack,
            "continuation": self.continuation,
            "rollouts": self.rollouts,
            "show_budget": self.show_budget,
            "seed": self.seed,
            "confidence": self.confidence,
            "bootstrap_resamples": self.resamples,
            # only with the filter, so the run.json of earlier runs still matches
            **(
                {"min_value_gap": self.min_value_gap, "max_candidates": self.max_candidates}
                if self.filters_states
                else {}
            ),
        }


@dataclass(frozen=True)
class ProbeJob:
    """One reference trajectory to walk and probe (the unit of parallel work).

    Attributes:
        config: The run's settings.
        env: The environment configuration.
        trajectory: The reference trajectory.
        done: ``(agent, state_id, sample)`` already logged (not probed again).
    """

    config: ProbeConfig
    env: EnvRef
    trajectory: Trajectory
    done: frozenset[tuple[str, str, int]] = frozenset()

    def describe(self) -> str:
        """Short description for error messages."""
        return f"{self.trajectory.source} trajectory of task {self.trajectory.task_id!r} on {self.env.label}"


def _same_env(record: Mapping[str, Any], env: EnvRef) -> bool:
    return (
        record.get("env_id") == env.env_id
        and (record.get("env_kwargs") or {}) == dict(env.kwargs)
        and record.get("split") == env.split
    )


def _logged(records: Sequence[Mapping[str, Any]], config: ProbeConfig, env: EnvRef, trajectory: Trajectory) -> list:
    return [
        r
        for r in records
        if r.get("task_id") == trajectory.task_id
        and r.get("source") == trajectory.source
        and r.get("continuation") == config.continuation
        and _same_env(r, env)
    ]


def _wanted(config: ProbeConfig, trajectory: Trajectory, records: Sequence[Mapping[str, Any]]) -> set:
    """``(agent, state_id, sample)`` the run needs on ``trajectory`` (``None`` if its length is unknown yet)."""
    if not records:
        return set()
    depths = config.chosen_depths(trajectory, int(records[0]["length"]))
    rejected = {r["state_id"] for r in records if r.get("kind") == STATE_KIND and not r.get("discriminating")}
    states = [trajectory.state_id(d) for d in depths]
    return {
        (spec.name, state, s)
        for spec in config.specs
        for state in states
        if state not in rejected
        for s in range(config.samples)
    } | ({(STATE_AGENT, state, STATE_SAMPLE) for state in states} if config.filters_states else set())


def reference_trajectories(config: ProbeConfig) -> dict[EnvRef, list[Trajectory]]:
    """The reference trajectories of every env of ``config``."""
    return {env: config.trajectories(env) for env in config.envs}


def plan_probe_jobs(
    config: ProbeConfig,
    records: Sequence[Mapping[str, Any]] = (),
    trajectories: Mapping[EnvRef, list[Trajectory]] | None = None,
) -> list[ProbeJob]:
    """The jobs of ``config`` given the already logged ``records`` (complete trajectories are left out)."""
    trajectories = trajectories if trajectories is not None else reference_trajectories(config)
    jobs = []
    for env, planned in trajectories.items():
        for trajectory in planned:
            logged = _logged(records, config, env, trajectory)
            done = {(r["agent"], r["state_id"], int(r["sample"])) for r in logged}
            wanted = _wanted(config, trajectory, logged)
            if logged and wanted <= done:
                continue
            jobs.append(ProbeJob(config, env, trajectory, frozenset(done)))
    return jobs


@dataclass
class ProbeRun:
    """Result of :func:`run_probe`.

    Attributes:
        out: The output directory.
        summary: The summary.
        probed: Actions judged by this call.
        reused: Records of the run found in the log.
        files: Paths written.
    """

    out: Path
    summary: ProbeSummary
    probed: int
    reused: int
    files: list[Path] = field(default_factory=list)


def run_probe(
    config: ProbeConfig,
    out: str | Path,
    *,
    progress: bool = True,
    plots: bool = True,
    plot_formats: Sequence[str] = ("png",),
    backend: JobBackend | None = None,
) -> ProbeRun:
    """Probe the missing states of ``config`` into ``out``, then summarise (see the module docstring).

    ``out`` is locked while the run writes into it (:func:`~agentgym_budget.runner.run_lock.lock_directory`);
    the reference log is read before ``run.json`` is written. ``plot_formats``: ``png``, ``pdf``, ``svg``.
    ``backend``: where the jobs run (``None``: ``config.workers`` local processes; a
    :class:`~agentgym_budget.runner.ray_executor.RayBackend`: as many Ray actors); same records either way.

    Raises:
        RunConfigError: ``out`` holds a run with other pinned settings, or another command writes into it.
        DataError: A reference log is missing, has no usable episode, or a line of it (or of the
            probe log) is not a usable record (the message names the line).
        WorkerError: A job failed in a worker (logged records are kept; rerun to resume).
    """
    analysis = _Probe(config, plots, parse_plot_formats(plot_formats))
    return run_analysis(analysis, out, workers=config.workers, progress=progress, backend=backend)


class _Probe(Analysis):
    """The probes in the run skeleton: from every reference trajectory's states, each agent's decisions."""

    name, log_file, desc, unit = "probe", PROBES_FILE, "probed actions", "act"
    key = staticmethod(probe_key)

    def __init__(self, config: ProbeConfig, plots: bool, plot_formats: Sequence[str]) -> None:
        self.config, self.plots, self.plot_formats = config, plots, plot_formats

    def prepare(self, out: Path) -> None:
        self.out = out
        self.trajectories = reference_trajectories(self.config)
        pin_settings(
            out / RUN_FILE,
            self.config.to_json(),
            _PINNED,
            keep="the envs, seed, reference, budget, slack, continuation, rollouts and budget visibility",
            files=("reference",),
        )

    def provenance(self) -> dict[str, Any]:
        return run_inputs(self.config.envs, self.config.specs, {"reference": self.config.reference})

    def plan(self, store: JsonlStore, backend: JobBackend | None) -> JobPlan:
        config = self.config
        per_trajectory = config.states_per_trajectory * len(config.specs) * config.samples
        jobs = plan_probe_jobs(config, store.records, self.trajectories)
        total = sum(len(planned) for planned in self.trajectories.values()) * per_trajectory
        return JobPlan(jobs, total=total, done=max(0, total - len(jobs) * per_trajectory))

    def job(self) -> tuple[Callable[..., None], Callable[[], None]]:
        from agentgym_budget.eval.probes.worker import close_worker_resources, probe_job

        return probe_job, close_worker_resources

    def collect(self, store: JsonlStore) -> list[dict[str, Any]]:
        records = []
        for env, planned in self.trajectories.items():
            for trajectory in planned:
                logged = _logged(store.records, self.config, env, trajectory)
                wanted = _wanted(self.config, trajectory, logged)
                records += [
                    r
                    for r in logged
                    if r.get("kind") != STATE_KIND and (r["agent"], r["state_id"], int(r["sample"])) in wanted
                ]
        return records

    def summarise(self, records: list[dict[str, Any]], played: int, plan: JobPlan) -> ProbeRun:
        config = self.config
        summary = summarize_probes(
            records,
            **summary_options(config),
        )
        summary.process_signal = analyze_signal(probe_signal_points(records))
        from agentgym_budget.eval.probes.plots import accuracy_by_depth_figure

        draw = (lambda: accuracy_by_depth_figure(summary)) if self.plots and summary.agents else None
        files = write_summary_set(
            self.out,
            summary.to_json(config.to_json()),
            summary.csv_rows(),
            "accuracy_by_depth",
            draw,
            self.plot_formats,
        )
        return ProbeRun(self.out, summary, played, max(0, len(records) - played), files)
