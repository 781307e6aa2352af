r"""ProcessReward: potential-based reward shaping from the ``progress`` signal, plus an optional invalid-action cost.

Every task family reports ``info["progress"]`` in [0, 1], a step-level signal of how far the task is
done (TextWorld: score / max score; WebShop: the reward the viewed product would get; ALFWorld: the
goal-condition score). :class:`ProcessReward` turns it into a dense reward with *potential-based
shaping* (Ng, Harada and Russell, 1999), the potential being :math:`\Phi(s) = \text{progress}(s)`:

.. math:: r'_t = r_t + c\,\bigl(\gamma\,\Phi(s_{t+1}) - \Phi(s_t)\bigr) - p\,[a_t \text{ invalid}]

with coefficient :math:`c`, discount :math:`\gamma` (use the learner's) and invalid-action penalty
:math:`p` (0 by default).

Why the optimal policies do not change: the shaping terms telescope. Over an episode
:math:`s_0, a_0, \ldots, s_T`, with :math:`G = \sum_t \gamma^t r_t` the original discounted return,

.. math:: G' = \sum_{t<T} \gamma^t r'_t = G + c\,\bigl(\gamma^T \Phi(s_T) - \Phi(s_0)\bigr)

(without penalty). With ``terminal_potential="zero"`` (the default) the potential of the state an
episode *ends* in, by termination or by truncation (put this wrapper outside ``TurnBudget``), counts
as 0, so :math:`G' = G - c\,\Phi(s_0)`: every episode from the same start state is shifted by the
same constant, so any ranking of policies (by return, or expected return) is unchanged, and so is
the set of optimal policies (Grzes, 2017, on shaping in episodic tasks). With
``terminal_potential="progress"`` the last state keeps its potential, which is what a learner that
bootstraps through time-limit truncations expects, but then :math:`G'` also rewards how far a failed
episode got (``c * gamma^T * progress``), which can reorder policies under a turn budget.

Invalid actions: an action is *invalid* when it is not one of the ``admissible_actions`` of the
state it was taken in (the previous ``info``), compared by :func:`~agentgym_budget.core.text.is_admissible`: case and runs of
white space are ignored, and an admissible entry with ``<...>`` placeholders (WebShop's
``search[<keywords>]``) matches any non-empty text in their place. The penalty is a cost, not
shaping: it *can* change which policies are optimal (it makes wasted turns strictly worse); keep it
0 for the invariance above.

``info`` gains ``env_reward`` (the family's own reward), ``shaping_reward`` (the shaping term),
``invalid_action`` and ``potential`` (:math:`\Phi` of the new state as used for shaping).
The wrapper keeps the previous potential and admissible actions as its snapshot part, so shaped
stacks can be snapshotted, restored and forked like any other.

Example:
    >>> import gymnasium as gym
    >>> import agentgym_budget
    >>> from agentgym_budget.wrappers import TurnBudget
    >>> base = gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=1, info_keys={"expert_plan"})
    >>> env = ProcessReward(TurnBudget(base, max_turns=10), coefficient=1.0, invalid_penalty=0.1)
    >>> obs, info = env.reset(seed=0)
    >>> start_potential, shaped, original = info["progress"], [], []
    >>> for action in ["dance", *info["expert_plan"]]:  # "dance" is not admissible: penalised
    ...     obs, reward, terminated, truncated, info = env.step(action)
    ...     shaped.append(reward); original.append(info["env_reward"])
    >>> [round(r, 3) for r in shaped], original
    ([-0.1, 1.333, 1.333, 0.333], [0.0, 1.0, 1.0, 1.0])
    >>> abs(sum(shaped) - (sum(original) - start_potential - 0.1)) < 1e-9  # G' = G - c * Phi(s_0) - penalty
    True
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from agentgym_budget.core.text import is_admissible
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.snapshots import schema

__all__ = ["ProcessReward"]

TERMINAL_POTENTIALS = ("zero", "progress")
"""Potential of the state an episode ends in: 0 (policy-invariant) or its progress (bootstrapping learners)."""


def _number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidOptionError(f"ProcessReward: {name} must be a finite number, got {value!r}.")
    return float(value)


class ProcessReward(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """Shape rewards with the ``progress`` potential (see the module docstring for the definitions).

    Args:
        env: A text env stack (any family: only the ``progress`` and ``admissible_actions`` keys are read).
        coefficient: Scale ``c`` of the shaping term (``0`` turns shaping off).
        gamma: Discount ``gamma`` in (0, 1] of the shaping term; use the learner's discount.
        invalid_penalty: Cost ``p >= 0`` subtracted when the action was not admissible.
        terminal_potential: ``"zero"`` (policy-invariant, default) or ``"progress"``.

    Raises:
        InvalidOptionError: A parameter is out of range.
    """

    def __init__(
        self,
        env: gym.Env[str, str],
        coefficient: float = 1.0,
        gamma: float = 1.0,
        invalid_penalty: float = 0.0,
        terminal_potential: str = "zero",
    ) -> None:
        RecordConstructorArgs.__init__(
            self,
            coefficient=coefficient,
            gamma=gamma,
            invalid_penalty=invalid_penalty,
            terminal_potential=terminal_potential,
        )
        gym.Wrapper.__init__(self, env)
        self.coefficient = _number(coefficient, "coefficient")
        self.gamma = _number(gamma, "gamma")
        self.invalid_penalty = _number(invalid_penalty, "invalid_penalty")
        if not 0 < self.gamma <= 1:
            raise InvalidOptionError(f"ProcessReward: gamma must be in (0, 1], got {gamma!r}.")
        if self.invalid_penalty < 0:
            raise InvalidOptionError(f"ProcessReward: invalid_penalty must be >= 0, got {invalid_penalty!r}.")
        if terminal_potential not in TERMINAL_POTENTIALS:
            raise InvalidOptionError(
                f"ProcessReward: terminal_potential must be one of {TERMINAL_POTENTIALS}, got {terminal_potential!r}."
            )
        self.terminal_potential = terminal_potential
        self._potential = 0.0
        self._admissible: tuple[str, ...] = ()

    @staticmethod
    def _progress(info: dict[str, Any]) -> float:
        return float(info.get("progress", 0.0) or 0.0)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._potential = self._progress(info)
        self._admissible = tuple(info.get("admissible_actions") or ())
        info.update(env_reward=0.0, shaping_reward=0.0, invalid_action=False, potential=self._potential)
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        invalid = not is_admissible(action, self._admissible)
        obs, reward, terminated, truncated, info = self.env.step(action)
        ended = bool(terminated or truncated)
        potential = 0.0 if ended and self.terminal_potential == "zero" else self._progress(info)
        shaping = self.coefficient * (self.gamma * potential - self._potential)
        shaped = float(reward) + shaping - (self.invalid_penalty if invalid else 0.0)
        self._potential = potential
        self._admissible = tuple(info.get("admissible_actions") or ())
        info.update(env_reward=float(reward), shaping_reward=shaping, invalid_action=invalid, potential=potential)
        return obs, shaped, terminated, truncated, info

    def get_wrapper_state(self) -> tuple[float, tuple[str, ...]]:
        """This wrapper's part of a snapshot: the current potential and admissible actions."""
        return (self._potential, self._admissible)

    def check_wrapper_state(self, part: Any) -> tuple[float, tuple[str, ...]]:
        """The part of :meth:`get_wrapper_state` checked field by field (nothing is set).

        Raises:
            SnapshotMismatchError: The potential is not a finite number or the actions are not strings.
        """
        potential, admissible = schema.sequence(part, "the ProcessReward part", 2)
        actions = schema.sequence(admissible, "the ProcessReward admissible actions")
        return schema.finite(potential, "the ProcessReward potential"), tuple(
            schema.text(action, "a ProcessReward admissible action") for action in actions
        )

    def set_wrapper_state(self, part: Any) -> None:
        """Restore the part returned by :meth:`get_wrapper_state` (checked first: :meth:`check_wrapper_state`)."""
        self._potential, self._admissible = self.check_wrapper_state(part)
