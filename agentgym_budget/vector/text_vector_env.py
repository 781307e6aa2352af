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

import numbers
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from agentgym_budget.errors import EpisodeOverError, InvalidActionError, InvalidOptionError
from agentgym_budget.wrappers import TurnBudget

__all__ = ["TextVectorEnv", "autoreset_mode_of"]

_Outcome = tuple[Any, float, bool, bool, dict[str, Any], dict[str, Any] | None]
"""One sub-env's step: observation, reward, terminated, truncated, info, and the final step (same_step)."""


def autoreset_mode_of(value: object, owner: str = "TextVectorEnv") -> AutoresetMode:
    """``value`` as an :class:`~gymnasium.vector.AutoresetMode` (the enum, its value or its lower-case name).

    Example:
        >>> autoreset_mode_of("same_step")
        <AutoresetMode.SAME_STEP: 'SameStep'>

    Raises:
        InvalidOptionError: ``value`` names no autoreset mode.
    """
    modes = {**{mode.name.lower(): mode for mode in AutoresetMode}, **{mode.value: mode for mode in AutoresetMode}}
    if isinstance(value, AutoresetMode):
        return value
    if isinstance(value, str) and value in modes:
        return modes[value]
    raise InvalidOptionError(
        f"{owner}: unknown autoreset_mode {value!r}; expected a gymnasium.vector.AutoresetMode or one of {sorted(modes)}."
    )


def _count(value: object, name: str, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidOptionError(f"TextVectorEnv: {name} must be a positive integer, got {value!r}.")
    return int(value)


def _per_env(value: object) -> bool:
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)


class TextVectorEnv(VectorEnv):
    """``num_envs`` sub-envs of one id, stepped in this process (see the module docstring).

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
        self.num_envs = _count(num_envs, "num_envs")
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        self.threads = _count(threads, "threads", allow_none=True)
        budgets = self._budgets(max_turns)
        first = gym.make(env_id, **env_kwargs).unwrapped
        _ = first.task_ids  # listed once, before cloning, so that every clone shares the list
        bases = [first, *(first.clone(share_engine=True) for _ in range(self.num_envs - 1))]
        self.envs: list[gym.Env] = [
            base if budget is None else TurnBudget(base, max_turns=budget)
            for base, budget in zip(bases, budgets, strict=True)
        ]
        """The sub-envs (each a base env, in a :class:`TurnBudget` when ``max_turns`` is given)."""
        self.metadata = {**first.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = first.render_mode
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._pool = ThreadPoolExecutor(self.threads) if self.threads and self.threads > 1 else None
        self._observations: list[Any] = [None] * self.num_envs
        self._ended = np.zeros(self.num_envs, dtype=np.bool_)
        self._started = np.zeros(self.num_envs, dtype=np.bool_)

    def _budgets(self, max_turns: int | Sequence[int] | None) -> list[int | None]:
        if max_turns is None or not _per_env(max_turns):
            return [max_turns] * self.num_envs
        if len(max_turns) != self.num_envs:
            raise InvalidOptionError(
                f"TextVectorEnv: max_turns must be one budget or one per sub-env ({self.num_envs}), "
                f"got {len(max_turns)} budgets."
            )
        return [int(budget) if isinstance(budget, np.integer) else budget for budget in max_turns]

    # ------------------------------------------------------------------ helpers
    def _map(self, work: Callable[[int], Any], indices: Sequence[int]) -> list[Any]:
        """``work(i)`` for every index, on the pool if any; results in ``indices`` order."""
        if self._pool is None or len(indices) < 2:
            return [work(index) for index in indices]
        chunks = [indices[part :: self.threads] for part in range(self.threads)]
        done = list(self._pool.map(lambda chunk: [work(index) for index in chunk], chunks))
        by_index = {
            index: result
            for chunk, results in zip(chunks, done, strict=True)
            for index, result in zip(chunk, results, strict=True)
        }
        return [by_index[index] for index in indices]

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
            return [int(seed) + index for index in range(self.num_envs)]
        if _per_env(seed) and len(seed) == self.num_envs:
            return [None if value is None else int(value) for value in seed]
        raise InvalidOptionError(
            f"TextVectorEnv.reset: seed must be None, an int (sub-env i gets seed + i) or one seed per sub-env "
            f"({self.num_envs}), got {seed!r}."
        )

    def _split_options(self, options: dict[str, Any] | None) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
        """The reset mask and each sub-env's own options."""
        own = dict(options or {})
        mask = own.pop("reset_mask", None)
        if mask is None:
            mask = np.ones(self.num_envs, dtype=np.bool_)
        elif (
            not isinstance(mask, np.ndarray)
            or mask.shape != (self.num_envs,)
            or mask.dtype != np.bool_
            or not mask.any()
        ):
            raise InvalidOptionError(
                f"TextVectorEnv.reset: options['reset_mask'] must be a numpy bool array of shape ({self.num_envs},) "
                f"selecting at least one sub-env, got {mask!r:.120}."
            )
        per_env: list[dict[str, Any] | None] = []
        for index in range(self.num_envs):
            mine: dict[str, Any] = {}
            for key, value in own.items():
                if _per_env(value):
                    if len(value) != self.num_envs:
                        raise InvalidOptionError(
                            f"TextVectorEnv.reset: options[{key!r}] has {len(value)} values; give one per sub-env "
                            f"({self.num_envs}) or a single value for all."
                        )
                    value = value[index]
                    value = value.item() if isinstance(value, np.generic) else value
                    if value is None:
                        continue
                mine[key] = value
            per_env.append(mine or (None if options is None else {}))
        return mask, per_env

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Reset every sub-env (or those ``options["reset_mask"]`` selects); see the module docstring.

        Raises:
            InvalidOptionError: A bad ``seed``, ``reset_mask`` or per-env option list, or an option no
                sub-env understands.
        """
        seeds = self._seeds(seed)
        mask, per_env = self._split_options(options)
        indices = [int(index) for index in np.flatnonzero(mask)]
        results = self._map(lambda i: self.envs[i].reset(seed=seeds[i], options=per_env[i]), indices)
        infos: dict[str, Any] = {}
        for index, (observation, info) in zip(indices, results, strict=True):
            self._observations[index] = observation
            self._ended[index], self._started[index] = False, True
            infos = self._add_info(infos, info, index)
        return tuple(self._observations), infos

    def step(
        self, actions: Sequence[str]
    ) -> tuple[tuple[Any, ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-env with its action; autoreset as ``metadata["autoreset_mode"]`` says.

        Raises:
            InvalidActionError: ``actions`` is not a sequence of ``num_envs`` actions.
            EpisodeOverError: A sub-env was never reset, or (``autoreset_mode="disabled"``) its episode ended.
        """
        if (
            isinstance(actions, (str, bytes))
            or not isinstance(actions, (Sequence, np.ndarray))
            or len(actions) != self.num_envs
        ):
            if isinstance(actions, (str, bytes)) or not hasattr(actions, "__len__"):
                given = f"a {type(actions).__name__}"
            else:
                given = f"{len(actions)} actions in a {type(actions).__name__}"
            raise InvalidActionError(
                f"TextVectorEnv.step: expected a sequence of {self.num_envs} actions (one str per sub-env), got {given}."
            )
        if not self._started.all():
            missing = np.flatnonzero(~self._started).tolist()
            raise EpisodeOverError(f"TextVectorEnv.step: sub-envs {missing[:10]} were never reset; call reset() first.")
        if self.autoreset_mode is AutoresetMode.DISABLED and self._ended.any():
            ended = np.flatnonzero(self._ended).tolist()
            raise EpisodeOverError(
                f"TextVectorEnv.step: the episodes of sub-envs {ended[:10]} ended and autoreset_mode is 'disabled'; "
                "reset them with options={'reset_mask': ...} first."
            )
        outcomes: list[_Outcome] = self._map(lambda i: self._advance(i, actions[i]), list(range(self.num_envs)))
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        for index, (observation, reward, term, trunc, info, final) in enumerate(outcomes):
            self._observations[index] = observation
            rewards[index], terminated[index], truncated[index] = reward, term, trunc
            if final is not None:
                infos = self._add_info(infos, final, index)
            infos = self._add_info(infos, info, index)
        self._ended = terminated | truncated
        return tuple(self._observations), rewards, terminated, truncated, infos

    def _advance(self, index: int, action: Any) -> _Outcome:
        """One sub-env's part of a vector step (run on any thread; touches only sub-env ``index``)."""
        env = self.envs[index]
        if self._ended[index] and self.autoreset_mode is AutoresetMode.NEXT_STEP:
            observation, info = env.reset()
            return observation, 0.0, False, False, info, None
        observation, reward, term, trunc, info = env.step(action)
        if (term or trunc) and self.autoreset_mode is AutoresetMode.SAME_STEP:
            final = {"final_obs": observation, "final_info": info}
            observation, info = env.reset()
            return observation, reward, term, trunc, info, final
        return observation, reward, term, trunc, info, None

    def render(self) -> tuple[Any, ...]:
        """Each sub-env's ``render()``."""
        return tuple(env.render() for env in self.envs)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call (or read, if not callable) attribute ``name`` of every sub-env."""
        results = []
        for env in self.envs:
            value = env.get_wrapper_attr(name)
            results.append(value(*args, **kwargs) if callable(value) else value)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every sub-env."""
        return tuple(env.get_wrapper_attr(name) for env in self.envs)

    def set_attr(self, name: str, values: Any) -> None:
        """Set attribute ``name`` of every sub-env (one value each, or one value for all)."""
        if not _per_env(values):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise InvalidOptionError(
                f"TextVectorEnv.set_attr: give one value per sub-env ({self.num_envs}) or one for all, got {len(values)}."
            )
        for env, value in zip(self.envs, values, strict=True):
            env.set_wrapper_attr(name, value)

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-env and stop the thread pool."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for env in self.envs:
            env.close()

    def __repr__(self) -> str:
        spec = getattr(self.envs[0].unwrapped, "spec", None) if self.envs else None
        name = spec.id if spec is not None else type(self.envs[0].unwrapped).__name__ if self.envs else "?"
        return f"TextVectorEnv({name}, num_envs={self.num_envs}, threads={self.threads})"
