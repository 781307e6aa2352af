"""TurnBudget: a hard cap on the number of turns of an episode."""

from __future__ import annotations

import numbers
from typing import Any

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from agentgym_budget.core.text import OBSERVATION_MAX_LENGTH
from agentgym_budget.errors import EpisodeOverError, InvalidBudgetError, InvalidOptionError, SnapshotMismatchError
from agentgym_budget.snapshots import schema

__all__ = ["TurnBudget"]

DEFAULT_BUDGET_FORMAT = "\n\n[Turns left: {turns_left} of {max_turns}]"
"""Appended to observations when ``show_budget=True``. Fields: ``turn`` (turns taken),
``max_turns`` (the episode's budget) and ``turns_left``."""


def validate_budget(value: object, source: str = "") -> int:
    """Return ``value`` as an ``int`` if it is a positive integer, else raise :class:`InvalidBudgetError`.

    Example:
        >>> validate_budget(20)
        20
        >>> validate_budget(2.5)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidBudgetError: Invalid turn budget 2.5 (float): expected a positive integer number of turns, e.g. 20.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidBudgetError.for_value(value, source)
    return int(value)


class TurnBudget(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """Cap an episode at ``max_turns`` turns: truncation, never termination.

    Every call to ``step`` is one turn, whatever the action (an invalid command costs a
    turn too). When the ``max_turns``-th turn does not end the episode, it returns
    ``truncated=True``; a win or loss on that turn is ``terminated=True`` and
    ``truncated=False``. Stepping after the episode ended raises
    :class:`~agentgym_budget.errors.EpisodeOverError`.

    ``info`` gains ``turn`` (turns taken), ``max_turns`` (this episode's budget) and
    ``turns_left``. With ``show_budget=True`` the observation also tells the agent its
    remaining budget, formatted with ``budget_format`` (:data:`DEFAULT_BUDGET_FORMAT`).
    ``reset(options={"max_turns": n})`` sets the budget of one episode.

    Args:
        env: The environment to cap.
        max_turns: Default budget of every episode (a positive integer).
        show_budget: Append the remaining budget to every observation.
        budget_format: ``str.format`` template with the fields ``turn``, ``max_turns``, ``turns_left``.

    Raises:
        InvalidBudgetError: ``max_turns`` (or a per-episode ``max_turns``) is not a positive integer.
        InvalidOptionError: ``budget_format`` has unknown fields.

    Example:
        >>> import gymnasium as gym
        >>> import agentgym_budget
        >>> env = TurnBudget(gym.make("agentgym_budget/TextWorld-CoinCollector-v0"), max_turns=2, show_budget=True)
        >>> obs, info = env.reset(seed=0)
        >>> obs.splitlines()[-1], info["turns_left"]
        ('[Turns left: 2 of 2]', 2)
        >>> _ = env.step("look")
        >>> obs, reward, terminated, truncated, info = env.step("look")
        >>> terminated, truncated, info["turn"], obs.splitlines()[-1]
        (False, True, 2, '[Turns left: 0 of 2]')
    """

    def __init__(
        self,
        env: gym.Env[str, str],
        max_turns: int,
        *,
        show_budget: bool = False,
        budget_format: str = DEFAULT_BUDGET_FORMAT,
    ) -> None:
        RecordConstructorArgs.__init__(self, max_turns=max_turns, show_budget=show_budget, budget_format=budget_format)
        gym.Wrapper.__init__(self, env)
        self.max_turns = validate_budget(max_turns, "for TurnBudget(max_turns=...)")
        try:
            budget_format.format(turn=0, max_turns=1, turns_left=1)
        except (KeyError, IndexError, ValueError, AttributeError) as err:
            raise InvalidOptionError(
                f"Bad budget_format {budget_format!r} ({err!r}); use the fields {{turn}}, {{max_turns}}, "
                "{turns_left}, e.g. '[Turns left: {turns_left}]'."
            ) from err
        self.show_budget = bool(show_budget)
        self.budget_format = budget_format
        self._episode_budget = self.max_turns
        self._turn = 0
        self._episode_over = True
        self._started = False

    @property
    def turn(self) -> int:
        """Turns taken in the current episode."""
        return self._turn

    @property
    def episode_budget(self) -> int:
        """The budget of the current episode (``max_turns`` unless overridden at reset)."""
        return self._episode_budget

    @property
    def turns_left(self) -> int:
        """Turns remaining in the current episode."""
        return self._episode_budget - self._turn

    def set_episode_budget(self, budget: int) -> None:
        """Change the budget of the running episode (e.g. of a fork restored from a snapshot).

        ``info`` reports the new budget from the next step on. The episode must be running and the
        new budget must leave at least one turn.

        Raises:
            EpisodeOverError: No episode is running.
            InvalidBudgetError: ``budget`` is not a positive integer greater than the turns taken.

        Example:
            >>> import gymnasium as gym
            >>> import agentgym_budget
            >>> env = TurnBudget(gym.make("agentgym_budget/TextWorld-CoinCollector-v0"), max_turns=10)
            >>> _ = env.reset(seed=0)
            >>> _ = env.step("look")
            >>> env.set_episode_budget(2)
            >>> env.step("look")[3], env.turns_left
            (True, 0)
        """
        if not self._started or self._episode_over:
            raise EpisodeOverError("TurnBudget.set_episode_budget: no episode is running; call reset() first.")
        budget = validate_budget(budget, "for TurnBudget.set_episode_budget")
        if budget <= self._turn:
            raise InvalidBudgetError(
                f"TurnBudget.set_episode_budget: a budget of {budget} leaves no turn after the {self._turn} "
                "already taken; give more than that."
            )
        self._episode_budget = budget

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        options = dict(options or {})
        budget = options.pop("max_turns", None)
        self._episode_budget = self.max_turns if budget is None else validate_budget(budget, "in reset options")
        obs, info = self.env.reset(seed=seed, options=options or None)
        self._turn = 0
        self._episode_over = False
        self._started = True
        return self._decorate(obs, info)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise EpisodeOverError("TurnBudget: call reset() before step().")
        if self._episode_over:
            raise EpisodeOverError(
                f"TurnBudget: the episode is over after {self._turn} of {self._episode_budget} turns; "
                "call reset() to start a new one."
            )
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._turn += 1
        truncated = bool(truncated) or (self._turn >= self._episode_budget and not terminated)
        self._episode_over = bool(terminated) or truncated
        obs, info = self._decorate(obs, info)
        return obs, reward, terminated, truncated, info

    def _decorate(self, obs: str, info: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        info["turn"] = self._turn
        info["max_turns"] = self._episode_budget
        info["turns_left"] = self.turns_left
        if self.show_budget:
            notice = self.budget_format.format(
                turn=self._turn, max_turns=self._episode_budget, turns_left=self.turns_left
            )
            obs = obs[: max(0, OBSERVATION_MAX_LENGTH - len(notice))] + notice
        return obs, info

    def get_wrapper_state(self) -> tuple[int, int, bool, bool]:
        """This wrapper's part of a snapshot: budget, turn and episode flags."""
        return (self._episode_budget, self._turn, self._episode_over, self._started)

    def check_wrapper_state(self, part: Any) -> tuple[int, int, bool, bool]:
        """The part of :meth:`get_wrapper_state` checked field by field (nothing is set).

        The budget is the snapshot's (a snapshot taken under ``max_turns=10`` keeps 10 turns in a stack made
        with another ``max_turns``); the turn lies within it, and an episode at its budget is over.

        Raises:
            SnapshotMismatchError: A field has the wrong type or lies out of range.
        """
        budget, turn, over, started = schema.sequence(part, "the TurnBudget part", 4)
        budget = schema.count(budget, "the TurnBudget budget", low=1)
        turn = schema.count(turn, "the TurnBudget turn", high=budget)
        over, started = schema.boolean(over, "the TurnBudget episode flag"), schema.boolean(started, "started")
        if (turn == budget and not over) or (not started and (turn or not over)):
            raise SnapshotMismatchError(
                f"Malformed snapshot: a TurnBudget part at turn {turn} of {budget} with episode_over={over} and "
                f"started={started}; a genuine one ends the episode at its budget and starts at turn 0."
            )
        return budget, turn, over, started

    def set_wrapper_state(self, part: Any) -> None:
        """Restore the part returned by :meth:`get_wrapper_state` (checked first: :meth:`check_wrapper_state`)."""
        self._episode_budget, self._turn, self._episode_over, self._started = self.check_wrapper_state(part)
