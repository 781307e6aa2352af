"""TextWorld states read from unsealed bytes: their fields checked, their engine state checked against a replay.

A snapshot's digest is unkeyed, so without a snapshot key (:mod:`agentgym_budget.snapshots.keys`) anyone
can edit one. :func:`~.zstate.check_zstate` refuses z-machine states that would make the interpreter read
or write out of bounds, but a state that passes it can still hold a program counter, a return address or
a routine address in RAM at a place that is not an instruction the story reaches, and frotz then runs
whatever bytes are there (a crash or a hang of the whole process). No check short of running the story
tells those apart, so a TextWorld state from unsealed bytes is restored only if it is the state its own
recorded actions lead to: :func:`verify_by_replay` replays them (from the recorded engine seed, on an
engine sharing the env's interpreter) and compares the interpreter state (RAM, stack, registers,
narrative), the score, the move count, the tracked infos and the set of facts with the snapshot's.
Its cost is one replay of the episode (about a millisecond per action; ``benchmarks`` and the trust page
give measured figures) and it is bounded: a state of more than :data:`MAX_REPLAYED_ACTIONS` actions is
refused. Sealed snapshots (a key is set) and states that never left the process are restored without it.

Example:
    >>> check_portable_fields(None)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.SnapshotMismatchError: Malformed snapshot: the TextWorld engine state is None (NoneType); expected a TextWorld engine state.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from textworld.envs.wrappers import tw_inform7

from agentgym_budget.errors import SnapshotMismatchError
from agentgym_budget.snapshots import schema
from agentgym_budget.snapshots.codec import JsonData
from agentgym_budget.tasks.textworld.commands import check_command
from agentgym_budget.tasks.textworld.engine import TextWorldEngine
from agentgym_budget.tasks.textworld.portable import PortableTextWorldState

__all__: list[str] = []  # used by the TextWorld env only

MAX_REPLAYED_ACTIONS = 1000
"""The most actions an unsealed TextWorld state may hold (restoring it replays them all)."""

_INFO_VALUES = (str, int, type(None))


def check_portable_fields(portable: Any) -> None:
    """Raise :class:`SnapshotMismatchError` unless the fields of ``portable`` have the types a genuine state has.

    The z-machine fields themselves are checked against the story by :func:`~.zstate.check_zstate`.
    """
    if not isinstance(portable, PortableTextWorldState):
        raise schema.mismatch("the TextWorld engine state", portable, "a TextWorld engine state")
    schema.text(portable.game_digest, "the TextWorld game digest")
    for value in schema.sequence(portable.registers, "the z-machine registers", 8):
        schema.count(value, "a z-machine register", low=-(2**63), high=2**63 - 1)
    if not isinstance(portable.narrative, bytes):
        raise schema.mismatch("the z-machine narrative", portable.narrative, "bytes")
    schema.count(portable.score, "the TextWorld score", low=-(2**31), high=2**31 - 1)
    schema.count(portable.moves, "the TextWorld move count", high=2**31 - 1)
    for pair in schema.sequence(portable.tracked_infos, "the TextWorld tracked infos"):
        key, value = schema.sequence(pair, "a TextWorld tracked info", 2)
        if key not in tw_inform7.AVAILABLE_INFORM7_EXTRA_INFOS or not isinstance(value, _INFO_VALUES):
            raise schema.mismatch("a TextWorld tracked info", pair, "a known info name and its str or int value")
    if not isinstance(portable.trackers, JsonData):
        raise schema.mismatch("the TextWorld trackers", portable.trackers, "tracker tables")


def verify_by_replay(
    portable: PortableTextWorldState, engine: TextWorldEngine, z8_path: str, seed: int, actions: Sequence[str]
) -> None:
    """Raise :class:`SnapshotMismatchError` unless replaying ``actions`` from ``seed`` leads to ``portable``.

    Args:
        portable: The state to check (its fields checked by :func:`check_portable_fields`).
        engine: The env's engine: the replay runs on a fork of it (its own state is not touched).
        z8_path: The game the state belongs to.
        seed: The engine seed the episode was reset with.
        actions: The episode's actions, as given to ``step``.
    """
    if len(actions) > MAX_REPLAYED_ACTIONS:
        raise SnapshotMismatchError(
            f"Unsealed TextWorld snapshot of {len(actions)} actions: restoring one without a snapshot key replays "
            f"its actions, at most {MAX_REPLAYED_ACTIONS}; set a snapshot key to restore longer episodes natively."
        )
    z8_path = os.path.abspath(z8_path)
    twin = engine.fork() if engine.game_path == z8_path else TextWorldEngine(engine.request_infos)
    try:
        twin.load(z8_path)
        twin.reset(seed)
        for action in actions:
            command = check_command(action).command
            if command is not None:
                twin.step(command)
        replayed = twin.save().portable()
    finally:
        twin.close()
    different = _differences(portable, replayed)
    if different:
        raise SnapshotMismatchError(
            f"Unsealed TextWorld snapshot whose {', '.join(different)} differ from those its own {len(actions)} "
            "actions lead to (an edited snapshot): refused. Restore a genuine snapshot, or seal snapshots with a key."
        )


def _differences(portable: PortableTextWorldState, replayed: PortableTextWorldState) -> list[str]:
    different = [
        name for name in ("ram", "stack") if not np.array_equal(getattr(portable, name), getattr(replayed, name))
    ]
    fields = ("game_digest", "registers", "narrative", "score", "moves", "tracked_infos")
    different += [name for name in fields if getattr(portable, name) != getattr(replayed, name)]
    if _facts(portable.trackers) != _facts(replayed.trackers):
        different.append("facts")
    return different


def _facts(trackers: JsonData) -> list[str] | None:
    data = trackers.value
    if data is None:
        return None
    try:
        variables, propositions = data["variables"], data["propositions"]
        return sorted(
            f"{propositions[i][0]}({','.join(str(variables[v][0]) for v in propositions[i][1])})" for i in data["facts"]
        )
    except (KeyError, IndexError, TypeError) as err:
        raise SnapshotMismatchError(f"Corrupt TextWorld snapshot: its facts cannot be read ({err!r:.80}).") from err
