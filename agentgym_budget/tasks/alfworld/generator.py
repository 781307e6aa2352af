"""Generating ALFRED-style ALFWorld games offline, from the scenes shipped in ``alfworld``.

A game is what ALFWorld's release data holds for each trial: ``game.tw-pddl`` (JSON with
the PDDL domain, the text grammar with the task description filled in, the PDDL problem and
``"solvable": true``) and ``traj_data.json`` (task type and ALFRED's ``pddl_params``, which the
handcoded expert reads). :func:`build_task` makes the problem of one ``(task type, seed,
split)``:

1. a generator seeded with those three values picks a scene of the split's scene pool
   (:mod:`.scenes`) whose room suits the task type (ALFRED's ``GOALS_VALID``) and that has
   the appliance the task needs (sink basin, microwave, fridge, lamp);
2. it picks the targets (object type, receptacle type, lamp type) among the scene's types
   (:mod:`.scene_problem`),
   with ALFRED's affordances (``alfworld.gen.constants``: ``VAL_RECEPTACLE_OBJECTS``,
   ``VAL_ACTION_OBJECTS``);
3. it places one to three instances of every movable object type of the scene in receptacles
   that may hold them (targets never start where the goal wants them), and the agent at a
   free floor point;
4. the goal is ALFRED's (``alfworld.gen.goal_library``) and the task text one of its templates.

:func:`generate_game` writes the game into the cache (:func:`agentgym_budget.storage.cache.cached_directory`)
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

from agentgym_budget.errors import GenerationError, InvalidOptionError
from agentgym_budget.storage.cache import cached_directory
from agentgym_budget.tasks.alfworld import scenes
from agentgym_budget.tasks.alfworld.scene_problem import pick_targets, scene_problem
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES

__all__ = ["SPLIT_SEEDS", "generate_game"]

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


def split_of_seed(seed: int) -> str:
    """The split whose seed range holds ``seed``.

    Raises:
        InvalidOptionError: No split holds ``seed``.
    """
    for name, seeds in SPLIT_SEEDS.items():
        if seed in seeds:
            return name
    raise InvalidOptionError(f"Seed {seed} is in no ALFWorld split; splits hold seeds {dict(SPLIT_SEEDS)}.")


def _scene_pool(task_type: str, split: str) -> list[int]:
    rooms = TASK_TYPES[task_type].rooms
    pool = scenes.UNSEEN_SCENES if split == "valid_unseen" else scenes.SEEN_SCENES
    return sorted(n for n in pool if scenes.room_of(n) in rooms)


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
        params = pick_targets(task_type, scene, rng)
        if params is None:
            continue
        problem = scene_problem(task_type, scene, {**params, "seed": seed}, rng)
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


def _write_game(task: GeneratedTask, folder: Path, *, domain: str, grammar: str) -> Path:
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
            path = _write_game(task, folder, domain=domain, grammar=grammar)
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
