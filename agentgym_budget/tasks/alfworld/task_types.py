"""The six ALFWorld task types, their goals and their goal-condition progress.

Each :class:`TaskType` knows the ALFRED rooms it is generated in, its goal in PDDL
(``alfworld.gen.goal_library``, as in ALFRED and ALFWorld) and its *goal conditions*:
the parts of the goal that change during an episode. ``progress`` is the fraction of
those conditions met by the best choice of objects (ALFWorld's goal-condition score):

====================================  ===========================================================
``pick_and_place_simple``             a target object is in a receptacle of the target type
``look_at_obj_in_light``              a target object is held; a lamp of the type is on; the
                                      agent stands at that lamp
``pick_clean_then_place_in_recep``    one target object is clean; and is in the target receptacle
``pick_heat_then_place_in_recep``     one target object is hot; and is in the target receptacle
``pick_cool_then_place_in_recep``     one target object is cool; and is in the target receptacle
``pick_two_obj_and_place``            two target objects are in one receptacle of the target type
====================================  ===========================================================

Example:
    >>> TASK_TYPES["pick_heat_then_place_in_recep"].env_name
    'ALFWorld-HeatAndPlace-v0'
    >>> params = {"object_target": "Apple", "parent_target": "Fridge", "toggle_target": ""}
    >>> facts = {("objecttype", ("apple_1", "appletype")), ("receptacletype", ("fridge_1", "fridgetype"))}
    >>> goal_progress("pick_heat_then_place_in_recep", params, facts | {("ishot", ("apple_1",))})
    0.5
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["TASK_TYPES"]

Fact = tuple[str, tuple[str, ...]]
"""A true fact of the PDDL state: lower-case predicate name and argument names."""


@dataclass(frozen=True)
class TaskType:
    """One ALFWorld task type.

    Attributes:
        name: ALFRED's name, e.g. ``"pick_and_place_simple"``.
        env_name: The registered id (without namespace) of the env restricted to this type.
        rooms: ALFRED room types the task is generated in (``alfworld.gen.constants.GOALS_VALID``).
        state_change: ``"clean"``, ``"heat"``, ``"cool"`` or ``""``.
        description: One line for the id catalog.
    """

    name: str
    env_name: str
    rooms: tuple[str, ...]
    state_change: str
    description: str


TASK_TYPES: Mapping[str, TaskType] = {
    t.name: t
    for t in (
        TaskType(
            "pick_and_place_simple",
            "ALFWorld-PickAndPlace-v0",
            ("Kitchen", "LivingRoom", "Bathroom", "Bedroom"),
            "",
            "Find an object and put it in/on a receptacle (ALFWorld 'Pick & Place').",
        ),
        TaskType(
            "look_at_obj_in_light",
            "ALFWorld-LookAtInLight-v0",
            ("LivingRoom", "Bedroom"),
            "",
            "Find an object and examine it under a lamp (ALFWorld 'Examine in Light').",
        ),
        TaskType(
            "pick_clean_then_place_in_recep",
            "ALFWorld-CleanAndPlace-v0",
            ("Kitchen", "Bathroom"),
            "clean",
            "Clean an object in the sink, then put it in/on a receptacle (ALFWorld 'Clean & Place').",
        ),
        TaskType(
            "pick_heat_then_place_in_recep",
            "ALFWorld-HeatAndPlace-v0",
            ("Kitchen",),
            "heat",
            "Heat an object in the microwave, then put it in/on a receptacle (ALFWorld 'Heat & Place').",
        ),
        TaskType(
            "pick_cool_then_place_in_recep",
            "ALFWorld-CoolAndPlace-v0",
            ("Kitchen",),
            "cool",
            "Cool an object in the fridge, then put it in/on a receptacle (ALFWorld 'Cool & Place').",
        ),
        TaskType(
            "pick_two_obj_and_place",
            "ALFWorld-PickTwoAndPlace-v0",
            ("Kitchen", "LivingRoom", "Bathroom", "Bedroom"),
            "",
            "Find two objects of a type and put both in/on one receptacle (ALFWorld 'Pick Two & Place').",
        ),
    )
}
"""The six task types, in ALFWorld's order (``alfworld.agents.environment.alfred_tw_env.TASK_TYPES``)."""

_STATE_PREDICATE = {"clean": "isclean", "heat": "ishot", "cool": "iscool"}


def _task_type_names() -> tuple[str, ...]:
    """The six task type names, in ALFWorld's order."""
    return tuple(TASK_TYPES)


def progress_predicates(task_type: str) -> frozenset[str]:
    """The predicates :func:`goal_progress` reads for ``task_type``: its value changes only when their facts do.

    Example:
        >>> sorted(progress_predicates("pick_cool_then_place_in_recep"))
        ['inreceptacle', 'iscool', 'objecttype', 'receptacletype']
    """
    placing = frozenset({"objecttype", "receptacletype", "inreceptacle"})
    if task_type == "look_at_obj_in_light":
        return placing | {"istoggled", "atlocation", "receptacleatlocation", "holds"}
    kind = TASK_TYPES[task_type].state_change
    return placing | {_STATE_PREDICATE[kind]} if kind else placing


def _index(facts: Iterable[Fact]) -> dict[str, list[tuple[str, ...]]]:
    index: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for name, arguments in facts:
        index[name].append(arguments)
    return index


def goal_progress(task_type: str, params: Mapping[str, str], facts: Iterable[Fact]) -> float:
    """The fraction of the goal conditions of ``task_type`` that ``facts`` meet (see the module docstring).

    Args:
        task_type: One of :data:`TASK_TYPES`.
        params: ALFRED's ``pddl_params``: ``object_target``, ``parent_target``, ``toggle_target``.
        facts: The true facts of the state (``(predicate, arguments)``, lower case).

    Returns:
        A value in [0, 1]; ``1.0`` means every goal condition holds.
    """
    index = _index(facts)
    obj_type = f"{params.get('object_target', '')}Type".lower()
    parent_type = f"{params.get('parent_target', '')}Type".lower()
    targets = {args[0] for args in index["objecttype"] if args[1] == obj_type}
    parents = {args[0] for args in index["receptacletype"] if args[1] == parent_type}
    placed = defaultdict(set)
    for obj, recep in index["inreceptacle"]:
        if obj in targets and recep in parents:
            placed[recep].add(obj)

    if task_type == "pick_and_place_simple":
        return 1.0 if placed else 0.0
    if task_type == "pick_two_obj_and_place":
        return max((min(len(objs), 2) for objs in placed.values()), default=0) / 2
    if task_type == "look_at_obj_in_light":
        lamp_type = f"{params.get('toggle_target', '')}Type".lower()
        lamps = {args[0] for args in index["objecttype"] if args[1] == lamp_type}
        toggled = {args[0] for args in index["istoggled"]}
        here = {args[1] for args in index["atlocation"]}
        lamp_places = defaultdict(set)
        recep_places = defaultdict(set)
        for recep, location in index["receptacleatlocation"]:
            recep_places[recep].add(location)
        for obj, recep in index["inreceptacle"]:
            if obj in lamps:
                lamp_places[obj] |= recep_places[recep]
        held = any(obj in targets for _, obj in index["holds"])
        best_lamp = max(((lamp in toggled) + bool(lamp_places[lamp] & here) for lamp in lamps), default=0)
        return (held + best_lamp) / 3
    kind = TASK_TYPES[task_type].state_change
    changed = {args[0] for args in index[_STATE_PREDICATE[kind]]} & targets
    in_place = set().union(*placed.values()) if placed else set()
    best = max(((obj in changed) + (obj in in_place) for obj in targets), default=0)
    return best / 2
