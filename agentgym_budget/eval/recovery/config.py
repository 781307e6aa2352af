"""What a recovery run measures: :class:`RecoveryConfig` (envs, agents, reference, the k and R grid).

:mod:`agentgym_budget.eval.recovery.plan` plans and plays a configuration (its module docstring
describes the perturbed, natural and traced episodes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentgym_budget.agents.registry import AgentSpec
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.eval import estimator
from agentgym_budget.eval.probes.references import ReferenceStates
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.runner.validation import count, run_agents, run_envs
from agentgym_budget.wrappers.turn_budget import validate_budget

__all__ = ["RecoveryConfig"]

DEFAULT_RECOVERY_KS = (0, 1, 2)
"""Forced wrong actions ``k`` (0: the unperturbed control)."""
DEFAULT_RECOVERY_BUDGETS = (5, 10, 15, 20, 30)
"""Turns left after the perturbation ``R``."""


@dataclass(frozen=True)
class RecoveryConfig(ReferenceStates):
    """Settings of a recovery run (see the module docstring).

    Attributes:
        envs: Environment configurations.
        agents: Agent specs or names.
        states: Perturbation states per env.
        depths: Depths ``t`` to perturb at (those reached), or ``None`` for random ones.
        per_trajectory: Random depths per reference trajectory.
        reference: ``"expert"`` or the path of an ``episodes.jsonl``.
        reference_agent: With a log: only this agent's episodes.
        ks: Numbers of forced wrong actions.
        budgets: Turns left after the perturbation.
        samples: Continuations per (state, k) and agent.
        harmful: Prefer errors among the wrong actions.
        show_budget: Agents see their budget (one episode per budget instead of reading prefixes).
        natural: Natural episodes per task and agent (0: none).
        natural_budget: Their budget.
        episodes: Logged ``episodes.jsonl`` files to trace for natural recovery.
        seed: Seed of the run.
        workers: Worker processes.
        confidence: Interval level.
        resamples: Bootstrap resamples.
    """

    envs: tuple[EnvRef, ...]
    agents: tuple[AgentSpec | str, ...]
    states: int = 20
    depths: tuple[int, ...] | None = None
    per_trajectory: int = 1
    reference: str = "expert"
    reference_agent: str | None = None
    ks: tuple[int, ...] = DEFAULT_RECOVERY_KS
    budgets: tuple[int, ...] = DEFAULT_RECOVERY_BUDGETS
    samples: int = 4
    harmful: bool = True
    show_budget: bool = False
    natural: int = 4
    natural_budget: int = 30
    episodes: tuple[str, ...] = ()
    seed: int = 0
    workers: int = 2
    confidence: float = estimator.DEFAULT_CONFIDENCE
    resamples: int = estimator.DEFAULT_BOOTSTRAP

    def __post_init__(self) -> None:
        object.__setattr__(self, "envs", run_envs(self.envs, "recovery"))
        object.__setattr__(self, "agents", run_agents(self.agents, "recovery"))
        for what in ("states", "per_trajectory", "samples", "workers", "natural_budget"):
            count(getattr(self, what), what)
        estimator.check_interval_options(self.confidence, self.resamples)
        count(self.natural, "natural", zero=True)
        ks = tuple(sorted({count(k, "k", zero=True) for k in self.ks}))
        if not ks:
            raise InvalidOptionError("ks is empty; give numbers of forced wrong actions such as 0,1,2.")
        object.__setattr__(self, "ks", ks)
        budgets = tuple(sorted({validate_budget(b, "in the recovery budgets") for b in self.budgets}))
        if not budgets:
            raise InvalidOptionError("budgets is empty; give the turns left after the perturbation, e.g. 5,10,20.")
        object.__setattr__(self, "budgets", budgets)
        if self.depths is not None:
            depths = tuple(sorted({count(d, "a depth", zero=True) for d in self.depths}))
            object.__setattr__(self, "depths", depths or None)
        object.__setattr__(self, "episodes", tuple(str(path) for path in self.episodes))

    @property
    def specs(self) -> tuple[AgentSpec, ...]:
        """The agents as parsed specs."""
        return self.agents  # type: ignore[return-value]

    @property
    def mode(self) -> str:
        """``"prefix"`` (hidden budget: one episode at the largest ``R``) or ``"independent"``."""
        return "independent" if self.show_budget else "prefix"

    def to_json(self) -> dict[str, Any]:
        """JSON form (``run.json`` and the ``config`` of ``summary.json``)."""
        return {
            "envs": [env.to_json() for env in self.envs],
            "agents": [spec.name for spec in self.specs],
            "states": self.states,
            "depths": list(self.depths) if self.depths else None,
            "per_trajectory": self.per_trajectory,
            "reference": self.reference,
            "reference_agent": self.reference_agent,
            "ks": list(self.ks),
            "budgets": list(self.budgets),
            "samples": self.samples,
            "harmful": self.harmful,
            "show_budget": self.show_budget,
            "mode": self.mode,
            "natural": self.natural,
            "natural_budget": self.natural_budget,
            "episodes": list(self.episodes),
            "seed": self.seed,
            "confidence": self.confidence,
            "bootstrap_resamples": self.resamples,
        }
