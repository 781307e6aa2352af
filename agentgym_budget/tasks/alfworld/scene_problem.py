"""The PDDL problem of an ALFRED-style task on a scene: targets picked, objects placed, the agent started.

:func:`pick_targets` chooses a task's ALFRED ``pddl_params`` among a scene's types, and
:func:`scene_problem` places one to three instances of every movable object type of the scene in
receptacles that may hold them (targets never start where the goal wants them), the lamps on furniture and
the agent at a free floor point, then writes the problem with ALFRED's goal
(``alfworld.gen.goal_library``). Both draw from the caller's seeded generator, in a fixed order, and
use ALFRED's affordance tables (``alfworld.gen.constants``: ``VAL_RECEPTACLE_OBJECTS``,
``VAL_ACTION_OBJECTS``). :mod:`~agentgym_budget.tasks.alfworld.generator` uses them to build tasks.

Example:
    >>> _mangle("Cabinet|+00.68|-02.20")
    'Cabinet_bar__plus_00_dot_68_bar__minus_02_dot_20'
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from agentgym_budget.tasks.alfworld import scenes
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES

__all__: list[str] = []

_LAMPS = ("DeskLamp", "FloorLamp")
_LAMP_FURNITURE = ("Desk", "SideTable", "Dresser", "Shelf", "CoffeeTable", "DiningTable", "TVStand", "ArmChair")
_APPLIANCE = {"clean": "SinkBasin", "heat": "Microwave", "cool": "Fridge"}
_ACTION_CLASS = {"clean": "Cleanable", "heat": "Heatable", "cool": "Coolable"}
_PROPERTIES = (
    ("cleanable", "Cleanable"),
    ("heatable", "Heatable"),
    ("coolable", "Coolable"),
    ("sliceable", "Sliceable"),
)


def _mangle(thor_id: str) -> str:
    """ALFRED's PDDL-safe form of an AI2-THOR id.

    Example:
        >>> _mangle("Cabinet|+00.68|-02.20")
        'Cabinet_bar__plus_00_dot_68_bar__minus_02_dot_20'
    """
    for char, word in (("-", "_minus_"), ("|", "_bar_"), ("+", "_plus_"), (".", "_dot_"), (",", "_comma_")):
        thor_id = thor_id.replace(char, word)
    return thor_id


class _Affordances:
    """ALFRED's affordance tables (``alfworld.gen.constants``), loaded once."""

    def __init__(self) -> None:
        from alfworld.gen import constants

        self.static = frozenset(constants.RECEPTACLES - constants.MOVABLE_RECEPTACLES_SET)
        self.movable_receptacles = frozenset(constants.MOVABLE_RECEPTACLES_SET)
        self.openable = frozenset(constants.OPENABLE_CLASS_SET)
        self.holds = {r: frozenset(objs) for r, objs in constants.VAL_RECEPTACLE_OBJECTS.items()}
        self.placeable = frozenset().union(*self.holds.values()) - self.static
        self.actions = {name: frozenset(objs) for name, objs in constants.VAL_ACTION_OBJECTS.items()}
        self.object_types = tuple(sorted(constants.OBJECTS_SET - self.static))
        self.receptacle_types = tuple(sorted(self.static))

    def can_hold(self, receptacle_type: str, object_type: str) -> bool:
        return object_type in self.holds.get(receptacle_type, ())


_AFFORDANCES: _Affordances | None = None


def _affordances() -> _Affordances:
    global _AFFORDANCES
    if _AFFORDANCES is None:
        _AFFORDANCES = _Affordances()
    return _AFFORDANCES


def pick_targets(task_type: str, scene: scenes.Scene, rng: random.Random) -> dict[str, Any] | None:
    """ALFRED's ``pddl_params`` of a ``task_type`` task on ``scene`` (``None``: the scene lacks what it needs)."""
    aff = _affordances()
    kind = TASK_TYPES[task_type].state_change
    present = {r.type for r in scene.receptacles}
    movable = [t for t in scene.types if t in aff.placeable]
    toggle = ""
    if task_type == "look_at_obj_in_light":
        lamps = [t for t in _LAMPS if t in scene.types]
        if not lamps or not present & set(_LAMP_FURNITURE):
            return None
        toggle = rng.choice(lamps)
    if kind and _APPLIANCE[kind] not in present:
        return None
    pairs = []
    for obj in movable:
        if kind and obj not in aff.actions[_ACTION_CLASS[kind]]:
            continue
        holders = {r for r in present if aff.can_hold(r, obj)}
        if task_type == "look_at_obj_in_light":
            if holders:
                pairs.append((obj, ""))
            continue
        for parent in sorted(holders - {_APPLIANCE.get(kind, "")}):
            if holders - {parent, _APPLIANCE.get(kind, "")}:
                pairs.append((obj, parent))
    if not pairs:
        return None
    obj, parent = rng.choice(pairs)
    return {
        "object_target": obj,
        "parent_target": parent,
        "toggle_target": toggle,
        "mrecep_target": "",
        "object_sliced": False,
    }


def _object_id(kind: str, receptacle: scenes.Receptacle, rng: random.Random, taken: set[str]) -> str:
    base = [float(v) for v in receptacle.id.split("|")[1:4]]
    while True:
        x, y, z = (v + rng.uniform(-0.3, 0.3) for v in base)
        thor_id = f"{kind}|{x:+06.2f}|{abs(y):+06.2f}|{z:+06.2f}"
        if thor_id not in taken:
            taken.add(thor_id)
            return thor_id


_Placed = tuple[str, str, scenes.Receptacle]
"""An object placed in a scene: its THOR id, its type and the receptacle holding it."""


def scene_problem(task_type: str, scene: scenes.Scene, params: Mapping[str, Any], rng: random.Random) -> str | None:
    """The PDDL problem of a task drawn on ``scene`` (``None``: the scene cannot host it)."""
    objects = _place_objects(task_type, scene, params, rng)
    if objects is None:
        return None
    occupied = {tuple(r.location.split("|")[1:3]) for r in scene.receptacles}
    free = [p for p in scene.floor if (str(p[0]), str(p[1])) not in occupied]
    x, z = rng.choice(free)
    start = f"loc|{x}|{z}|{rng.randrange(4)}|30"
    return _problem_text(task_type, scene, params, sorted(objects), start)


def _place_objects(
    task_type: str, scene: scenes.Scene, params: Mapping[str, Any], rng: random.Random
) -> list[_Placed] | None:
    """Objects of every placeable type of the scene, and its lamps; ``None`` if the task's target or toggle lacks one."""
    aff = _affordances()
    kind = TASK_TYPES[task_type].state_change
    target, parent, toggle = params["object_target"], params["parent_target"], params["toggle_target"]
    objects: list[_Placed] = []
    taken: set[str] = set()
    for obj_type in (t for t in scene.types if t in aff.placeable):
        if obj_type == target:
            count = rng.randint(2, 3) if task_type == "pick_two_obj_and_place" else rng.randint(1, 3)
        else:
            count = rng.randint(1, 2)
        banned = {parent, _APPLIANCE.get(kind, "")} if obj_type == target else set()
        holders = [r for r in scene.receptacles if aff.can_hold(r.type, obj_type) and r.type not in banned]
        if not holders:
            if obj_type == target:
                return None
            continue
        for _ in range(count):
            receptacle = rng.choice(holders)
            objects.append((_object_id(obj_type, receptacle, rng, taken), obj_type, receptacle))
    for lamp in (t for t in _LAMPS if t in scene.types):
        furniture = [r for r in scene.receptacles if r.type in _LAMP_FURNITURE]
        if furniture:
            receptacle = rng.choice(furniture)
            objects.append((_object_id(lamp, receptacle, rng, taken), lamp, receptacle))
    if toggle and not any(kind_ == toggle for _, kind_, _ in objects):
        return None
    return objects


def _problem_text(
    task_type: str, scene: scenes.Scene, params: Mapping[str, Any], objects: list[_Placed], start: str
) -> str:
    """The PDDL text: the scene's objects (``objects`` sorted), its initial facts and the task's goal."""
    from alfworld.gen import goal_library

    aff = _affordances()
    present_objects = sorted({kind_ for _, kind_, _ in objects})
    present_receptacles = sorted({r.type for r in scene.receptacles})
    lines_objects = ["agent1 - agent"]
    lines_objects += [f"{t}Type - otype" for t in aff.object_types]
    lines_objects += [f"{t}Type - rtype" for t in aff.receptacle_types]
    lines_objects += [f"{_mangle(o)} - object" for o, _, _ in objects]
    lines_objects += [f"{_mangle(r.id)} - receptacle" for r in scene.receptacles]
    locations = sorted({r.location for r in scene.receptacles} | {start})
    lines_objects += [f"{_mangle(loc)} - location" for loc in locations]

    init = [f"(receptacleType {_mangle(r.id)} {r.type}Type)" for r in scene.receptacles]
    init += [f"(objectType {_mangle(o)} {t}Type)" for o, t, _ in objects]
    init += [
        f"(canContain {r}Type {o}Type)" for r in present_receptacles for o in present_objects if aff.can_hold(r, o)
    ]
    init += [f"(pickupable {_mangle(o)})" for o, t, _ in objects if t in aff.placeable]
    init += [f"(isReceptacleObject {_mangle(o)})" for o, t, _ in objects if t in aff.movable_receptacles]
    init += [f"(openable {_mangle(r.id)})" for r in scene.receptacles if r.type in aff.openable]
    init.append(f"(atLocation agent1 {_mangle(start)})")
    for predicate, group in _PROPERTIES:
        init += [f"({predicate} {_mangle(o)})" for o, t, _ in objects if t in aff.actions[group]]
    init += [f"(toggleable {_mangle(o)})" for o, t, _ in objects if t in aff.actions["Toggleable"]]
    init += [f"(inReceptacle {_mangle(o)} {_mangle(r.id)})" for o, _, r in objects]
    init += [f"(receptacleAtLocation {_mangle(r.id)} {_mangle(r.location)})" for r in scene.receptacles]
    init += [f"(objectAtLocation {_mangle(o)} {_mangle(r.location)})" for o, _, r in objects]

    goal = goal_library.gdict[task_type]["pddl"].replace("#", "-")
    goal = goal.format(
        obj=params["object_target"], recep=params["parent_target"], toggle=params["toggle_target"], mrecep=""
    )
    name = f"alfworld_{task_type}_{scene.floor_plan}_{params['seed']}"
    indent = "\n        "
    return (
        f"(define (problem {name})\n(:domain alfred)\n(:objects{indent}{indent.join(lines_objects)}\n    )\n"
        f"(:init{indent}{indent.join(init)}\n    )\n{goal}"
    )
