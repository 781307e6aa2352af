"""StateSnapshot: snapshot / restore / fork an environment stack from one shared state."""

from __future__ import annotations

import copy
import numbers
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import RecordConstructorArgs

from agentgym_budget.errors import (
    EpisodeOverError,
    InvalidOptionError,
    SnapshotMismatchError,
    SnapshotUnsupportedError,
)
from agentgym_budget.snapshots import schema
from agentgym_budget.snapshots import stack as snapshot
from agentgym_budget.snapshots.state import EnvState, ReplayLog

__all__ = ["StateSnapshot"]

_MODES = ("auto", "native", "replay")

MAX_REPLAY_ACTIONS = 10_000
"""Longest action log a replay restore plays by default (a forged log of millions of actions would hang it)."""


class StateSnapshot(gym.Wrapper[Any, Any, Any, Any], RecordConstructorArgs):
    """Snapshot, restore and fork the wrapped stack, wrappers included.

    Put it outermost: a snapshot covers this wrapper and every layer below it (turn
    counters, budgets, sampled budgets, Gymnasium's own wrappers, the engine).

    Two ways to hold a state:

    ``"native"``
        Every layer's own state is captured (:func:`agentgym_budget.snapshots.stack.get_state`).
        For TextWorld this is the interpreter's memory plus TextWorld's progress trackers:
        fast, and independent of the episode's length.
    ``"replay"``
        For any deterministic env without ``get_state``: the wrapper records the reset
        seed and options and every action, and restoring resets with that seed and replays
        the actions through the whole stack. Resets without a seed get one drawn by this
        wrapper, so every episode can be replayed.

    ``mode="auto"`` (the default) picks ``"native"`` when the base env supports it.

    Args:
        env: The stack to snapshot.
        mode: ``"auto"``, ``"native"`` or ``"replay"``.
        max_replay_actions: Longest action log :meth:`restore` replays (``"replay"`` mode); a longer one,
            e.g. from a forged snapshot, is refused before the stack is touched.

    Raises:
        InvalidOptionError: Unknown ``mode``, or ``max_replay_actions`` not a positive integer.
        SnapshotUnsupportedError: ``mode="native"`` on an env without ``get_state``/``set_state``.

    Example:
        >>> import gymnasium as gym
        >>> import agentgym_budget
        >>> from agentgym_budget.wrappers import TurnBudget
        >>> env = StateSnapshot(TurnBudget(gym.make("agentgym_budget/TextWorld-CoinCollector-v0"), max_turns=10))
        >>> _ = env.reset(seed=3)
        >>> snap = env.snapshot()
        >>> forks = env.fork(2)
        >>> first = forks[0].step("go north")
        >>> forks[1].step("go north")[0] == first[0], forks[1].unwrapped is not forks[0].unwrapped
        (True, True)
        >>> _ = env.step("look")
        >>> env.restore(snap)
        >>> env.get_wrapper_attr("turn")
        0
    """

    def __init__(self, env: gym.Env, mode: str = "auto", max_replay_actions: int = MAX_REPLAY_ACTIONS) -> None:
        RecordConstructorArgs.__init__(self, mode=mode, max_replay_actions=max_replay_actions)
        gym.Wrapper.__init__(self, env)
        if mode not in _MODES:
            raise InvalidOptionError(f"StateSnapshot: unknown mode {mode!r}; expected one of {_MODES}.")
        if isinstance(max_replay_actions, bool) or not isinstance(max_replay_actions, int) or max_replay_actions < 1:
            raise InvalidOptionError(
                f"StateSnapshot: max_replay_actions must be a positive integer, got {max_replay_actions!r}."
            )
        self.max_replay_actions = max_replay_actions
        native = snapshot.supports_native_state(env)
        if mode == "native" and not native:
            raise SnapshotUnsupportedError(
                f"StateSnapshot(mode='native'): {type(env.unwrapped).__name__} has no get_state()/set_state(); "
                "use mode='replay' (or 'auto')."
            )
        self.mode = "native" if mode == "native" or (mode == "auto" and native) else "replay"
        self._seeder: np.random.Generator | None = None
        self._reset_seed: int | None = None
        self._reset_options: tuple[tuple[str, Any], ...] = ()
        self._actions: list[Any] = []

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if self.mode == "replay":
            if seed is None:
                if self._seeder is None:
                    self._seeder = np.random.default_rng()
                seed = int(self._seeder.integers(2**31 - 1))
            self._reset_seed = int(seed)
            self._reset_options = tuple(sorted(copy.deepcopy(options or {}).items()))
            self._actions = []
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        result = self.env.step(action)
        if self.mode == "replay":
            self._actions.append(copy.deepcopy(action))
        return result

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> EnvState:
        """Return the immutable state of the stack below this wrapper.

        Raises:
            EpisodeOverError: No episode was started yet.
        """
        if self.mode == "native":
            return snapshot.get_state(self.env)
        if self._reset_seed is None:
            raise EpisodeOverError("StateSnapshot: call reset() before snapshot(); there is no episode yet.")
        log = ReplayLog(
            fingerprint=snapshot.fingerprint(self.env),
            seed=self._reset_seed,
            options=self._reset_options,
            actions=tuple(self._actions),
        )
        return EnvState(stack=snapshot.fingerprint(self.env)[0], replay=log)

    def restore(self, snap: EnvState) -> None:
        """Put the stack back in the state ``snap`` (any number of times; ``snap`` is not changed).

        Raises:
            SnapshotMismatchError: ``snap`` was taken on another kind of stack, env or task set, or (replay mode)
                holds more than ``max_replay_actions`` actions.
        """
        if not isinstance(snap, EnvState):
            raise SnapshotMismatchError(f"StateSnapshot.restore expects an EnvState, got {type(snap).__name__}.")
        if self.mode == "native":
            snapshot.set_state(self.env, snap)
            return
        log = snap.replay
        if log is None or log.fingerprint != snapshot.fingerprint(self.env):
            raise SnapshotMismatchError(
                "StateSnapshot.restore: the snapshot was not taken in replay mode on a stack like this one "
                f"(snapshot {log.fingerprint if log else snap.stack}, this stack {snapshot.fingerprint(self.env)})."
            )
        if len(log.actions) > self.max_replay_actions:
            raise SnapshotMismatchError(
                f"StateSnapshot.restore: the snapshot's log holds {len(log.actions)} actions, more than "
                f"max_replay_actions={self.max_replay_actions}; pass StateSnapshot(env, max_replay_actions=N) to "
                "replay longer episodes."
            )
        options = dict(copy.deepcopy(log.options))
        self.env.reset(seed=log.seed, options=options or None)
        for action in log.actions:
            self.env.step(copy.deepcopy(action))
        self._reset_seed, self._reset_options, self._actions = log.seed, log.options, list(log.actions)

    def fork(self, n: int) -> list[StateSnapshot]:
        """Return ``n`` independent copies of this stack, each at the current state.

        Each fork is the same stack (same wrapper classes and arguments) restored from one
        snapshot of this env, so it starts with the same budget, turn and replay log.

        Shared with this env (never written by a fork, or swapped in per step): the base env's
        loaded engine resources (the game file, the interpreter or planner, the task list and its
        index; see :meth:`agentgym_budget.core.env.TextEnv.clone` with ``share_engine=True``), the env
        spec and the constructor arguments. An engine-sharing env swaps its own state in whenever
        it acts, so sharing is invisible to the episodes.

        Owned by each fork: its episode state (the base env's game state and last turn) and every
        wrapper's state (the budget and turns left, BudgetMix's draw, ProcessReward's previous
        potential, this wrapper's replay log). Stepping, resetting or closing one fork changes
        neither the others nor this env.

        Args:
            n: How many forks to make.

        Returns:
            ``n`` new :class:`StateSnapshot` stacks, each at this env's current state.

        Raises:
            InvalidOptionError: ``n`` is not a positive integer.

        Example:
            >>> import gymnasium as gym
            >>> import agentgym_budget
            >>> env = StateSnapshot(gym.make("agentgym_budget/TextWorld-CoinCollector-v0"))
            >>> _ = env.reset(seed=3)
            >>> left, right = env.fork(2)
            >>> _ = left.step("go north")
            >>> left.unwrapped.get_state() == right.unwrapped.get_state()
            False
            >>> right.unwrapped.get_state() == env.unwrapped.get_state()
            True
        """
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise InvalidOptionError(f"StateSnapshot.fork: n must be a positive integer, got {n!r}.")
        snap = self.snapshot()
        forks = []
        for _ in range(int(n)):
            twin = snapshot.clone(self, share_engine=True)
            twin.restore(snap)
            forks.append(twin)
        return forks

    def get_wrapper_state(self) -> tuple[Any, ...]:
        """This wrapper's own part of a snapshot taken on an outer layer (its replay log)."""
        return (self._reset_seed, self._reset_options, tuple(self._actions))

    def check_wrapper_state(self, part: Any) -> tuple[int | None, tuple[tuple[str, Any], ...], tuple[Any, ...]]:
        """The part of :meth:`get_wrapper_state` checked field by field (nothing is set).

        Raises:
            SnapshotMismatchError: The seed, the options or the action log is malformed.
        """
        seed, options, actions = schema.sequence(part, "the StateSnapshot part", 3)
        seed = None if seed is None else schema.count(seed, "the StateSnapshot reset seed")
        pairs = tuple(
            schema.sequence(pair, "a StateSnapshot reset option", 2)
            for pair in schema.sequence(options, "the StateSnapshot reset options")
        )
        for key, _ in pairs:
            schema.text(key, "a StateSnapshot reset option name")
        return seed, pairs, schema.sequence(actions, "the StateSnapshot action log")

    def set_wrapper_state(self, part: Any) -> None:
        """Restore the part returned by :meth:`get_wrapper_state` (checked first: :meth:`check_wrapper_state`)."""
        self._reset_seed, self._reset_options, actions = self.check_wrapper_state(part)
        self._actions = list(actions)
