"""Offline ALFWorld games: scenes from the alfworld layouts, deterministic generation, splits, caching, progress."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("alfworld")

from agentgym_budget.errors import GenerationError
from agentgym_budget.tasks.alfworld import generator, scenes
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES, goal_progress


def test_scenes_come_from_the_alfworld_layouts():
    assert len(scenes.SCENE_NUMBERS) == 120 and len(scenes.UNSEEN_SCENES) == 24
    for number in scenes.SCENE_NUMBERS:
        scene = scenes.load_scene(number)
        ids = [r.id for r in scene.receptacles]
        assert len(ids) == len(set(ids)) and scene.receptacles, scene.floor_plan
        assert all(re.fullmatch(r"loc\|-?\d+\|-?\d+\|[0-3]\|-?\d+", r.location) for r in scene.receptacles)
    kitchen = scenes.load_scene(1)
    assert len(kitchen.receptacles_of("Cabinet")) == 8 and len(kitchen.receptacles_of("StoveBurner")) == 4
    assert "Sink|-01.90|+00.97|-01.50|SinkBasin" in {r.id for r in kitchen.receptacles_of("SinkBasin")}


def test_generation_is_deterministic_and_varied():
    first = generator.build_task("pick_two_obj_and_place", 12, "train")
    assert first == generator.build_task("pick_two_obj_and_place", 12, "train")
    others = {generator.build_task("pick_two_obj_and_place", seed, "train").problem for seed in range(13, 18)}
    assert first.problem not in others and len(others) == 5
    assert generator.build_task("pick_two_obj_and_place", 12, "train", attempt=1).problem != first.problem


@pytest.mark.parametrize("task_type", list(TASK_TYPES))
def test_tasks_respect_rooms_splits_and_alfred_goals(task_type):
    from alfworld.gen import goal_library

    rooms = TASK_TYPES[task_type].rooms
    for split, seeds in generator.SPLIT_SEEDS.items():
        for seed in seeds[:6]:
            task = generator.build_task(task_type, seed, split)
            assert scenes.room_of(task.scene) in rooms
            assert (task.scene in scenes.UNSEEN_SCENES) == (split == "valid_unseen")
            params = task.params
            goal = goal_library.gdict[task_type]["pddl"].replace("#", "-")
            goal = goal.format(
                obj=params["object_target"], recep=params["parent_target"], toggle=params["toggle_target"]
            )
            assert task.problem.endswith(goal)
            assert task.description.split()[0] in {"put", "look", "examine", "clean", "heat", "cool", "find"}
            objects = re.findall(r"^\s*(\S+) - object$", task.problem, re.M)
            receptacles = re.findall(r"^\s*(\S+) - receptacle$", task.problem, re.M)
            assert len(objects) >= 4 and len(receptacles) >= 5
            target = params["object_target"].lower() + "_bar_"
            assert sum(o.lower().startswith(target) for o in objects) >= (2 if "two" in task_type else 1)


def test_split_of_seed():
    assert generator.split_of_seed(0) == "train" and generator.split_of_seed(5000) == "valid_seen"
    assert generator.split_of_seed(6249) == "valid_unseen"
    with pytest.raises(Exception, match="no ALFWorld split"):
        generator.split_of_seed(7000)


def test_generate_game_caches_and_redraws_deterministically(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTGYM_BUDGET_CACHE", str(tmp_path))
    calls = []

    def check(path):
        calls.append(json.loads(path.read_text())["pddl_problem"])
        return ["go to somewhere"] if len(calls) >= 3 else []

    kwargs = {"check": check, "domain": "(domain)", "grammar": "task: UNKNOWN GOAL", "versions": {"test": "1"}}
    path = generator.generate_game("pick_and_place_simple", 7, "train", **kwargs)
    assert len(calls) == 3 and len(set(calls)) == 3, "a failed draw is replaced by a new one"
    game = json.loads(path.read_text())
    traj = json.loads(path.with_name("traj_data.json").read_text())
    assert game["pddl_problem"] == generator.build_task("pick_and_place_simple", 7, "train", attempt=2).problem
    assert game["solvable"] is True and "UNKNOWN GOAL" not in game["grammar"]
    assert traj["task_type"] == "pick_and_place_simple" and traj["planner_plan_length"] == 1
    assert generator.generate_game("pick_and_place_simple", 7, "train", **kwargs) == path and len(calls) == 3
    with pytest.raises(GenerationError, match="solvable"):
        generator.generate_game("pick_and_place_simple", 8, "train", **{**kwargs, "check": lambda path: []})


def test_goal_progress_counts_goal_conditions():
    params = {"object_target": "Mug", "parent_target": "Shelf", "toggle_target": "DeskLamp"}
    base = {
        ("objecttype", ("mug_1", "mugtype")),
        ("objecttype", ("mug_2", "mugtype")),
        ("objecttype", ("lamp_1", "desklamptype")),
        ("receptacletype", ("shelf_1", "shelftype")),
        ("receptacletype", ("desk_1", "desktype")),
        ("receptacleatlocation", ("desk_1", "loc_d")),
        ("inreceptacle", ("lamp_1", "desk_1")),
        ("atlocation", ("agent1", "loc_x")),
    }
    one_in = base | {("inreceptacle", ("mug_1", "shelf_1"))}
    assert goal_progress("pick_and_place_simple", params, base) == 0.0
    assert goal_progress("pick_and_place_simple", params, one_in) == 1.0
    assert goal_progress("pick_two_obj_and_place", params, one_in) == 0.5
    assert goal_progress("pick_two_obj_and_place", params, one_in | {("inreceptacle", ("mug_2", "shelf_1"))}) == 1.0
    assert goal_progress("pick_clean_then_place_in_recep", params, one_in) == 0.5
    assert goal_progress("pick_clean_then_place_in_recep", params, one_in | {("isclean", ("mug_2",))}) == 0.5
    assert goal_progress("pick_clean_then_place_in_recep", params, one_in | {("isclean", ("mug_1",))}) == 1.0
    look = base | {("holds", ("agent1", "mug_1"))}
    assert goal_progress("look_at_obj_in_light", params, base) == 0.0
    assert goal_progress("look_at_obj_in_light", params, look) == pytest.approx(1 / 3)
    look |= {("istoggled", ("lamp_1",)), ("atlocation", ("agent1", "loc_d"))}
    assert goal_progress("look_at_obj_in_light", params, look) == 1.0
