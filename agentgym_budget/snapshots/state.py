"""Opaque, immutable environment states used by snapshot / restore / fork.

Two kinds of object live here:

* :class:`TextEnvState` is the part of a state that belongs to one
  :class:`~agentgym_budget.core.env.TextEnv` (the task, the episode bookkeeping and,
  when the task family supports it, the engine's native state).
* :class:`EnvState` is what users hold: the state of a whole stack of wrappers
  around an environment, as returned by :func:`agentgym_budget.snapshots.stack.get_state`
  and :meth:`agentgym_budget.wrappers.StateSnapshot.snapshot`.

Both are frozen dataclasses. Treat their contents as opaque: the fields are
documented for debugging, not as an API, and restoring a state never mutates it,
so one state can be restored any number of times and into any number of forks.

States travel between processes. :meth:`~EnvState.to_bytes` gives their serialised form
(:mod:`agentgym_budget.snapshots.codec`: versioned, self-describing, loaded without running
code) and :meth:`~EnvState.from_bytes` reads it back; pickling a state goes through the same
bytes, so a state pickled in one process (``multiprocessing``, Ray) restores in any other
process of the same library versions, whatever its ``PYTHONHASHSEED``, also when its buffers
arrive read-only. Two states are equal when their serialised forms are (same configuration,
task, history and engine state), and they hash accordingly.

Example:
    >>> import pickle
    >>> import gymnasium as gym
    >>> import agentgym_budget
    >>> env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0")
    >>> _ = env.reset(seed=0)
    >>> state = agentgym_budget.get_state(env)
    >>> data = state.to_bytes()
    >>> data[:8], EnvState.from_bytes(data) == state, pickle.loads(pickle.dumps(state)) == state
    (b'AGBSNAP\\x00', True, True)
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np

from agentgym_budget.errors import SnapshotMismatchError, SnapshotUnsupportedError
from agentgym_budget.snapshots import codec as snapshot_codec

__all__ = ["EnvState", "ReplayLog", "SerialisedState", "TextEnvState"]

_S = TypeVar("_S", bound="SerialisedState")


def _unpickle(data: Any) -> Any:
    return snapshot_codec.decode(data)


def _equal(a: Any, b: Any) -> bool:
    """``a == b`` for values that may hold numpy arrays (whose ``==`` is elementwise)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[key], b[key]) for key in a)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


class SerialisedState:
    """Serialised form, pickling, equality and hashing of the state classes (through :mod:`~agentgym_budget.snapshots.codec`)."""

    __snapshot_record__: ClassVar[str]

    def to_bytes(self) -> bytes:
        """The serialised form of this state (computed once, then cached).

        Raises:
            SnapshotUnsupportedError: A layer's part is not plain data (see :func:`agentgym_budget.snapshots.codec.encode`).
        """
        data = self.__dict__.get("_serialised")
        if data is None:
            data = snapshot_codec.encode(self)
            object.__setattr__(self, "_serialised", data)
        return data

    @classmethod
    def from_bytes(cls: type[_S], data: bytes | bytearray | memoryview) -> _S:
        """Read a state written by :meth:`to_bytes` (in any process). Runs no code from ``data``.

        Raises:
            SnapshotMismatchError: ``data`` is not a serialised ``cls``, is corrupted, or was written with
                other library versions.
        """
        value = snapshot_codec.decode(data)
        if not isinstance(value, cls):
            raise SnapshotMismatchError(
                f"The data holds a {type(value).__name__}; {cls.__name__}.from_bytes reads a serialised {cls.__name__}."
            )
        return value

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if type(other) is not type(self):
            return NotImplemented
        try:
            return self.to_bytes() == other.to_bytes()
        except SnapshotUnsupportedError:  # a part that is not plain data: compare field by field
            return all(_equal(getattr(self, f.name), getattr(other, f.name)) for f in dataclasses.fields(self))

    def __hash__(self) -> int:
        try:
            return hash(self.to_bytes())
        except SnapshotUnsupportedError:
            return hash(type(self).__name__)

    def __copy__(self: _S) -> _S:
        return self  # immutable: a copy is the same state

    def __deepcopy__(self: _S, memo: dict[int, Any]) -> _S:
        return self

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        data = self.to_bytes()
        return (_unpickle, (pickle.PickleBuffer(data) if protocol >= 5 else data,))


@dataclass(frozen=True, eq=False)
class TextEnvState(SerialisedState):
    """State of one :class:`~agentgym_budget.core.env.TextEnv` (the base of a stack).

    Attributes:
        env_key: Identity of the environment's configuration (family and generation
            parameters); a state only restores into an env with the same key.
        task_id: The task being played.
        engine_seed: Seed given to the engine at reset (drives replays).
        actions: Every action of the episode so far, as passed to ``step``.
        last_turn: The last :class:`~agentgym_budget.core.turn.Turn` returned to the agent.
        episode_over: Whether the episode has terminated.
        rng_state: State of the env's ``np_random`` bit generator.
        engine: The engine's native state, or ``None`` when restoring means replaying ``actions``.
    """

    __snapshot_record__: ClassVar[str] = "TextEnvState/1"

    env_key: tuple[Any, ...]
    task_id: str
    engine_seed: int
    actions: tuple[str, ...]
    last_turn: Any
    episode_over: bool
    rng_state: Mapping[str, Any]
    engine: Any = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class ReplayLog(SerialisedState):
    """What replays an episode on an env that has no native state: the reset and every action.

    Attributes:
        fingerprint: Identity of the stack the log was recorded on.
        seed: Seed passed to ``reset`` (always set: see :class:`~agentgym_budget.wrappers.StateSnapshot`).
        options: Options passed to ``reset``, as sorted ``(key, value)`` pairs.
        actions: Every action passed to ``step`` since that reset.
    """

    __snapshot_record__: ClassVar[str] = "ReplayLog/1"

    fingerprint: tuple[Any, ...]
    seed: int
    options: tuple[tuple[str, Any], ...]
    actions: tuple[Any, ...]


@dataclass(frozen=True, eq=False)
class EnvState(SerialisedState):
    """State of a whole environment stack, outermost layer first.

    Attributes:
        stack: Qualified class names of the layers, outermost first, the base env last.
        parts: One part per layer in ``stack`` (native snapshots), or empty for replay snapshots.
        replay: The replay log (replay snapshots), or ``None``.
    """

    __snapshot_record__: ClassVar[str] = "EnvState/1"

    stack: tuple[str, ...]
    parts: tuple[Any, ...] = ()
    replay: ReplayLog | None = None

    @property
    def task_id(self) -> str | None:
        """The task the state belongs to, when the base env reports one."""
        base = self.parts[-1] if self.parts else None
        return base.task_id if isinstance(base, TextEnvState) else None

    @property
    def is_native(self) -> bool:
        """Whether restoring sets states directly (``True``) or replays actions (``False``)."""
        return self.replay is None
