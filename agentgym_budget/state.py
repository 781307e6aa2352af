"""Opaque, immutable environment states used by snapshot / restore / fork.

Two kinds of object live here:

* :class:`TextEnvState` is the part of a state that belongs to one
  :class:`~agentgym_budget.env.TextEnv` (the task, the episode bookkeeping and,
  when the task family supports it, the engine's native state).
* :class:`EnvState` is what users hold: the state of a whole stack of wrappers
  around an environment, as returned by :func:`agentgym_budget.snapshot.get_state`
  and :meth:`agentgym_budget.wrappers.StateSnapshot.snapshot`.

Both are frozen dataclasses. Treat their contents as opaque: the fields are
documented for debugging, not as an API, and restoring a state never mutates it,
so one state can be restored any number of times and into any number of forks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EnvState", "ReplayLog", "TextEnvState"]


@dataclass(frozen=True)
class TextEnvState:
    """State of one :class:`~agentgym_budget.env.TextEnv` (the base of a stack).

    Attributes:
        env_key: Identity of the environment's configuration (family and generation
            parameters); a state only restores into an env with the same key.
        task_id: The task being played.
        engine_seed: Seed given to the engine at reset (drives replays).
        actions: Every action of the episode so far, as passed to ``step``.
        last_turn: The last :class:`~agentgym_budget.env.Turn` returned to the agent.
        episode_over: Whether the episode has terminated.
        rng_state: State of the env's ``np_random`` bit generator.
        engine: The engine's native state, or ``None`` when restoring means replaying ``actions``.
    """

    env_key: tuple[Any, ...]
    task_id: str
    engine_seed: int
    actions: tuple[str, ...]
    last_turn: Any
    episode_over: bool
    rng_state: Mapping[str, Any]
    engine: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class ReplayLog:
    """What replays an episode on an env that has no native state: the reset and every action.

    Attributes:
        fingerprint: Identity of the stack the log was recorded on.
        seed: Seed passed to ``reset`` (always set: see :class:`~agentgym_budget.wrappers.StateSnapshot`).
        options: Options passed to ``reset``, as sorted ``(key, value)`` pairs.
        actions: Every action passed to ``step`` since that reset.
    """

    fingerprint: tuple[Any, ...]
    seed: int
    options: tuple[tuple[str, Any], ...]
    actions: tuple[Any, ...]


@dataclass(frozen=True)
class EnvState:
    """State of a whole environment stack, outermost layer first.

    Attributes:
        stack: Qualified class names of the layers, outermost first, the base env last.
        parts: One part per layer in ``stack`` (native snapshots), or empty for replay snapshots.
        replay: The replay log (replay snapshots), or ``None``.
    """

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
