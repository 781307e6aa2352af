"""BudgetMix: draw each episode's turn budget from a distribution (training-time budget variation)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import RecordConstructorArgs

from agentgym_budget.errors import InvalidBudgetError, WrapperOrderError
from agentgym_budget.snapshots import schema
from agentgym_budget.snapshots import stack as snapshot
from agentgym_budget.wrappers.turn_budget import TurnBudget, validate_budget

__all__ = ["BudgetMix", "BudgetSampler"]

BudgetSampler = Callable[[np.random.Generator], int]
"""A callable budget distribution: receives the wrapper's generator, returns a positive int."""

_BUDGET_STREAM = 0xB0D6E7
"""Mixed into the reset seed so budget draws are independent of the env's own task draws."""


class BudgetMix(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """At every reset, draw the episode's budget and hand it to the :class:`TurnBudget` below.

    ``budgets`` is either a sequence of positive integers (drawn with probabilities
    ``weights``, uniform by default) or a callable ``sampler(rng) -> int`` receiving a
    :class:`numpy.random.Generator`. Draws are reproducible: ``reset(seed=s)`` reseeds
    the wrapper's generator from ``s`` (independently of the task draw), and later
    resets without a seed continue that stream. An explicit
    ``reset(options={"max_turns": n})`` overrides the draw for that episode. The drawn
    budget is reported as ``info["sampled_budget"]`` (and, as always, ``info["max_turns"]``).

    Args:
        env: A stack that contains a :class:`TurnBudget`.
        budgets: Budget values, or a sampler callable.
        weights: Relative probabilities of ``budgets`` (non-negative, not all zero).

    Raises:
        WrapperOrderError: There is no ``TurnBudget`` in ``env``.
        InvalidBudgetError: A budget value, the weights, or a sampled value is invalid.

    Example:
        >>> import gymnasium as gym
        >>> import agentgym_budget
        >>> base = gym.make("agentgym_budget/TextWorld-CoinCollector-v0")
        >>> env = BudgetMix(TurnBudget(base, max_turns=50), budgets=[5, 10, 20], weights=[2, 1, 1])
        >>> budgets = [env.reset(seed=s)[1]["max_turns"] for s in range(6)]
        >>> budgets == [env.reset(seed=s)[1]["max_turns"] for s in range(6)]
        True
        >>> set(budgets) <= {5, 10, 20}
        True
    """

    def __init__(
        self,
        env: gym.Env[str, str],
        budgets: Sequence[int] | BudgetSampler,
        weights: Sequence[float] | None = None,
    ) -> None:
        RecordConstructorArgs.__init__(self, budgets=budgets, weights=weights)
        gym.Wrapper.__init__(self, env)
        if not any(isinstance(layer, TurnBudget) for layer in snapshot.layers(env)):
            raise WrapperOrderError(
                "BudgetMix needs a TurnBudget below it to apply the drawn budget: "
                "use BudgetMix(TurnBudget(env, max_turns=...), budgets=...)."
            )
        if callable(budgets):
            if weights is not None:
                raise InvalidBudgetError("BudgetMix: weights apply to a list of budgets, not to a sampler callable.")
            self._sampler: BudgetSampler | None = budgets
            self._values: tuple[int, ...] = ()
            self._probabilities: np.ndarray | None = None
        else:
            self._sampler = None
            self._values = tuple(validate_budget(b, "in BudgetMix(budgets=...)") for b in budgets)
            if not self._values:
                raise InvalidBudgetError("BudgetMix: budgets is empty; give at least one positive integer.")
            self._probabilities = self._normalise(weights, len(self._values))
        self._rng: np.random.Generator | None = None
        self._sampled: int | None = None

    @staticmethod
    def _normalise(weights: Sequence[float] | None, size: int) -> np.ndarray:
        if weights is None:
            return np.full(size, 1.0 / size)
        values = [float(w) for w in weights]
        if len(values) != size or any(not math.isfinite(w) or w < 0 for w in values) or sum(values) <= 0:
            raise InvalidBudgetError(
                f"BudgetMix: weights {list(weights)!r} must be {size} finite non-negative numbers, not all zero."
            )
        return np.asarray(values) / sum(values)

    @property
    def sampled_budget(self) -> int | None:
        """The budget drawn for the current episode (``None`` if it was set explicitly)."""
        return self._sampled

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng([seed, _BUDGET_STREAM])
        elif self._rng is None:
            self._rng = np.random.default_rng()
        options = dict(options or {})
        if "max_turns" in options:
            self._sampled = None
        else:
            self._sampled = self._draw()
            options["max_turns"] = self._sampled
        obs, info = self.env.reset(seed=seed, options=options)
        info["sampled_budget"] = self._sampled
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        info["sampled_budget"] = self._sampled
        return obs, reward, terminated, truncated, info

    def _draw(self) -> int:
        if self._sampler is not None:
            return validate_budget(self._sampler(self._rng), "returned by the BudgetMix sampler")
        return self._values[int(self._rng.choice(len(self._values), p=self._probabilities))]

    def get_wrapper_state(self) -> tuple[Any, int | None]:
        """This wrapper's part of a snapshot: its generator state and the current draw."""
        rng_state = copy.deepcopy(self._rng.bit_generator.state) if self._rng is not None else None
        return (rng_state, self._sampled)

    def check_wrapper_state(self, part: Any) -> tuple[np.random.Generator | None, int | None]:
        """The part of :meth:`get_wrapper_state` checked (a generator built from it; nothing is set).

        Raises:
            SnapshotMismatchError: The generator state or the draw is malformed.
        """
        rng_state, sampled = schema.sequence(part, "the BudgetMix part", 2)
        rng = None if rng_state is None else schema.generator_state(rng_state, "the BudgetMix generator")
        return rng, None if sampled is None else schema.count(sampled, "the BudgetMix draw", low=1)

    def set_wrapper_state(self, part: Any) -> None:
        """Restore the part returned by :meth:`get_wrapper_state` (checked first: :meth:`check_wrapper_state`)."""
        self._rng, self._sampled = self.check_wrapper_state(part)
