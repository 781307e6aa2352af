"""Judging actions from a shared state: expert agreement, the error test, and continuations.

The family's reference solver gives, in every state ``s``, its remaining plan ``P(s)``
(``info["expert_plan"]``, opt-in for every family), whose length is the solver's cost-to-go. From
a probe state ``s`` with a non-empty plan, an action ``a`` leads to ``s'``. Definitions:

Expert agreement (*optimal* action)
    ``a`` is optimal when it is the solver's own next action (``a == P(s)[0]``), or it wins at
    once, or ``s'`` is not lost and ``0 < |P(s')| <= |P(s)| - 1``: the action brings the solver's
    cost-to-go down by at least the one turn it used, as the solver's own step does. This credits
    ties, which an exact match with ``expert_action`` would count as errors: several equally short
    routes, sub-goals in any order (TextWorld cooking), equivalent spellings the engine accepts. It
    needs only the contract (``expert_plan``, ``won``, ``lost``) and one fork, so it is the same for
    every family. It is relative to the solver: where the solver is not shortest-path optimal
    (WebShop's oracle, TextWorld's walkthrough re-planner are good but unproven), an action that
    beats it is still credited (``<=``), one that ties a suboptimal solver is credited too.
Error (the natural-recovery test)
    ``a`` is an error when ``s'`` is lost, or the solver's plan gets longer (``|P(s')| > |P(s)|``,
    an empty plan in a running episode counting as infinitely long), or ``progress`` falls. A wasted
    turn that changes nothing (``look``) is neither optimal nor an error.

:func:`try_action` plays one action from a snapshot and returns the :class:`ActionOutcome`
(its own snapshot included, so continuations start from it without replaying);
:class:`StateJudge` caches outcomes per action for one probe state, chooses forced wrong actions,
and computes the rollout value of an action under a continuation policy.

Example:
    >>> before = {"expert_plan": ["go east", "take coin"], "progress": 0.0}
    >>> after = lambda plan, **flags: {"expert_plan": plan, "progress": 0.0, "won": False, "lost": False, **flags}
    >>> is_optimal("go east", before, after(["take coin"]))
    True
    >>> is_optimal("look", before, after(["go east", "take coin"])), is_error(before, after(["go east", "take coin"]))
    (False, False)
    >>> is_optimal("go west", before, after(["go east", "go east", "take coin"])), is_error(
    ...     before, after(["go east", "go east", "take coin"]))
    (False, True)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_budget.agents.base import close_agent, required_info_keys
from agentgym_budget.agents.registry import AgentSpec
from agentgym_budget.core.text import is_admissible
from agentgym_budget.eval.probes.states import HistoryTurn, ProbePoint, plan_of, prime_agent
from agentgym_budget.runner.rollout import EpisodeResult, play_episode
from agentgym_budget.snapshots.state import EnvState

__all__: list[str] = []

JUDGE_INFO_KEYS = frozenset({"expert_plan", "expert_action"})
"""Opt-in ``info`` keys the judge needs from the env."""

_TOLERANCE = 1e-9


def is_optimal(action: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether ``action``, taken in the state of ``before``, agrees with the expert (module docstring)."""
    plan = plan_of(before)
    if plan and action == plan[0]:
        return True
    if after.get("won"):
        return True
    if after.get("lost") or not plan:
        return False
    remaining = len(plan_of(after))
    return 0 < remaining <= len(plan) - 1


def is_error(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether the step from ``before`` to ``after`` is an error (module docstring)."""
    remaining = plan_of(after)
    return is_error_step(
        len(plan_of(before)),
        len(remaining) if remaining or after.get("won") else None,
        float(before.get("progress", 0.0)),
        float(after.get("progress", 0.0)),
        won=bool(after.get("won")),
        lost=bool(after.get("lost")),
    )


def is_error_step(
    plan_before: int | None,
    plan_after: int | None,
    progress_before: float,
    progress_after: float,
    *,
    won: bool,
    lost: bool,
) -> bool:
    """:func:`is_error` on plan lengths (``None``: no plan in a running episode) and progress values.

    Example:
        >>> is_error_step(3, 4, 0.5, 0.5, won=False, lost=False), is_error_step(3, 3, 0.5, 0.25, won=False, lost=False)
        (True, True)
        >>> is_error_step(3, 3, 0.5, 0.5, won=False, lost=False), is_error_step(1, 0, 0.5, 1.0, won=True, lost=False)
        (False, False)
    """
    if won:
        return False
    if lost or plan_after is None:
        return True
    if progress_after < progress_before - _TOLERANCE:
        return True
    return plan_before is not None and plan_after > plan_before


def hidden_keys_for(agent: object) -> frozenset[str]:
    """The judge's ``info`` keys that ``agent`` did not ask for (removed from what it sees).

    Example:
        >>> from agentgym_budget.agents import ExpertAgent, RandomAgent
        >>> sorted(hidden_keys_for(RandomAgent())), sorted(hidden_keys_for(ExpertAgent()))
        (['expert_action', 'expert_plan'], ['expert_plan'])
    """
    return JUDGE_INFO_KEYS - required_info_keys(agent)


@dataclass(frozen=True)
class ActionOutcome:
    """What one action does from a state.

    Attributes:
        action: The action.
        valid: It was one of the state's admissible actions (:func:`~agentgym_budget.core.text.is_admissible`).
        optimal: It agrees with the expert.
        error: It is an error.
        won: The task was won by it.
        lost: The task was lost by it.
        ended: The episode ended with it (won, lost or out of turns).
        progress_before: ``progress`` before.
        progress_after: ``progress`` after.
        plan_before: The expert's plan length before.
        plan_after: The plan length after (``None``: no plan in a running episode).
        observation: The observation after.
        info: The ``info`` after.
        snapshot: The state after.
    """

    action: str
    valid: bool
    optimal: bool
    error: bool
    won: bool
    lost: bool
    ended: bool
    progress_before: float
    progress_after: float
    plan_before: int
    plan_after: int | None
    observation: str = field(repr=False)
    info: Mapping[str, Any] = field(repr=False)
    snapshot: EnvState = field(repr=False)

    @property
    def progress_delta(self) -> float:
        """``progress`` after minus before."""
        return self.progress_after - self.progress_before


def try_action(env: gym.Env, snapshot: EnvState, info: Mapping[str, Any], action: str) -> ActionOutcome:
    """Restore ``snapshot`` (whose ``info`` is ``info``) into ``env``, play ``action`` and judge it."""
    env.restore(snapshot)
    observation, _, terminated, truncated, after = env.step(action)
    remaining = plan_of(after)
    return ActionOutcome(
        action=action,
        valid=is_admissible(action, info.get("admissible_actions") or ()),
        optimal=is_optimal(action, info, after),
        error=is_error(info, after),
        won=bool(after.get("won")),
        lost=bool(after.get("lost")),
        ended=bool(terminated or truncated),
        progress_before=float(info.get("progress", 0.0)),
        progress_after=float(after.get("progress", 0.0)),
        plan_before=len(plan_of(info)),
        plan_after=len(remaining) if remaining or after.get("won") else None,
        observation=observation,
        info=dict(after),
        snapshot=env.snapshot(),
    )


async def continue_from(
    env: gym.Env,
    outcome: ActionOutcome,
    agent: Any,
    *,
    task_id: str,
    seed: int,
    budget: int,
    show_budget: bool,
) -> EpisodeResult:
    """Restore the state after ``outcome`` and let ``agent`` (already reset and primed) play out the episode."""
    env.restore(outcome.snapshot)
    return await play_episode(
        env,
        agent,
        task_id=task_id,
        budget=budget,
        seed=seed,
        show_budget=show_budget,
        start=(outcome.observation, outcome.info),
        reset_agent=False,
        hidden_keys=hidden_keys_for(agent),
    )


class StateJudge:
    """Every judgement from one probe state, with outcomes and continuation values cached per action.

    Args:
        env: The stack the state was snapshotted on (or one made like it).
        point: The probe state.
        show_budget: Whether agents see their budget.
    """

    def __init__(self, env: gym.Env, point: ProbePoint, *, show_budget: bool = False) -> None:
        self.env = env
        self.point = point
        self.show_budget = show_budget
        self._outcomes: dict[str, ActionOutcome] = {}
        self._values: dict[tuple[str, str, int], list[bool]] = {}

    def outcome(self, action: str) -> ActionOutcome:
        """The outcome of ``action`` from the probe state."""
        if action not in self._outcomes:
            self._outcomes[action] = try_action(self.env, self.point.snapshot, self.point.info, action)
        return self._outcomes[action]

    def wrong_action(
        self, snapshot: EnvState, info: Mapping[str, Any], rng: random.Random, *, harmful: bool = True
    ) -> ActionOutcome | None:
        """A wrong action from the state ``snapshot`` (whose ``info`` is ``info``), drawn with ``rng``.

        Candidates are the admissible actions that are not optimal and leave the episode running with
        a plan for the expert (the task stays solvable). With ``harmful`` the errors among them are
        preferred (plan longer or progress lower); if there is none, any candidate is used. ``None``
        when there is no candidate at all.
        """
        outcomes = [try_action(self.env, snapshot, info, action) for action in info.get("admissible_actions") or ()]
        candidates = [o for o in outcomes if not o.optimal and not o.ended and o.plan_after is not None]
        preferred = [o for o in candidates if o.error] if harmful else []
        pool = preferred or candidates
        return rng.choice(pool) if pool else None

    async def value(
        self,
        action: str,
        spec: AgentSpec,
        *,
        rollouts: int,
        seeds: Iterable[int],
    ) -> list[bool]:
        """Whether each of ``rollouts`` continuations by a fresh ``spec`` agent wins after ``action``.

        The continuation agent is primed with the reference prefix and the probed action, then plays
        with the turns the episode has left. Cached per (action, agent, rollouts).
        """
        key = (action, spec.name, rollouts)
        if key in self._values:
            return self._values[key]
        outcome = self.outcome(action)
        point = self.point
        wins: list[bool] = []
        for seed in list(seeds)[:rollouts]:
            if outcome.ended:
                wins.append(outcome.won)
                continue
            agent = spec.build()
            turns = (*point.history, HistoryTurn(point.observation, point.info, action))
            await prime_agent(
                agent,
                point.start,
                turns,
                seed=seed,
                budget=point.budget,
                show_budget=self.show_budget,
                hidden=hidden_keys_for(agent),
            )
            try:
                result = await continue_from(
                    self.env,
                    outcome,
                    agent,
                    task_id=point.trajectory.task_id,
                    seed=seed,
                    budget=point.budget,
                    show_budget=self.show_budget,
                )
            finally:
                await close_agent(agent)
            wins.append(result.won)
        self._values[key] = wins
        return wins
