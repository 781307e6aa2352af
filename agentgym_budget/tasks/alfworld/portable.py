"""Portable ALFWorld states: what rebuilds an ALFWorld game state in any process, as plain data.

A native ALFWorld snapshot (:class:`~.engine.EngineSnapshot`) names its planner state by an id
that only one library instance knows, and holds live TextWorld objects. Its portable form,
:class:`PortableAlfworldState`, holds instead:

* the game's identity (:func:`game_digest` of its ``game.tw-pddl``), checked on restore;
* the episode seed (it fixes the entity names when they are shuffled);
* the planner operators applied since the reset, ``(name, number of effect atoms)``, which
  rebuild the planner state and the PDDL facts on any library holding the game's task
  (:meth:`~.pddl_env.FastPddlEnv.replay_path`: no text is derived on the way);
* the move count and the last feedback and command; the admissible commands are derived
  again at the rebuilt state.

:class:`PortableAlfworldEnvState` is the env's part around it: the commands of the episode,
the goal text, and whether the handcoded expert was tracking the episode (its memory is not
plain data, so such a state restores by replaying the commands).

Example:
    >>> state = PortableAlfworldState("0" * 32, seed=1, path=(), moves=0, feedback="Welcome", last_command=None)
    >>> PortableAlfworldState.__snapshot_record__, state.moves
    ('AlfworldState/1', 0)
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from typing import ClassVar

__all__: list[str] = []

_LIBRARIES = ("textworld", "alfworld", "fast-downward-textworld")


@dataclass(frozen=True)
class PortableAlfworldState:
    """An ALFWorld engine state as plain data (see the module docstring)."""

    __snapshot_record__: ClassVar[str] = "AlfworldState/1"
    __snapshot_libraries__: ClassVar[tuple[str, ...]] = _LIBRARIES

    game_digest: str
    seed: int
    path: tuple[tuple[str, int], ...]
    moves: int
    feedback: str
    last_command: str | None


@dataclass(frozen=True)
class PortableAlfworldEnvState:
    """The ALFWorld env's engine part of a state, as plain data (see the module docstring)."""

    __snapshot_record__: ClassVar[str] = "AlfworldEnvState/1"
    __snapshot_libraries__: ClassVar[tuple[str, ...]] = _LIBRARIES

    engine: PortableAlfworldState
    commands: tuple[str, ...]
    goal: str
    handcoded: bool


@functools.lru_cache(maxsize=1024)
def _digest(path: str, stamp: tuple[int, int]) -> str:
    with open(path, "rb") as file:
        return hashlib.blake2b(file.read(), digest_size=16).hexdigest()


def game_digest(path: str) -> str:
    """A content digest of a ``game.tw-pddl`` file, cached while it is unchanged."""
    stat = os.stat(path)
    return _digest(os.path.abspath(path), (stat.st_mtime_ns, stat.st_size))
