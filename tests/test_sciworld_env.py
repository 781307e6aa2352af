"""The ScienceWorld family (``agentgym_budget.tasks.sciworld``): tasks, arguments, turns, bad input, expert, states."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import pytest
from scienceworld.constants import ID2TASK

import agentgym_budget
from agentgym_budget.errors import InvalidOptionError, SnapshotMismatchError, UnknownSplitError, UnknownTaskError
from agentgym_budget.snapshots.state import TextEnvState
from agentgym_budget.tasks.sciworld import engine
from agentgym_budget.tasks.sciworld.catalog import TASKS
from agentgym_budget.tasks.sciworld.env import MAX_REPLAY_ACTIONS
from agentgym_budget.wrappers import TurnBudget

SCIWORLD = "agentgym_budget/ScienceWorld-v0"
NO_MATCH = "No known action matches that input."


@pytest.fixture(autouse=True, scope="module")
def _jvm_started() -> None:
    """Start the process's JVM once (about a second), outside the timed tests."""
    engine.World().close()


def _make(**kwargs: object) -> gym.Env:
    return gym.make(SCIWORLD, **{"task": "find-animal", **kwargs})


def test_every_task_is_reachable_by_name_and_paper_id() -> None:
    assert agentgym_budget.registered_ids("sciworld") == [SCIWORLD]
    assert {spec.paper_id: spec.name for spec in TASKS.values()} == ID2TASK
    sizes = {split: sum(len(spec.variations(split)) for spec in TASKS.values()) for split in ("train", "dev", "test")}
    assert sizes == {"train": 3592, "dev": 1796, "test": 1819}
    env = gym.make(SCIWORLD, task="1-1", split="dev")
    assert env.unwrapped.task_ids == tuple(f"boil-{variation}" for variation in range(14, 21))
    assert gym.make(SCIWORLD, task=["melt", "1-1", "boil"]).unwrapped.tasks == ("boil", "melt")
    assert len(gym.make(SCIWORLD).unwrapped.task_ids) == 3592
    for out_of_range in ("boil-99", "boil-20", "boil--1", "boil"):  # past the task's 30 variations, a test one, ...
        with pytest.raises(UnknownTaskError, match="Unknown task"):
            gym.make(SCIWORLD, task="boil").reset(options={"task": out_of_range})


def test_the_splits_are_the_engines() -> None:
    world = engine.World()
    try:
        world.load("find-animal", 0, "")
        spec = TASKS["find-animal"]
        for split, listed in (
            ("train", "getVariationsTrain"),
            ("dev", "getVariationsDev"),
            ("test", "getVariationsTest"),
        ):
            assert list(world.read(listed)) == list(spec.variations(split))
        assert world.interface.getTaskMaxVariations("find-animal") == spec.count
    finally:
        world.close()


@pytest.mark.slow
def test_every_tasks_splits_are_the_engines() -> None:
    world = engine.World()
    try:
        for name, spec in TASKS.items():
            world.load(name, 0, "")
            got = [list(world.read(f"getVariations{split.title()}")) for split in ("train", "dev", "test")]
            assert got == [list(spec.variations(split)) for split in ("train", "dev", "test")], name
    finally:
        world.close()


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"task": "boill"}, "unknown task 'boill'. Did you mean 'boil'?"),
        ({"task": "11-1"}, "unknown task '11-1'"),
        ({"task": 3}, "task must be a task name or paper id"),
        ({"task": ""}, "unknown task ''"),
        ({"simplifications": "openDoor"}, "unknown simplification 'openDoor'. Did you mean 'openDoors'?"),
        ({"simplifications": 7}, "simplifications must be a comma-separated str"),
        ({"task": "power-component", "simplifications": "noElectricalAction"}, "noElectricalAction removes"),
        ({"max_admissible": 0}, "max_admissible must be an int >= 1 or None"),
        ({"max_admissible": True}, "max_admissible must be an int >= 1 or None"),
        ({"tasks": "boil"}, "has no argument 'tasks'. Did you mean 'task'?"),
    ],
)
def test_arguments_are_validated(kwargs: dict, expected: str) -> None:
    with pytest.raises(InvalidOptionError, match=expected.replace("?", r"\?").replace(".", r"\.")):
        gym.make(SCIWORLD, **kwargs)
    with pytest.raises(UnknownSplitError, match="dev"):
        gym.make(SCIWORLD, split="valid")


@pytest.mark.slow
def test_simplifications_reach_the_engine_and_the_configuration() -> None:
    env = _make(simplifications=["teleportAction", "openDoors"], info_keys={"look"})
    assert env.unwrapped.simplifications == "openDoors,teleportAction"
    assert env.unwrapped.env_key != _make().unwrapped.env_key
    _, info = env.reset(seed=0)
    assert "(that is open)" in info["look"] and "(that is closed)" not in info["look"]
    assert env.step("teleport to kitchen")[0] == "You teleport to the kitchen."


def test_reset_shows_the_task_then_the_room_and_the_goal_is_the_task() -> None:
    obs, info = _make().reset(seed=3)
    assert info["goal"].startswith("Your task is to find a(n) animal.")
    assert obs.startswith(info["goal"] + "\n\nThis room is called the ")
    assert info["task_id"].startswith("find-animal-") and info["progress"] == 0.0
    assert "admissible_actions" not in info and "action_is_valid" not in info  # opt-in here


def test_reset_task_is_refused_in_every_spelling_the_engine_accepts() -> None:
    env = TurnBudget(_make(info_keys={"expert_plan", "score", "moves"}), max_turns=20)
    _, info = env.reset(seed=7)
    _, _, _, _, info = env.step(info["expert_plan"][0])
    progress, moves = info["progress"], info["moves"]
    assert progress > 0
    for spelling in ("reset task", "Reset  the TASK", "reset\ttask", "a reset task", "reset\ntask the"):
        obs, reward, terminated, _, info = env.step(spelling)
        assert obs == env.unwrapped.blocked_feedback and reward == 0.0 and not terminated
        assert (info["progress"], info["moves"]) == (progress, moves)
    assert info["turn"] == 6
    assert env.step("reset task now")[0] == NO_MATCH  # the engine's parser does not take this one either


BAD_INPUT = ["", "   ", "x" * 10_000, "é🙂 go north", "look around\ninventory", "look around; inventory",
             "look around. inventory", "\x00\x01", "open door to hallway\ngo to hallway"]  # fmt: skip


def test_bad_input_is_one_turn_that_changes_nothing() -> None:
    env = TurnBudget(_make(info_keys={"score", "moves", "look", "inventory"}), max_turns=20)
    _, before = env.reset(seed=7)
    world = env.unwrapped._world
    for turn, action in enumerate(BAD_INPUT, start=1):
        obs, reward, terminated, truncated, after = env.step(action)
        assert (obs, reward, terminated, truncated) == (NO_MATCH, 0.0, False, False), repr(action[:40])
        assert after["turn"] == turn
        for key in ("score", "moves", "look", "inventory", "progress"):
            assert after[key] == before[key], (key, repr(action[:40]))
    assert env.unwrapped._world is world and env.unwrapped._world_log == []  # the engine took no command


def test_turns_are_not_the_engines_moves() -> None:
    env = TurnBudget(_make(info_keys={"moves"}), max_turns=10)
    _, info = env.reset(seed=1)
    moves = [env.step(action)[-1]["moves"] for action in ("zzqx", "wait", "wait1", "inventory")]
    assert moves[0] == info["moves"] and moves[1] >= moves[0] + 10 and moves[2] > moves[1] and moves[3] == moves[2]
    assert env.step("look around")[-1]["turn"] == 5


def test_a_wrong_focus_loses_and_progress_falls_to_zero() -> None:
    env = _make(info_keys={"expert_plan", "score"})
    _, info = env.reset(seed=7)  # the conformance checks' variation: its gold path is in the caches
    for action in info["expert_plan"][:2]:
        _, reward, _, _, info = env.step(action)
    assert info["progress"] > 0
    before = info["progress"]
    _, reward, terminated, truncated, info = env.step("focus on air")
    assert terminated and not truncated and info["lost"] and not info["won"]
    assert info["score"] == -100 and info["progress"] == 0.0 and reward == pytest.approx(-before)
    assert info["expert_plan"] == []


def test_admissible_actions_are_bounded_sensible_and_opt_in() -> None:
    env = _make(info_keys={"admissible_actions", "valid_actions"})
    _, info = env.reset(seed=0)
    admissible, valid = info["admissible_actions"], info["valid_actions"]
    assert admissible == sorted(admissible) and 0 < len(admissible) <= 64 < len(valid)
    assert set(admissible) <= set(valid) and "reset task" not in valid
    assert not [a for a in admissible if " agent" in a or " air" in a or a.startswith("connect ")]
    assert info["action_is_valid"] is True
    assert env.step(admissible[0])[-1]["action_is_valid"] is True
    assert env.step("zzqx")[-1]["action_is_valid"] is False
    whole = _make(info_keys={"admissible_actions"}, max_admissible=None).reset(seed=0)[1]["admissible_actions"]
    assert whole == valid
    assert len(_make(info_keys={"admissible_actions"}, max_admissible=5).reset(seed=0)[1]["admissible_actions"]) == 5


def test_the_expert_replans_from_the_last_gold_step() -> None:
    env = _make(info_keys={"expert_plan", "expert_action"})
    _, info = env.reset(seed=7)
    plan = info["expert_plan"]
    assert plan == list(env.unwrapped.gold_path) and info["expert_action"] == plan[0]
    _, _, _, _, info = env.step("look around")  # a detour: the plan is unchanged
    assert info["expert_plan"] == plan
    _, _, _, _, info = env.step(plan[0])
    assert info["expert_plan"] == plan[1:]


def test_hostile_states_are_refused_before_anything_changes() -> None:
    env = _make()
    env.reset(seed=0)
    env.step("look around")
    state = env.unwrapped.get_state()
    for bad in (
        dataclasses.replace(state, actions=("look around",) * (MAX_REPLAY_ACTIONS + 1)),
        dataclasses.replace(state, actions=("look around", 7)),
        dataclasses.replace(state, actions=("x" * 70_000,)),
        dataclasses.replace(state, engine={"not": "a sciworld state"}),
        dataclasses.replace(state, task_id="boil-0"),
        dataclasses.replace(state, task_id="find-animal-299"),  # a test variation, not in train
    ):
        with pytest.raises(SnapshotMismatchError):
            env.unwrapped.set_state(TextEnvState.from_bytes(bad.to_bytes()))
    env.unwrapped.set_state(TextEnvState.from_bytes(state.to_bytes()))
    assert env.step("zzqx")[0] == NO_MATCH


SCRIPT = ("open door to hallway", "go to hallway", "look around", "zzqx", "open door to kitchen", "go to kitchen",
          "look at counter", "pick up bowl", "inventory", "wait1", "look around")  # fmt: skip


def _script_bytes(env: gym.Env, task_id: str) -> list[str]:
    obs, info = env.reset(options={"task": task_id})
    observed = [obs, info["look"], info["inventory"]]
    for action in SCRIPT:
        obs, _, _, _, info = env.step(action)
        observed += [obs, info["look"], info["inventory"]]
    return observed


@pytest.mark.slow
def test_the_same_actions_give_byte_identical_observations_across_loads_and_envs() -> None:
    first = _make(info_keys={"look", "inventory"})
    other = gym.make(SCIWORLD, task="chemistry-mix", info_keys={"look", "inventory"})
    runs = [_script_bytes(first, "find-animal-7")]
    other.reset(options={"task": "chemistry-mix-1"})
    runs.append(_script_bytes(first, "find-animal-7"))  # a second load of the same variation in this env
    runs.append(_script_bytes(_make(info_keys={"look", "inventory"}), "find-animal-7"))  # another env
    assert runs[0] == runs[1] == runs[2]
    assert len(set(runs[0])) > 5


def test_restores_replay_only_what_the_engine_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    env = _make()
    env.reset(seed=0)
    env.step("open door to hallway")
    early = env.unwrapped.get_state()
    loads: list[str] = []
    load = engine.World.load
    monkeypatch.setattr(
        engine.World, "load", lambda world, *args, **kw: loads.append(args[0]) or load(world, *args, **kw)
    )
    for action in ("zzqx", "", "look around; inventory"):  # unknown commands change nothing: nothing to replay
        env.step(action)
        env.unwrapped.set_state(early)
    assert env.step("go to hallway")[0] == "You move to the hallway." and loads == []
    later = env.unwrapped.get_state()
    env.unwrapped.set_state(early)  # the engine has gone past it: reload and replay
    assert env.step("zzqx")[0] == NO_MATCH and len(loads) == 1
    env.unwrapped.set_state(later)  # further on in the same episode: only "go to hallway" is replayed
    assert env.step("zzqx")[0] == NO_MATCH and len(loads) == 1
    assert env.unwrapped._world_log == ["open door to hallway", "go to hallway"]


@pytest.mark.slow
def test_the_gold_path_is_cached_once_per_variation(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AGENTGYM_BUDGET_CACHE", str(tmp_path))
    env = _make(info_keys={"expert_plan"})
    task = env.unwrapped.task_ids[3]
    assert env.unwrapped.task_prepared(task) is False
    env.unwrapped.prepare_task(task)
    assert env.unwrapped.task_prepared(task) is True
    assert env.reset(options={"task": task})[1]["expert_plan"] == list(engine.gold_path(task.rsplit("-", 1)[0], 3, ""))


def test_reading_the_world_leaves_its_random_generator_and_ids_alone() -> None:
    """The valid-action listing draws random numbers: it runs with a scratch generator, so that asking for
    ``admissible_actions`` (or ``look``) never changes how an episode goes on."""
    worlds = [engine.World(), engine.World()]
    try:
        for world in worlds:
            world.load("grow-fruit", 0, "")
            world.step("open door to hallway")
        worlds[0].valid_actions()
        worlds[0].read("freeActionLook")
        worlds[0].step("zzqx")  # takes its counter and generator back in
        counters = []
        for world in worlds:
            world.step("look around")
            counters.append(int(engine._globals(world.jvm).ids.count()))
        assert worlds[0]._random.nextLong() == worlds[1]._random.nextLong()
        assert counters[0] == counters[1]
    finally:
        for world in worlds:
            world.close()
