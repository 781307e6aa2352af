"""Built-in agents that need no model: random, expert, and noisy experts that do / do not recover.

All of them are seeded (the episode seed passed to ``reset``) and deterministic, and they never
look at the turn budget, so they are valid in both run modes of
:mod:`agentgym_budget.eval.passkt.plan`.

* :class:`RandomAgent` (``random``): uniform over ``info["admissible_actions"]``.
* :class:`ExpertAgent` (``expert``): the family's reference solver, ``info["expert_action"]``,
  re-planned from the current state every turn.
* :class:`NoisyExpertRecover` (``noisy-expert-recover``): with probability ``eps`` a random
  admissible action other than the expert's, otherwise the freshly re-planned ``expert_action``.
  A mistake costs turns (the expert plans the way back) but never the episode, unless it was fatal
  in the game itself.
* :class:`NoisyExpertNoRecover` (``noisy-expert-norecover``): follows the plan it made at reset
  (``info["expert_plan"]``) step by step; with probability ``eps`` it takes a random admissible
  action other than its next plan step *instead* (the step stays pending), and afterwards keeps
  following its stale plan. Once the plan is used up without a win it repeats the plan's last step:
  it is stuck. A turn played for it (:meth:`NoisyExpertNoRecover.observe`, used by the probes) advances
  its plan only when it was the pending plan step.

Both noisy experts err with the same probability ``eps`` at every turn (one draw per turn), so on
the expert's own path their single-step error rate is the same; they differ only in what happens
after an error that changed the state. That is what makes the budget effects of recovery visible
without any LLM: the recovering agent converts extra turns into success, the other one cannot.

Example:
    >>> info = {"admissible_actions": ["go east", "go west", "look"], "expert_action": "go east",
    ...         "expert_plan": ["go east", "take coin"]}
    >>> agent = NoisyExpertRecover(eps=0.0)
    >>> agent.reset("find the coin", "A room.", info, seed=1)
    >>> agent.act("A room.", info)
    'go east'
    >>> stale = NoisyExpertNoRecover(eps=0.0)
    >>> stale.reset("find the coin", "A room.", info, seed=1)
    >>> [stale.act("", info) for _ in range(3)]
    ['go east', 'take coin', 'take coin']
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from agentgym_budget.agents.base import SeededAgent
from agentgym_budget.errors import InvalidOptionError

__all__ = ["ExpertAgent", "NoisyExpertNoRecover", "NoisyExpertRecover", "RandomAgent"]

_FALLBACK = ""
"""Command sent when an agent has nothing to choose from (an empty line: a normal, wasted turn)."""


def check_eps(eps: object) -> float:
    """Return ``eps`` as a float in [0, 1], else raise :class:`InvalidOptionError`.

    Example:
        >>> check_eps(0.25)
        0.25
        >>> check_eps(2)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: The error rate eps must be a number in [0, 1], got 2.
    """
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) or not 0 <= eps <= 1:
        raise InvalidOptionError(f"The error rate eps must be a number in [0, 1], got {eps!r}.")
    return float(eps)


def _admissible(info: Mapping[str, Any]) -> list[str]:
    return list(info.get("admissible_actions") or ())


class RandomAgent(SeededAgent):
    """Uniformly random admissible actions (the empty command if there are none).

    Every built-in agent lists ``admissible_actions`` in its ``info_keys``: a standard key, except in
    lean envs (TextWorld's ``lean=True``), which then compute it for them.

    Example:
        >>> agent = RandomAgent()
        >>> agent.reset("", "", {}, seed=3)
        >>> agent.act("", {"admissible_actions": ["a", "b", "c"]}) in {"a", "b", "c"}
        True
    """

    info_keys = frozenset({"admissible_actions"})

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        choice = self.choose(_admissible(info))
        return _FALLBACK if choice is None else choice


class ExpertAgent(SeededAgent):
    """The family's reference solver: ``info["expert_action"]`` (random admissible when it has none).

    Example:
        >>> agent = ExpertAgent()
        >>> agent.reset("", "", {}, seed=0)
        >>> agent.act("", {"expert_action": "take coin", "admissible_actions": ["take coin", "look"]})
        'take coin'
    """

    info_keys = frozenset({"expert_action", "admissible_actions"})

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        expert = info.get("expert_action")
        if expert is not None:
            return expert
        choice = self.choose(_admissible(info))
        return _FALLBACK if choice is None else choice


class NoisyExpertRecover(SeededAgent):
    """With probability ``eps`` a random admissible non-expert action, else the re-planned expert action.

    Args:
        eps: Per-turn error probability in [0, 1].

    Raises:
        InvalidOptionError: ``eps`` is not in [0, 1].
    """

    info_keys = frozenset({"expert_action", "admissible_actions"})

    def __init__(self, eps: float = 0.3) -> None:
        super().__init__()
        self.eps = check_eps(eps)
        self.mistakes = 0

    def reset(
        self, goal: str, observation: str, info: Mapping[str, Any], *, seed: int, budget: int | None = None
    ) -> None:
        super().reset(goal, observation, info, seed=seed, budget=budget)
        self.mistakes = 0

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        expert = info.get("expert_action")
        if self.rng.random() < self.eps:
            mistake = self.choose(_admissible(info), exclude=expert)
            if mistake is not None:
                self.mistakes += 1
                return mistake
        if expert is not None:
            return expert
        choice = self.choose(_admissible(info))
        return _FALLBACK if choice is None else choice

    def stats(self) -> dict[str, Any]:
        """Mistakes made in the last episode."""
        return {"mistakes": self.mistakes}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(eps={self.eps})"


class NoisyExpertNoRecover(SeededAgent):
    """Follows the plan made at reset; with probability ``eps`` a random admissible non-plan action instead.

    Args:
        eps: Per-turn error probability in [0, 1].

    Raises:
        InvalidOptionError: ``eps`` is not in [0, 1].
    """

    info_keys = frozenset({"expert_plan", "admissible_actions"})

    def __init__(self, eps: float = 0.3) -> None:
        super().__init__()
        self.eps = check_eps(eps)
        self.plan: list[str] = []
        self.position = 0
        self.mistakes = 0

    def reset(
        self, goal: str, observation: str, info: Mapping[str, Any], *, seed: int, budget: int | None = None
    ) -> None:
        super().reset(goal, observation, info, seed=seed, budget=budget)
        self.plan = list(info.get("expert_plan") or ())
        self.position = 0
        self.mistakes = 0

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        # The pending plan step; once the plan is used up, its last step again (the agent is stuck).
        step = self.plan[min(self.position, len(self.plan) - 1)] if self.plan else None
        if self.rng.random() < self.eps:
            mistake = self.choose(_admissible(info), exclude=step)
            if mistake is not None:
                self.mistakes += 1
                return mistake
        if step is None:
            choice = self.choose(_admissible(info))
            return _FALLBACK if choice is None else choice
        self.position = min(self.position + 1, len(self.plan))
        return step

    def observe(self, observation: str, info: Mapping[str, Any], action: str) -> None:
        """A turn played for the agent: its pending plan step counts as done only if ``action`` is that step.

        Example:
            >>> agent = NoisyExpertNoRecover(eps=0.0)
            >>> agent.reset("", "", {"expert_plan": ["go east", "take coin"]}, seed=0)
            >>> agent.observe("", {}, "go west")  # not its step: the plan goes stale
            >>> agent.observe("", {}, "go east")
            >>> agent.act("", {"admissible_actions": ["take coin"]})
            'take coin'
        """
        if self.plan and self.position < len(self.plan) and action == self.plan[self.position]:
            self.position += 1

    def stats(self) -> dict[str, Any]:
        """Mistakes made in the last episode."""
        return {"mistakes": self.mistakes}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(eps={self.eps})"
