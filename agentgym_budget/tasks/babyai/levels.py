"""The BabyAI levels this package registers, their task seeds, and the held-out combinations of the mixed ids.

Nothing here imports ``minigrid``: registering the ids and listing them works without the ``babyai`` extra.

* :data:`LEVELS`: every registered level: its id, the ``minigrid`` level it plays, what the agent does;
* :data:`SPLIT_SEEDS`: the level seeds of each split; a task is one seed, ``<level>-<seed>``;
* :func:`held_out_combinations`: the (type, colour) pairs ``BabyAI-MixedTestLocal-v0`` is about and
  ``BabyAI-MixedTrainLocal-v0`` never shows, drawn from ``holdout_seed``.

Example:
    >>> LEVELS["GoToLocal"].env_name, LEVELS["GoToLocal"].minigrid_id
    ('BabyAI-GoToLocal-v0', 'BabyAI-GoToLocal-v0')
    >>> task_id("GoToLocal", 12), task_seed("GoToLocal-12")
    ('GoToLocal-12', 12)
    >>> sorted(held_out_combinations(0))
    [('ball', 'grey'), ('box', 'yellow'), ('door', 'red'), ('key', 'purple')]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__: list[str] = []  # used by the family; its ids and held-out combinations are documented in docs/envs/babyai.md

SPLIT_SEEDS: Mapping[str, range] = {
    "train": range(0, 10_000),
    "valid": range(100_000, 101_000),
    "test": range(200_000, 201_000),
}
"""Level seeds of each split: train 0-9,999, valid 100,000-100,999, test 200,000-200,999."""

COLORS: tuple[str, ...] = ("blue", "green", "grey", "purple", "red", "yellow")
"""BabyAI's six colours (``minigrid.core.constants.COLOR_NAMES``, sorted)."""

HELD_OUT_TYPES: tuple[str, ...] = ("key", "ball", "box", "door")
"""Object types that each get one held-out colour in the mixed ids."""

MIXED_KINDS: tuple[str, ...] = ("goto", "pickup", "open", "putnext", "pickup_then_goto")
"""Mission kinds of the mixed ids (BALROG's five); a task's kind is ``seed % 5``."""


@dataclass(frozen=True)
class Level:
    """One registered level.

    Attributes:
        name: Short name, the prefix of its task ids (``GoToLocal``).
        minigrid_id: The ``minigrid`` id whose level class and arguments it plays (``None``: a mixed id).
        description: What the agent does, one line.
        mixed: ``"train"`` / ``"test"`` for the mixed ids (their missions avoid / name a held-out combination).
    """

    name: str
    minigrid_id: str | None
    description: str
    mixed: str | None = None

    @property
    def env_name(self) -> str:
        """The id in the ``agentgym_budget`` namespace, without it."""
        return f"BabyAI-{self.name}-v0"


def _level(name: str, description: str) -> Level:
    return Level(name, f"BabyAI-{name}-v0", description)


LEVELS: Mapping[str, Level] = {
    level.name: level
    for level in (
        _level("GoToRedBall", "go to the red ball in one room with 7 distractors"),
        _level("GoToObj", "go to the only object in one room"),
        _level("GoToLocal", "go to the named object in one room with 8 distractors"),
        _level("GoToRedBlueBall", "go to the red or the blue ball in one room with distractors"),
        _level("GoToDoor", "go to the named door of the agent's room (3x3 rooms)"),
        _level("PickupDist", "pick up the named object in one 7x7 room"),
        _level("PickupLoc", "pick up the object named by colour, type or location in one room"),
        _level("PutNextLocal", "put one named object next to another in one room"),
        _level("OpenDoor", "open the door named by colour or location in the agent's room (3x3 rooms)"),
        _level("OpenRedDoor", "open the red door of a small room"),
        _level("UnlockLocal", "unlock the locked door of the agent's room with the key in the room"),
        Level(
            "MixedTrainLocal",
            None,
            "mixed training missions (go to, pick up, open, put next to, pick up then go to), no held-out object",
            mixed="train",
        ),
        Level(
            "MixedTestLocal",
            None,
            "mixed test missions: the same five kinds, each naming a held-out object/colour combination",
            mixed="test",
        ),
    )
}
"""Every registered level by short name (the ids are ``agentgym_budget/BabyAI-<name>-v0``)."""


def task_id(level: str, seed: int) -> str:
    """The task id of ``level`` at ``seed``."""
    return f"{level}-{seed}"


def task_seed(task: str) -> int:
    """The level seed of a task id (its number after the last ``-``)."""
    return int(task.rsplit("-", 1)[1])


def held_out_combinations(holdout_seed: int) -> frozenset[tuple[str, str]]:
    """One (type, colour) pair per type of :data:`HELD_OUT_TYPES`, four distinct colours drawn from ``holdout_seed``.

    Example:
        >>> held_out_combinations(0) == held_out_combinations(0) != held_out_combinations(1)
        True
    """
    colors = np.random.default_rng(holdout_seed).permutation(len(COLORS))[: len(HELD_OUT_TYPES)]
    return frozenset((kind, COLORS[int(index)]) for kind, index in zip(HELD_OUT_TYPES, colors, strict=True))
