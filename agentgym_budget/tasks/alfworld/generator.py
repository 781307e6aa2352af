"""Generating ALFRED-style ALFWorld games offline, from the scenes shipped in ``alfworld``.

A game is what ALFWorld's release data holds for each trial: ``game.tw-pddl`` (JSON with
the PDDL domain, the text grammar with the task description filled in, the PDDL problem and
``"solvable": true``) and ``traj_data.json`` (task type and ALFRED's ``pddl_params``, which the
handcoded expert reads). :func:`build_task` makes the problem of one ``(task type, seed,
split)``:

1. a generator seeded with those three values picks a scene of the split's scene pool
   (:mod:`.scenes`) whose room suits the task type (ALFRED's ``GOALS_VALID``) and that has
   the appliance the task needs (sink basin, microwave, fridge, lamp);
2. it picks the targets (object type, receptacle type, lamp type) among the scene's types,
   with ALFRED's affordances (``alfworld.gen.constants``: ``VAL_RECEPTACLE_OBJECTS``,
   ``VAL_ACTION_OBJECTS``);
3. it places one to three instances of every movable object type of the scene in receptacles
   that may hold them (targets never start where the goal wants them), and the agent at a
   free floor point;
4. the goal is ALFRED's (``alfworld.gen.goal_library``) and the task text one of its templates.

:func:`generate_game` writes the game into the cache (:func:`agentgym_budget.cache.cached_directory`)
after the planner (Fast Downward, as used by ALFWorld) found a plan and that plan, played
through the engine, wins. A failing draw is redrawn from the same seeded generator, so the
result is deterministic. Nothing is downloaded.

Example:
    >>> task = build_task("pick_heat_then_place_in_recep", seed=3, split="train")
    >>> task.scene in range(1, 31), task.params["object_target"] != ""
    (True, True)
    >>> "(:goal" in task.problem and "(atLocation agent1" in task.problem
    True
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_budget.cache import cached_directory
from agentgym_budget.errors import GenerationError, InvalidOptionError
from agentgym_budget.tasks.alfworld import scenes
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES

__all__ = [
    "GENERATOR_VERSION",
    "SPLIT_SEEDS",
    "GeneratedTask",
    "build_task",
    "generate_game",
    "mangle",
    "split_of_seed",
    "write_game",
]

GENERATOR_VERSION = 1
"""Bumped whenever generated games change (it is part of the cache key)."""

SPLIT_SEEDS: Mapping[str, range] = {
    "train": range(0, 5000),
    "valid_seen": range(5000, 5250),
    "valid_unseen": range(6000, 6250),
}
"""Seeds of each split, per task type. ``train`` and ``valid_seen`` draw scenes from
:data:`~.scenes.SEEN_SCENES`, ``valid_unseen`` from :data:`~.scenes.UNSEEN_SCENES`."""

_MAX_ATTEMPTS = 40
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


@dataclass(frozen=True)
class GeneratedTask:
    """One generated ALFWorld task (not yet checked by the planner).

    Attributes:
        task_type: One of :data:`~.task_types.TASK_TYPES`.
        seed: The task seed.
        split: The split the seed belongs to.
        scene: ALFRED floor plan number.
        params: ALFRED's ``pddl_params`` (``object_target``, ``parent_target``, ``toggle_target``, ...).
        description: The task text (``"put a hot apple in fridge"``).
        problem: The PDDL problem.
    """

    task_type: str
    seed: int
    split: str
    scene: int
    params: Mapping[str, Any] = field(repr=False)
    description: str = ""
    problem: str = field(default="", repr=False)


def mangle(thor_id: str) -> str:
    """ALFRED's PDDL-safe form of an AI2-THOR id.

    Example:
        >>> mangle("Cabinet|+00.68|-02.20")
        'Cabinet_bar__plus_00_dot_68_bar__minus_02_dot_20'
    """
    for char, word in (("-", "_minus_"), ("|", "_bar_"), ("+", "_plus_"), (".", "_dot_"), (",", "_comma_")):
        thor_id = thor_id.replace(char, word)
    return thor_id


def split_of_seed(seed: int) -> str:
    """The split whose seed range holds ``seed``.

    Raises:
        InvalidOptionError: No split holds ``seed``.
    """
    for name, seeds in SPLIT_SEEDS.items():
        if seed in seeds:
            return name
    raise InvalidOptionError(f"Seed {seed} is in no ALFWorld split; splits hold seeds {dict(SPLIT_SEEDS)}.")


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


def _scene_pool(task_type: str, split: str) -> list[int]:
    rooms = TASK_TYPES[task_type].rooms
    pool = scenes.UNSEEN_SCENES if split == "valid_unseen" else scenes.SEEN_SCENES
    return sorted(n for n in pool if scenes.room_of(n) in rooms)


def _pick_targets(task_type: str, scene: scenes.Scene, rng: random.Random) -> dict[str, str] | None:
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


def _problem(task_type: str, scene: scenes.Scene, params: Mapping[str, Any], rng: random.Random) -> str | None:
    from alfworld.gen import goal_library

    aff = _affordances()
    kind = TASK_TYPES[task_type].state_change
    target, parent, toggle = params["object_target"], params["parent_target"], params["toggle_target"]
    objects: list[tuple[str, str, scenes.Receptacle]] = []  # (thor id, type, receptacle)
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

    occupied = {tuple(r.location.split("|")[1:3]) for r in scene.receptacles}
    free = [p for p in scene.floor if (str(p[0]), str(p[1])) not in occupied]
    x, z = rng.choice(free)
    start = f"loc|{x}|{z}|{rng.randrange(4)}|30"

    present_objects = sorted({kind_ for _, kind_, _ in objects})
    present_receptacles = sorted({r.type for r in scene.receptacles})
    lines_objects = ["agent1 - agent"]
    lines_objects += [f"{t}Type - otype" for t in aff.object_types]
    lines_objects += [f"{t}Type - rtype" for t in aff.receptacle_types]
    lines_objects += [f"{mangle(o)} - object" for o, _, _ in sorted(objects)]
    lines_objects += [f"{mangle(r.id)} - receptacle" for r in scene.receptacles]
    locations = sorted({r.location for r in scene.receptacles} | {start})
    lines_objects += [f"{mangle(loc)} - location" for loc in locations]

    init = [f"(receptacleType {mangle(r.id)} {r.type}Type)" for r in scene.receptacles]
    init += [f"(objectType {mangle(o)} {t}Type)" for o, t, _ in sorted(objects)]
    init += [
        f"(canContain {r}Type {o}Type)" for r in present_receptacles for o in present_objects if aff.can_hold(r, o)
    ]
    init += [f"(pickupable {mangle(o)})" for o, t, _ in sorted(objects) if t in aff.placeable]
    init += [f"(isReceptacleObject {mangle(o)})" for o, t, _ in sorted(objects) if t in aff.movable_receptacles]
    init += [f"(openable {mangle(r.id)})" for r in scene.receptacles if r.type in aff.openable]
    init.append(f"(atLocation agent1 {mangle(start)})")
    for predicate, group in _PROPERTIES:
        init += [f"({predicate} {mangle(o)})" for o, t, _ in sorted(objects) if t in aff.actions[group]]
    init += [f"(toggleable {mangle(o)})" for o, t, _ in sorted(objects) if t in aff.actions["Toggleable"]]
    init += [f"(inReceptacle {mangle(o)} {mangle(r.id)})" for o, _, r in sorted(objects)]
    init += [f"(receptacleAtLocation {mangle(r.id)} {mangle(r.location)})" for r in scene.receptacles]
    init += [f"(objectAtLocation {mangle(o)} {mangle(r.location)})" for o, _, r in sorted(objects)]

    goal = goal_library.gdict[task_type]["pddl"].replace("#", "-")
    goal = goal.format(obj=target, recep=parent, toggle=toggle, mrecep="")
    name = f"alfworld_{task_type}_{scene.floor_plan}_{params['seed']}"
    indent = "\n        "
    return (
        f"(define (problem {name})\n(:domain alfred)\n(:objects{indent}{indent.join(lines_objects)}\n    )\n"
        f"(:init{indent}{indent.join(init)}\n    )\n{goal}"
    )


def build_task(task_type: str, seed: int, split: str, attempt: int = 0) -> GeneratedTask:
    """Draw the task of ``(task_type, seed, split)``; ``attempt`` > 0 draws the replacements.

    Raises:
        InvalidOptionError: Unknown task type or split.
        GenerationError: No scene of the split admits the task type.
    """
    if task_type not in TASK_TYPES:
        raise InvalidOptionError(f"Unknown ALFWorld task type {task_type!r}; expected one of {list(TASK_TYPES)}.")
    if split not in SPLIT_SEEDS:
        raise InvalidOptionError(f"Unknown ALFWorld split {split!r}; expected one of {list(SPLIT_SEEDS)}.")
    from alfworld.gen import goal_library

    rng = random.Random(f"agentgym-budget/alfworld/{GENERATOR_VERSION}/{task_type}/{split}/{seed}/{attempt}")
    pool = _scene_pool(task_type, split)
    for _ in range(len(pool) * 2):
        scene = scenes.load_scene(rng.choice(pool))
        params = _pick_targets(task_type, scene, rng)
        if params is None:
            continue
        problem = _problem(task_type, scene, {**params, "seed": seed}, rng)
        if problem is None:
            continue
        template = rng.choice(goal_library.gdict[task_type]["templates"])
        description = template.format(
            obj=params["object_target"].lower(),
            recep=params["parent_target"].lower(),
            toggle=params["toggle_target"].lower(),
            mrecep="",
        )
        return GeneratedTask(task_type, seed, split, scene.number, params, description, problem)
    raise GenerationError(f"No {split} scene admits an ALFWorld {task_type} task (seed {seed}).")


def write_game(task: GeneratedTask, folder: Path, *, domain: str, grammar: str) -> Path:
    """Write ``task`` in ALFWorld's on-disk format into ``folder``; return the ``game.tw-pddl`` path.

    Args:
        task: The task to write.
        folder: An existing directory (becomes the trial directory).
        domain: The PDDL domain text (``alfred.pddl``).
        grammar: The grammar text (``alfred.twl2``, still holding ``UNKNOWN GOAL``).
    """
    game = {
        "pddl_domain": domain,
        "grammar": grammar.replace("UNKNOWN GOAL", task.description),
        "pddl_problem": task.problem,
        "solvable": True,
    }
    traj = {
        "task_id": f"{task.task_type}-{task.seed}",
        "task_type": task.task_type,
        "pddl_params": dict(task.params),
        "scene": {"floor_plan": f"FloorPlan{task.scene}", "scene_num": task.scene, "random_seed": task.seed},
        "split": task.split,
        "turk_annotations": {"anns": [{"task_desc": task.description, "high_descs": [], "assignment_id": "generated"}]},
    }
    path = folder / "game.tw-pddl"
    path.write_text(json.dumps(game))
    (folder / "traj_data.json").write_text(json.dumps(traj, indent=1))
    return path


def generate_game(
    task_type: str,
    seed: int,
    split: str,
    *,
    check: Callable[[Path], list[str]],
    domain: str,
    grammar: str,
    versions: Mapping[str, str],
) -> Path:
    """Return the cached ``game.tw-pddl`` of ``(task_type, seed, split)``, generating it once.

    Args:
        task_type: One of :data:`~.task_types.TASK_TYPES`.
        seed: A seed of ``split`` (:data:`SPLIT_SEEDS`).
        split: ``"train"``, ``"valid_seen"`` or ``"valid_unseen"``.
        check: Plays a written game with the planner's plan; returns the winning plan, or ``[]``
            when the planner finds none or the plan does not win.
        domain: The PDDL domain text.
        grammar: The grammar text.
        versions: Versions of the libraries the game depends on (part of the cache key).

    Raises:
        GenerationError: No solvable task was found in the allowed attempts.
    """
    params = {"generator": GENERATOR_VERSION, "task_type": task_type, "seed": seed, "split": split, **versions}

    def build(folder: Path) -> None:
        for attempt in range(_MAX_ATTEMPTS):
            task = build_task(task_type, seed, split, attempt)
            path = write_game(task, folder, domain=domain, grammar=grammar)
            plan = check(path)
            if plan:
                traj = json.loads((folder / "traj_data.json").read_text())
                traj["planner_plan_length"] = len(plan)
                (folder / "traj_data.json").write_text(json.dumps(traj, indent=1))
                return
        raise GenerationError(
            f"Could not generate a solvable ALFWorld {task_type} game for seed {seed} ({split}) "
            f"in {_MAX_ATTEMPTS} attempts."
        )

    return cached_directory("alfworld", params, build) / "game.tw-pddl"
