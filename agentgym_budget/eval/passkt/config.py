"""What a Pass@(K,T) run measures: :class:`PassKTConfig` (env, agents, the K and T grid, samples, mode).

The run modes (``independent``, ``prefix``) and the seeds are described in
:mod:`agentgym_budget.eval.passkt.plan`, which plays a configuration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.registry import AgentSpec
from agentgym_budget.errors import InvalidOptionError, RunConfigError
from agentgym_budget.eval import estimator
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.wrappers.turn_budget import validate_budget

__all__ = ["DEFAULT_BUDGETS", "DEFAULT_KS", "PassKTConfig"]

MODES = ("independent", "prefix")
"""Run modes (see the module docstring)."""

STREAMS = ("common", "independent")
"""Random streams of the agents (see :class:`PassKTConfig`'s ``streams``)."""

DEFAULT_KS = (1, 2, 4, 8)
"""Default breadths K."""

DEFAULT_BUDGETS = (10, 15, 20, 30, 40)
"""Default turn budgets T."""


def _positive_ints(values: Sequence[int], what: str) -> tuple[int, ...]:
    checked = tuple(sorted({validate_budget(v, f"in {what}") for v in values}))
    if not checked:
        raise InvalidOptionError(f"{what} is empty; give at least one positive integer.")
    return checked


@dataclass(frozen=True)
class PassKTConfig:
    """Settings of a Pass@(K,T) run.

    Attributes:
        env: The environment configuration.
        agents: Agent specs or names (``parse_agent`` syntax).
        ks: Breadths ``K`` (each ``<= samples``).
        budgets: Turn budgets ``T``.
        samples: Episodes ``n`` per (agent, task, T).
        tasks: Number of tasks (the first ones of the split), or explicit task ids.
        mode: ``"independent"`` or ``"prefix"``.
        show_budget: Tell the agent its budget (observation notice and ``info``).
        seed: Seed of the run (episode seeds derive from it).
        workers: Worker processes (``1``: in this process).
        episode_concurrency: Episodes played at once per worker for async agents (``None``: the agent's
            ``concurrency`` parameter, else 1).
        confidence: Confidence level of the intervals.
        resamples: Bootstrap resamples.
        streams: ``"common"`` (common random numbers: every agent plays sample ``s`` of a task with the same
            seed, a paired design) or ``"independent"`` (each agent its own seeds, to see the unpaired variance).

    Raises:
        RunConfigError: ``prefix`` mode with ``show_budget``, an unknown mode, or ``K > samples``.
        InvalidOptionError: Bad numbers.

    Example:
        >>> PassKTConfig(EnvRef.parse("TextWorld-CoinCollector-v0"), ["random"], mode="prefix", show_budget=True)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.RunConfigError: prefix mode reads every budget T <= T_max from one episode run at T_max, which is only valid when the agent cannot see its budget; with show_budget the agent's behaviour may depend on T, so use mode='independent' (--mode independent).
    """

    env: EnvRef
    agents: tuple[AgentSpec | str, ...]
    ks: tuple[int, ...] = DEFAULT_KS
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    samples: int = 8
    tasks: int | tuple[str, ...] = 20
    mode: str = "independent"
    show_budget: bool = False
    seed: int = 0
    workers: int = 2
    episode_concurrency: int | None = None
    confidence: float = estimator.DEFAULT_CONFIDENCE
    resamples: int = estimator.DEFAULT_BOOTSTRAP
    streams: str = "common"

    def __post_init__(self) -> None:
        if self.streams not in STREAMS:
            raise InvalidOptionError(f"streams must be 'common' or 'independent', got {self.streams!r}.")
        specs = tuple(parse_agent(agent) for agent in self.agents)
        if not specs:
            raise InvalidOptionError("A Pass@(K,T) run needs at least one agent.")
        names = [spec.name for spec in specs]
        if len(set(names)) != len(names):
            raise InvalidOptionError(f"The same agent is listed twice: {names}.")
        object.__setattr__(self, "agents", specs)
        object.__setattr__(self, "ks", _positive_ints(self.ks, "the breadths K"))
        object.__setattr__(self, "budgets", _positive_ints(self.budgets, "the budgets T"))
        validate_budget(self.samples, "as the number of samples n")
        if self.mode not in MODES:
            raise RunConfigError(f"Unknown mode {self.mode!r}; expected one of {', '.join(MODES)}.")
        if self.mode == "prefix" and self.show_budget:
            raise RunConfigError(
                "prefix mode reads every budget T <= T_max from one episode run at T_max, which is only valid "
                "when the agent cannot see its budget; with show_budget the agent's behaviour may depend on T, "
                "so use mode='independent' (--mode independent)."
            )
        if max(self.ks) > self.samples:
            raise RunConfigError(
                f"K={max(self.ks)} needs at least {max(self.ks)} samples per (task, T), but n={self.samples}; "
                f"raise n (--n {max(self.ks)}) or drop that K."
            )
        if isinstance(self.tasks, int):
            validate_budget(self.tasks, "as the number of tasks")
        elif not self.tasks:
            raise InvalidOptionError("The task list is empty.")
        if self.workers < 1:
            raise InvalidOptionError(f"workers must be >= 1, got {self.workers}.")
        estimator.check_interval_options(self.confidence, self.resamples)

    @property
    def specs(self) -> tuple[AgentSpec, ...]:
        """The agents as parsed specs."""
        return self.agents  # type: ignore[return-value]

    def resolve_tasks(self) -> tuple[str, ...]:
        """The task ids of the run: the first ``tasks`` of the split (all of them if it has fewer), or the given ids.

        Raises:
            InvalidOptionError: Unknown task ids.
        """
        available = self.env.task_ids()
        if isinstance(self.tasks, int):
            return available[: self.tasks]
        unknown = [t for t in self.tasks if t not in set(available)]
        if unknown:
            raise InvalidOptionError(f"Unknown task ids for {self.env.label}: {unknown[:5]}.")
        return tuple(self.tasks)

    def to_json(self, task_ids: Sequence[str] = ()) -> dict[str, Any]:
        """JSON form (stored as ``run.json`` and in ``summary.json``)."""
        return {
            **self.env.to_json(),
            "agents": [spec.name for spec in self.specs],
            "ks": list(self.ks),
            "budgets": list(self.budgets),
            "samples": self.samples,
            "tasks": list(task_ids) if task_ids else self.tasks,
            "mode": self.mode,
            "show_budget": self.show_budget,
            "seed": self.seed,
            **({"streams": self.streams} if self.streams != "common" else {}),
            "confidence": self.confidence,
            "bootstrap_resamples": self.resamples,
        }
