"""ALFRED scenes, read from the layouts that ship inside the ``alfworld`` package.

The ``alfworld`` wheel carries ``alfworld/gen/layouts/``: for each of the 120 ALFRED
floor plans (kitchens 1-30, living rooms 201-230, bedrooms 301-330, bathrooms 401-430)

* ``FloorPlanN-objects.json``: the object and receptacle types present in the scene;
* ``FloorPlanN-openable.json``: receptacle instances (their AI2-THOR ids, which encode
  their position) with the agent pose ``[x, z, rotation, horizon]`` to interact with them;
* ``FloorPlanN-layout.npy``: the reachable points of the floor (a 0.25 m grid).

:func:`load_scene` turns them into a :class:`Scene`. Receptacle types the scene lists
without a precomputed pose (stove burners, toasters, coffee machines, garbage cans, towel
holders, ...) get instances (four stove burners, one of the others) at free reachable points
chosen by a generator seeded with the scene and type names, so a scene is the same in every
process. Locations are ALFRED's
``loc|x|z|rotation|horizon`` ids (grid units, rotation in quarter turns).

Scenes are split like ALFRED: :data:`UNSEEN_SCENES` (``alfworld.gen.constants.TEST_SCENE_NUMBERS``,
floor plans 1-6 of each room type) are held out of training and form ``valid_unseen``.

Example:
    >>> scene = load_scene(1)
    >>> scene.floor_plan, scene.room
    ('FloorPlan1', 'Kitchen')
    >>> {"Fridge", "Microwave", "SinkBasin"} <= {r.type for r in scene.receptacles}
    True
    >>> 1 in UNSEEN_SCENES, 7 in UNSEEN_SCENES
    (True, False)
"""

from __future__ import annotations

import functools
import json
import random
from dataclasses import dataclass
from pathlib import Path

__all__: list[str] = []

ROOM_TYPES: dict[str, range] = {
    "Kitchen": range(1, 31),
    "LivingRoom": range(201, 231),
    "Bedroom": range(301, 331),
    "Bathroom": range(401, 431),
}
"""Floor plan numbers of each ALFRED room type."""

SCENE_NUMBERS: tuple[int, ...] = tuple(n for numbers in ROOM_TYPES.values() for n in numbers)
"""All 120 ALFRED floor plans."""

UNSEEN_SCENES: frozenset[int] = frozenset(n for numbers in ROOM_TYPES.values() for n in numbers[:6])
"""Scenes held out of training (ALFRED's test scenes: floor plans 1-6 of each room type)."""

SEEN_SCENES: frozenset[int] = frozenset(SCENE_NUMBERS) - UNSEEN_SCENES
"""Scenes used by the ``train`` and ``valid_seen`` splits."""

_STEP = 0.25  # metres per grid cell, as in ALFRED
_EXTRA_INSTANCES = {"StoveBurner": 4}  # instances of receptacle types that have no precomputed pose


@dataclass(frozen=True)
class Receptacle:
    """A static receptacle instance of a scene.

    Attributes:
        id: Its AI2-THOR id, e.g. ``"Cabinet|+00.68|+00.50|-02.20"``.
        type: Its ALFRED type, e.g. ``"Cabinet"`` (``"SinkBasin"`` for ``"Sink|...|SinkBasin"``).
        location: The ALFRED location id where the agent stands to use it.
    """

    id: str
    type: str
    location: str


@dataclass(frozen=True)
class Scene:
    """One ALFRED floor plan, as far as the text engine needs it.

    Attributes:
        number: Floor plan number (1-430).
        room: ``"Kitchen"``, ``"LivingRoom"``, ``"Bedroom"`` or ``"Bathroom"``.
        receptacles: Static receptacle instances, sorted by id.
        types: Every object and receptacle type the scene contains, sorted.
        floor: Reachable floor points, in grid units.
    """

    number: int
    room: str
    receptacles: tuple[Receptacle, ...]
    types: tuple[str, ...]
    floor: tuple[tuple[int, int], ...]

    @property
    def floor_plan(self) -> str:
        """The scene's name, e.g. ``"FloorPlan1"``."""
        return f"FloorPlan{self.number}"

    def receptacles_of(self, *types: str) -> tuple[Receptacle, ...]:
        """The receptacle instances of the given types."""
        return tuple(r for r in self.receptacles if r.type in types)


def _layouts_dir() -> Path:
    """The ``alfworld/gen/layouts`` directory of the installed ``alfworld`` package."""
    import alfworld.gen

    return Path(alfworld.gen.__file__).parent / "layouts"


def room_of(number: int) -> str:
    """The room type of floor plan ``number``.

    Raises:
        KeyError: ``number`` is not an ALFRED floor plan.
    """
    for room, numbers in ROOM_TYPES.items():
        if number in numbers:
            return room
    raise KeyError(f"FloorPlan{number} is not an ALFRED scene; expected one of 1-30, 201-230, 301-330, 401-430.")


def _location_id(x: float, z: float, rotation: float, horizon: float) -> str:
    """ALFRED's location id of an agent pose (metres and degrees).

    Example:
        >>> _location_id(0.0, -1.25, 180, 30)
        'loc|0|-5|2|30'
    """
    return f"loc|{round(x / _STEP)}|{round(z / _STEP)}|{round(rotation / 90) % 4}|{round(horizon)}"


def _receptacle_type(thor_id: str) -> str:
    parts = thor_id.split("|")
    return parts[-1] if len(parts) > 4 else parts[0]


def _coordinate(value: float) -> str:
    return f"{value:+06.2f}"


@functools.cache
def load_scene(number: int) -> Scene:
    """Read floor plan ``number`` from the ``alfworld`` layouts (cached per process).

    Raises:
        KeyError: ``number`` is not an ALFRED floor plan.
    """
    import numpy as np
    from alfworld.gen import constants

    room = room_of(number)
    folder = _layouts_dir()
    types = tuple(sorted(set(json.loads((folder / f"FloorPlan{number}-objects.json").read_text()))))
    poses = json.loads((folder / f"FloorPlan{number}-openable.json").read_text())
    floor = tuple(
        (round(float(x) / _STEP), round(float(z) / _STEP)) for x, z in np.load(folder / f"FloorPlan{number}-layout.npy")
    )

    static = constants.RECEPTACLES - constants.MOVABLE_RECEPTACLES_SET
    receptacles = [
        Receptacle(thor_id, _receptacle_type(thor_id), _location_id(*pose))
        for thor_id, pose in poses.items()
        if _receptacle_type(thor_id) in static
    ]
    posed = {r.type for r in receptacles}
    used = {tuple(int(v) for v in r.location.split("|")[1:3]) for r in receptacles}
    taken = {r.id for r in receptacles}
    for kind in sorted(set(types) & static - posed):
        rng = random.Random(f"FloorPlan{number}:{kind}")
        made = 0
        while made < _EXTRA_INSTANCES.get(kind, 1):
            free = [point for point in floor if point not in used] or list(floor)
            cx, cz = rng.choice(free)
            used.add((cx, cz))
            rotation = rng.randrange(4)
            dx, dz = ((0, 1), (1, 0), (0, -1), (-1, 0))[rotation]
            height = rng.choice((0.0, 0.9))
            thor_id = "|".join(
                (kind, _coordinate((cx + dx * 2) * _STEP), _coordinate(height), _coordinate((cz + dz * 2) * _STEP))
            )
            if thor_id not in taken:
                taken.add(thor_id)
                receptacles.append(Receptacle(thor_id, kind, f"loc|{cx}|{cz}|{rotation}|30"))
                made += 1
    return Scene(
        number=number,
        room=room,
        receptacles=tuple(sorted(receptacles, key=lambda r: r.id)),
        types=types,
        floor=floor,
    )
