"""The one vector base of this room: :class:`BatchVectorEnv`.

:class:`~agentgym_budget.vector.text_vector_env.TextVectorEnv` and
:class:`~agentgym_budget.vector.group_vector.GroupVectorEnv` differ only in how a sub-env *starts*: a reset of
its own env, or a fork of its group's one reset. Everything else is here, once: argument checks, seeds,
``options["reset_mask"]`` and per-env options (a list of ``num_envs`` values gives each sub-env its own value),
Gymnasium's three autoreset modes, stepping the sub-envs (on a thread pool if asked) and assembling the batch
(observations as a tuple, rewards and flags as arrays, infos in Gymnasium's vector form with ``_key`` masks).

A subclass sets up its sub-envs, calls :meth:`BatchVectorEnv._setup`, and implements :meth:`~BatchVectorEnv._reset_selected`
(the starts of a ``reset``) and :meth:`~BatchVectorEnv._next_start` (the start after an episode's end);
:meth:`~BatchVectorEnv._step_env` and :meth:`~BatchVectorEnv._seeds` have defaults.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from agentgym_budget.errors import EpisodeOverError, InvalidActionError, InvalidOptionError

__all__ = ["BatchVectorEnv"]

Outcome = tuple[Any, float, bool, bool, dict[str, Any], dict[str, Any] | None]
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


def positive(value: object, name: str, owner: str, *, allow_none: bool = False) -> int | None:
    """``value`` as a positive int (``None`` passes where ``allow_none``).

    Raises:
        InvalidOptionError: ``value`` is not a positive integer.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidOptionError(f"{owner}: {name} must be a positive integer, got {value!r}.")
    return int(value)


def per_env(value: object) -> bool:
    """Whether ``value`` is a list of per-sub-env values (a list, tuple or 1-D array)."""
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)


class BatchVectorEnv(VectorEnv):
    """Sub-envs stepped in this process and batched; a subclass says how a sub-env starts (see the module)."""

    envs: list[gym.Env | None]
    threads: int | None = None

    def _setup(self, num_envs: int, first: gym.Env, autoreset_mode: object, threads: int | None = None) -> None:
        """Set the spaces, metadata, autoreset mode and thread pool from ``first`` (a sub-env)."""
        self.num_envs = num_envs
        self.autoreset_mode = autoreset_mode_of(autoreset_mode, type(self).__name__)
        self.threads = threads
        self.metadata = {**first.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = first.render_mode
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._pool = ThreadPoolExecutor(threads) if threads and threads > 1 else None
        self._observations: list[Any] = [None] * num_envs
        self._ended = np.zeros(num_envs, dtype=np.bool_)
        self._started = np.zeros(num_envs, dtype=np.bool_)

    # ------------------------------------------------------------------ hooks
    def _reset_selected(
        self, indices: list[int], seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> list[tuple[Any, dict[str, Any]]]:
        """Start the sub-envs ``indices`` of a ``reset`` (``seeds`` and ``options`` per sub-env); their results."""
        raise NotImplementedError

    def _next_start(self, index: int) -> tuple[Any, dict[str, Any]]:
        """Start sub-env ``index`` again after its episode ended (autoreset)."""
        raise NotImplementedError

    def _step_env(self, index: int, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step sub-env ``index`` (run on any thread; touches only that sub-env)."""
        return self.envs[index].step(action)

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        """One seed per sub-env: ``None``, ``seed + i``, or the list given."""
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
            return [int(seed) + index for index in range(self.num_envs)]
        if per_env(seed) and len(seed) == self.num_envs:
            return [None if value is None else int(value) for value in seed]
        raise InvalidOptionError(
            f"{type(self).__name__}.reset: seed must be None, an int (sub-env i gets seed + i) or one seed per "
            f"sub-env ({self.num_envs}), got {seed!r}."
        )

    def _disabled_error(self, ended: list[int]) -> EpisodeOverError:
        return EpisodeOverError(
            f"{type(self).__name__}.step: the episodes of sub-envs {ended[:10]} ended and autoreset_mode is "
            "'disabled'; reset them with options={'reset_mask': ...} first."
        )

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

    def _reset_mask(self, mask: object) -> np.ndarray:
        if mask is None:
            return np.ones(self.num_envs, dtype=np.bool_)
        if (
            not isinstance(mask, np.ndarray)
            or mask.shape != (self.num_envs,)
            or mask.dtype != np.bool_
            or not mask.any()
        ):
            raise InvalidOptionError(
                f"{type(self).__name__}.reset: options['reset_mask'] must be a numpy bool array of shape "
                f"({self.num_envs},) selecting at least one sub-env, got {mask!r:.120}."
            )
        return mask

    def _split_options(self, options: dict[str, Any] | None) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
        """The reset mask and each sub-env's own options (``options`` is not changed)."""
        own = dict(options or {})
        mask = self._reset_mask(own.pop("reset_mask", None))
        for key, value in own.items():
            if per_env(value) and len(value) != self.num_envs:
                raise InvalidOptionError(
                    f"{type(self).__name__}.reset: options[{key!r}] has {len(value)} values; give one per sub-env "
                    f"({self.num_envs}) or a single value for all."
                )
        return mask, [self._options_of(own, index, options is None) for index in range(self.num_envs)]

    @staticmethod
    def _options_of(own: dict[str, Any], index: int, none: bool) -> dict[str, Any] | None:
        mine: dict[str, Any] = {}
        for key, value in own.items():
            if per_env(value):
                value = value[index]
                value = value.item() if isinstance(value, np.generic) else value
                if value is None:
                    continue
            mine[key] = value
        return mine or (None if none else {})

    def _check_actions(self, actions: Any) -> None:
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
                f"{type(self).__name__}.step: expected a sequence of {self.num_envs} actions (one str per sub-env), "
                f"got {given}."
            )
        if not self._started.all():
            missing = np.flatnonzero(~self._started).tolist()
            raise EpisodeOverError(
                f"{type(self).__name__}.step: sub-envs {missing[:10]} were never reset; call reset() first."
            )
        if self.autoreset_mode is AutoresetMode.DISABLED and self._ended.any():
            raise self._disabled_error(np.flatnonzero(self._ended).tolist())

    def _advance(self, index: int, action: Any) -> Outcome:
        """One sub-env's part of a vector step, autoreset included."""
        if self._ended[index] and self.autoreset_mode is AutoresetMode.NEXT_STEP:
            observation, info = self._next_start(index)
            return observation, 0.0, False, False, info, None
        observation, reward, term, trunc, info = self._step_env(index, action)
        if (term or trunc) and self.autoreset_mode is AutoresetMode.SAME_STEP:
            final = {"final_obs": observation, "final_info": info}
            observation, info = self._next_start(index)
            return observation, reward, term, trunc, info, final
        return observation, reward, term, trunc, info, None

    def _batch_infos(self, entries: Iterable[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
        """Gymnasium's vector ``infos`` of ``(sub-env index, info)`` pairs: exactly what ``VectorEnv._add_info``
        folded over them in order makes (keys, dtypes, masks). When each sub-env gives one info with the
        same keys in the same order (a step without same-step resets), a column at a time, without
        ``_add_info``'s per-value cost (a new mask array for every value); otherwise through ``_add_info``.
        """
        entries = list(entries)
        infos = [info for _, info in entries]
        keys = tuple(infos[0]) if infos else ()
        if (
            [index for index, _ in entries] != list(range(self.num_envs))
            or "final_obs" in keys
            or any(f"_{key}" in keys for key in keys)
            or any(tuple(info) != keys for info in infos)
        ):
            return self._fold_infos(entries)
        batch: dict[str, Any] = {}
        for key, values in zip(keys, zip(*(info.values() for info in infos), strict=True), strict=False):
            built = self._column(values)
            if built is None:
                return self._fold_infos(entries)
            batch[key], batch[f"_{key}"] = built
        return batch

    def _fold_infos(self, entries: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for index, info in entries:
            infos = self._add_info(infos, info, index)
        return infos

    def _column(self, values: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray] | None:
        """The array and mask of a key every sub-env gave once, as ``_add_info`` makes them; ``None`` if unsure."""
        kind = type(values[0])
        if issubclass(kind, np.ndarray) or any(issubclass(other, dict) for other in set(map(type, values))):
            return None
        if kind in (int, float, bool) or issubclass(kind, np.number):
            try:
                array = np.array(values, dtype=kind)  # numpy converts each value as item assignment does
            except (TypeError, ValueError, OverflowError):  # let item assignment decide (and say what failed)
                return None
            if array.shape != (self.num_envs,):  # a sequence among them: let item assignment decide
                return None
        else:
            array = np.fromiter(values, dtype=object, count=self.num_envs)
        return array, np.ones(self.num_envs, dtype=np.bool_)

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Reset every sub-env (or those ``options["reset_mask"]`` selects).

        Raises:
            InvalidOptionError: A bad ``seed``, ``reset_mask`` or per-env option list, or an option no
                sub-env understands.
        """
        seeds = self._seeds(seed)
        mask, options_per_env = self._split_options(options)
        indices = [int(index) for index in np.flatnonzero(mask)]
        results = self._reset_selected(indices, seeds, options_per_env)
        for index, (observation, _) in zip(indices, results, strict=True):
            self._observations[index] = observation
            self._ended[index], self._started[index] = False, True
        return tuple(self._observations), self._batch_infos(zip(indices, (info for _, info in results), strict=True))

    def step(
        self, actions: Sequence[Any]
    ) -> tuple[tuple[Any, ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-env with its action; autoreset as ``metadata["autoreset_mode"]`` says.

        Raises:
            InvalidActionError: ``actions`` is not a sequence of ``num_envs`` actions.
            EpisodeOverError: A sub-env was never reset, or (``autoreset_mode="disabled"``) its episode ended.
        """
        self._check_actions(actions)
        outcomes: list[Outcome] = self._map(lambda i: self._advance(i, actions[i]), list(range(self.num_envs)))
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        entries: list[tuple[int, dict[str, Any]]] = []
        for index, (observation, reward, term, trunc, info, final) in enumerate(outcomes):
            self._observations[index] = observation
            rewards[index], terminated[index], truncated[index] = reward, term, trunc
            if final is not None:
                entries.append((index, final))
            entries.append((index, info))
        self._ended = terminated | truncated
        return tuple(self._observations), rewards, terminated, truncated, self._batch_infos(entries)

    def render(self) -> tuple[Any, ...]:
        """Each sub-env's ``render()``."""
        return tuple(env.render() if env is not None else None for env in self.envs)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call (or read, if not callable) attribute ``name`` of every sub-env."""
        results = []
        for env in self.envs:
            value = env.get_wrapper_attr(name) if env is not None else None
            results.append(value(*args, **kwargs) if callable(value) else value)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every sub-env."""
        return tuple(env.get_wrapper_attr(name) if env is not None else None for env in self.envs)

    def set_attr(self, name: str, values: Any) -> None:
        """Set attribute ``name`` of every sub-env (one value each, or one value for all)."""
        if not per_env(values):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise InvalidOptionError(
                f"{type(self).__name__}.set_attr: give one value per sub-env ({self.num_envs}) or one for all, "
                f"got {len(values)}."
            )
        for env, value in zip(self.envs, values, strict=True):
            if env is not None:
                env.set_wrapper_attr(name, value)

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the thread pool and close every sub-env."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for env in self.envs:
            if env is not None:
                env.close()
