"""A native, in-process vector env over one agentgym-budget id: :class:`TextVectorEnv`.

``gym.make_vec(ID, num_envs=n, vectorization_mode="vector_entry_point", ...)`` returns it for every
registered id (``vectorization_mode=None`` picks it too, as Gymnasium does when an id has a vector
entry point; ``"sync"`` and ``"async"`` still give Gymnasium's own vector envs). Keyword arguments
are the sub-envs' own (``level=30``, ``info_keys=[...]``, ``lean=True``, ...) plus:

* ``autoreset_mode``: ``"next_step"`` (default), ``"same_step"`` or ``"disabled"``, with Gymnasium's
  semantics (``metadata["autoreset_mode"]``); for the same seeds and actions the observations,
  rewards, flags and infos are those of ``SyncVectorEnv``;
* ``max_turns``: a :class:`~agentgym_budget.wrappers.TurnBudget` on every sub-env (an int, or one
  per sub-env); it stays the sub-env's budget across autoresets;
* ``threads``: step the sub-envs on a pool of ``threads`` threads (``None`` or 1: in the calling
  thread). Results do not depend on it: each sub-env is stepped by one thread at a time and the
  batch is assembled in sub-env order. Threads help only where an engine releases the GIL
  (``benchmarks/vector_env.py`` measures it per family).

**Per-env options**: in ``reset(options=...)`` a list, tuple or 1-D array of ``num_envs`` values
gives each sub-env its own value, e.g. ``{"task": [0, 0, 5, 5], "max_turns": [10, 20, 10, 20]}``
(``None`` in such a list: that sub-env does not get the option); any other value goes to every
sub-env. ``options["reset_mask"]`` (a bool array of shape ``(num_envs,)``) resets only the selected
sub-envs, as in Gymnasium; a ``max_turns`` option needs the ``max_turns`` argument (the TurnBudget).

**Memory**: the sub-envs are clones of one env: the task list, resolved game paths and parsed
games are shared (TextWorld parses a game once per process), each sub-env keeps its own engine.

Example:
    >>> import gymnasium as gym
    >>> import agentgym_budget
    >>> envs = gym.make_vec("agentgym_budget/TextWorld-CoinCollector-v0", num_envs=3,
    ...                     vectorization_mode="vector_entry_point", max_turns=5)
    >>> observations, infos = envs.reset(seed=0, options={"task": [0, 0, 1], "max_turns": [1, 5, 5]})
    >>> list(infos["task_id"]), infos["max_turns"].tolist()
    (['coin-l5-0', 'coin-l5-0', 'coin-l5-1'], [1, 5, 5])
    >>> observations, rewards, terminated, truncated, infos = envs.step(("look", "look", "look"))
    >>> truncated.tolist(), infos["turn"].tolist()
    ([True, False, False], [1, 1, 1])
    >>> _, _, _, _, infos = envs.step(("look", "look", "look"))  # sub-env 0 autoresets (next_step)
    >>> infos["turn"].tolist(), infos["max_turns"].tolist()
    ([0, 2, 2], [5, 5, 5])
    >>> envs.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.vector.batch import BatchVectorEnv, autoreset_mode_of, per_env, positive
from agentgym_budget.wrappers import TurnBudget

__all__ = ["TextVectorEnv"]


class TextVectorEnv(BatchVectorEnv):
    """``num_envs`` sub-envs of one id, stepped in this process (see the module docstring).

    A start is a reset of the sub-env's own env; batching, autoreset and per-env options are
    :class:`~agentgym_budget.vector.batch.BatchVectorEnv`'s.

    Args:
        env_id: A registered Gymnasium id, namespace included (``"agentgym_budget/TextWorld-Cooking-v0"``);
            ``gym.make_vec`` passes it.
        num_envs: Number of sub-envs.
        autoreset_mode: ``"next_step"`` (default), ``"same_step"``, ``"disabled"`` or an ``AutoresetMode``.
        max_turns: Turn budget of every sub-env (an int or one per sub-env); ``None``: no TurnBudget.
        threads: Threads stepping the sub-envs (``None`` or 1: the calling thread).
        **env_kwargs: Arguments of every sub-env (``gym.make(env_id, **env_kwargs)``).

    Raises:
        InvalidOptionError: ``num_envs`` or ``threads`` is not a positive integer, an unknown
            ``autoreset_mode``, or ``max_turns`` is a sequence without one budget per sub-env.
        InvalidBudgetError: A budget is not a positive integer.
        MissingDependencyError: The id needs an extra that is not installed.
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int = 1,
        *,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        max_turns: int | Sequence[int] | None = None,
        threads: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        num_envs = positive(num_envs, "num_envs", "TextVectorEnv")
        autoreset_mode_of(autoreset_mode)  # refused before the sub-envs are built
        threads = positive(threads, "threads", "TextVectorEnv", allow_none=True)
        budgets = _budgets(max_turns, num_envs)
        first = gym.make(env_id, **env_kwargs).unwrapped
        _ = first.task_ids  # listed once, before cloning, so that every clone shares the list
        bases = [first, *(first.clone(share_engine=True) for _ in range(num_envs - 1))]
        self.envs: list[gym.Env] = [
            base if budget is None else TurnBudget(base, max_turns=budget)
            for base, budget in zip(bases, budgets, strict=True)
        ]
        """The sub-envs (each a base env, in a :class:`TurnBudget` when ``max_turns`` is given)."""
        self._setup(num_envs, first, autoreset_mode, threads)

    def _reset_selected(
        self, indices: list[int], seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> list[tuple[Any, dict[str, Any]]]:
        return self._map(lambda i: self.envs[i].reset(seed=seeds[i], options=options[i]), indices)

    def _next_start(self, index: int) -> tuple[Any, dict[str, Any]]:
        return self.envs[index].reset()

    def __repr__(self) -> str:
        spec = getattr(self.envs[0].unwrapped, "spec", None) if self.envs else None
        name = spec.id if spec is not None else type(self.envs[0].unwrapped).__name__ if self.envs else "?"
        return f"TextVectorEnv({name}, num_envs={self.num_envs}, threads={self.threads})"


def _budgets(max_turns: int | Sequence[int] | None, num_envs: int) -> list[int | None]:
    if max_turns is None or not per_env(max_turns):
        return [max_turns] * num_envs
    if len(max_turns) != num_envs:
        raise InvalidOptionError(
            f"TextVectorEnv: max_turns must be one budget or one per sub-env ({num_envs}), "
            f"got {len(max_turns)} budgets."
        )
    return [int(budget) if isinstance(budget, np.integer) else budget for budget in max_turns]
