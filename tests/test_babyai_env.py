"""BabyAI ids: the layouts and the bot are minigrid's, the text maps back to the grid, commands, rewards, budgets.

Everything here plays the real minigrid 3.2.0 levels (the ``babyai`` extra) against minigrid itself.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import agentgym_budget
from agentgym_budget.errors import InvalidOptionError, UnknownEnvIdError, UnknownTaskError
from agentgym_budget.tasks.babyai.levels import LEVELS, MIXED_KINDS, held_out_combinations
from agentgym_budget.tasks.babyai.state import COMMANDS, GONE
from agentgym_budget.wrappers import TurnBudget

minigrid = pytest.importorskip("minigrid")

from minigrid.utils.baby_ai_bot import BabyAIBot  # noqa: E402

from agentgym_budget.tasks.babyai.view import egocentric_view, visible_cells  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LOCAL = [name for name, level in LEVELS.items() if level.mixed is None]


def _babyai(level: str, **kwargs) -> gym.Env:
    return gym.make(f"agentgym_budget/BabyAI-{level}-v0", **kwargs)


def _raw(level: str, seed: int):
    env = gym.make(f"BabyAI-{level}-v0").unwrapped
    with contextlib.redirect_stdout(io.StringIO()):
        env.reset(seed=seed)
    return env


def _bot_actions(env) -> list[int]:
    """minigrid's own bot, fed its own actions, played to the end on the raw level."""
    bot, actions = BabyAIBot(env), []
    action = bot.replan()
    for _ in range(env.max_steps):
        actions.append(int(action))
        if env.step(action)[2]:
            break
        action = bot.replan()
    return actions


@pytest.mark.parametrize("level", ["GoToLocal", "PutNextLocal", "OpenDoor", "UnlockLocal"])
def test_layouts_and_expert_plans_are_minigrids_own(level):
    env = _babyai(level, info_keys={"expert_plan"}, progress="sparse")
    for seed in range(3):
        _, info = env.reset(options={"task": seed})
        raw, ours = _raw(level, seed), env.unwrapped.engine.env
        assert ours.mission == raw.mission == info["goal"]
        assert np.array_equal(ours.grid.encode(), raw.grid.encode())
        assert (ours.agent_pos, ours.agent_dir) == (tuple(raw.agent_pos), raw.agent_dir)
        assert info["expert_plan"] == [COMMANDS[a] for a in _bot_actions(raw)]


@pytest.mark.parametrize("level", ["GoToLocal", "OpenDoor", "UnlockLocal", "PutNextLocal"])
def test_the_view_and_the_seen_cells_are_minigrids(level):
    rng, compared = np.random.default_rng(7), 0
    for seed in range(3):
        raw = _raw(level, seed)
        for _ in range(40):
            image = raw.step(int(rng.integers(len(COMMANDS))))[0]["image"]
            assert np.array_equal(np.array(egocentric_view(raw), dtype=np.uint8), image)
            _, seen = raw.gen_obs_grid()
            size, forward, right = raw.agent_view_size, raw.dir_vec, raw.right_vec
            corner = np.asarray(raw.agent_pos) + forward * (size - 1) - right * (size // 2)
            expected = {
                tuple(int(v) for v in corner - forward * j + right * i) for i, j in zip(*np.nonzero(seen), strict=True)
            }
            assert set(visible_cells(raw)) == expected
            compared += 1
    assert compared == 120


_SENTENCE = re.compile(
    r"You see (?:a|an) (?:(open|closed|locked) )?(\w+) (\w+) "
    r"(?:(\d+) steps? (left|right))?(?: and )?(?:(\d+) steps? forward)?$"
)
_WALL = re.compile(r"You see a wall (\d+) steps? (forward|left|right)$")
_STATES = {"open": 0, "closed": 1, "locked": 2}


def _cell_at(env, right: int, forward: int) -> tuple[int, int]:
    (ax, ay), (fx, fy), (rx, ry) = env.agent_pos, env.dir_vec, env.right_vec
    return ax + forward * fx + right * rx, ay + forward * fy + right * ry


def _check_sentences(env, observation: str) -> int:
    """Map each sentence of ``observation`` to its cell of ``env``'s grid; every seen object must be described."""
    described = []
    for line in observation.splitlines():
        if line.startswith(("Goal of the agent:", "'")) or line.startswith("You see nothing"):
            continue
        if line.startswith("You carry"):
            assert line == f"You carry a {env.carrying.color} {env.carrying.type}"
            continue
        wall = _WALL.match(line)
        if wall:
            steps, way = int(wall[1]), wall[2]
            offset = {"forward": (0, 1), "left": (-1, 0), "right": (1, 0)}[way]
            cells = [_cell_at(env, offset[0] * k, offset[1] * k) for k in range(1, steps + 1)]
            assert env.grid.get(*cells[-1]).type == "wall", line
            assert all(env.grid.get(*cell) is None for cell in cells[:-1]), line
            continue
        match = _SENTENCE.match(line)
        assert match, f"unparsed sentence {line!r}"
        state, color, kind, side, way, ahead = match.groups()
        right = (int(side) if side else 0) * (-1 if way == "left" else 1)
        cell = env.grid.get(*_cell_at(env, right, int(ahead or 0)))
        assert cell is not None and (cell.color, cell.type) == (color, kind), line
        if kind == "door":
            assert cell.encode()[2] == _STATES[state], line
        described.append(_cell_at(env, right, int(ahead or 0)))
    seen = [
        cell
        for cell in visible_cells(env)
        if cell != tuple(env.agent_pos)
        and 0 <= cell[0] < env.grid.width
        and 0 <= cell[1] < env.grid.height
        and env.grid.get(*cell) is not None
        and env.grid.get(*cell).type != "wall"
    ]
    assert sorted(described) == sorted(seen), observation
    return len(described)


@pytest.mark.parametrize("level", ["GoToLocal", "PutNextLocal", "UnlockLocal", "MixedTrainLocal"])
def test_every_sentence_maps_back_to_its_grid_cell(level):
    env = _babyai(level, progress="sparse")
    rng, sentences = np.random.default_rng(3), 0
    for seed in range(4):
        obs, _ = env.reset(options={"task": seed})
        sentences += _check_sentences(env.unwrapped.engine.env, obs)
        for _ in range(40):
            obs, _, terminated, _, _ = env.step(COMMANDS[int(rng.integers(len(COMMANDS)))])
            sentences += _check_sentences(env.unwrapped.engine.env, obs)
            if terminated:
                break
    assert sentences > 40


def test_the_text_is_glams_and_deterministic():
    env = _babyai("GoToLocal", progress="sparse")
    first, _ = env.reset(options={"task": 12})
    again, _ = _babyai("GoToLocal", progress="sparse").reset(options={"task": 12})
    assert first == again
    lines = first.splitlines()
    assert lines[0] == f"Goal of the agent: {env.unwrapped.engine.env.mission}"
    assert all(line.startswith(("You see a ", "You see an ")) for line in lines[1:])


def test_reset_prints_nothing_where_minigrid_prints(capfd):
    raw = gym.make("BabyAI-PutNextLocal-v0").unwrapped
    raw.reset(seed=4)  # minigrid's rejection sampling prints "Sampling rejected: ..." for this seed
    assert "Sampling rejected" in capfd.readouterr().out
    env = _babyai("PutNextLocal", progress="sparse")
    env.reset(options={"task": 4})
    env.step("toggle")
    assert capfd.readouterr().out == ""


@pytest.mark.slow
def test_importing_and_playing_prints_nothing_in_a_new_process():
    code = (
        "import gymnasium as gym, agentgym_budget\n"
        "env = gym.make('agentgym_budget/BabyAI-PickupLoc-v0', progress='sparse')\n"
        "for task in (4, 15, 16, 17):\n"  # minigrid prints while generating these
        "    env.reset(options={'task': task}); env.step('go forward')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == ""


def test_commands_ignore_case_and_spacing_and_anything_else_is_one_invalid_turn():
    env = _babyai("GoToLocal", info_keys={"step_count", "agent"}, progress="sparse")
    _, info = env.reset(options={"task": 0})
    assert info["admissible_actions"] == sorted(COMMANDS)
    _, _, _, _, info = env.step("  Turn   LEFT ")
    assert info["action_is_valid"] and info["step_count"] == 1
    where = info["agent"]
    for count, bad in enumerate(
        ["", "x" * 10_000, "tourner à gauche ✓", "turn left\ngo forward", "turn left; go forward", "go forward!"], 2
    ):
        obs, reward, terminated, truncated, info = env.step(bad)
        first = obs.splitlines()[0]
        assert first.endswith("is not a command; the commands are: " + ", ".join(COMMANDS) + ".")
        assert len(first) < 150 and not info["action_is_valid"]
        assert (reward, terminated, truncated) == (0.0, False, False)
        assert info["step_count"] == count and info["agent"] == where  # one turn passed, nothing moved


def test_the_discounted_reward_is_minigrids_and_success_is_one():
    for reward in ("success", "discounted"):
        env = _babyai("GoToLocal", info_keys={"expert_plan"}, reward=reward)
        _, info = env.reset(options={"task": 1})
        env.step("not a command")
        for command in info["expert_plan"]:
            _, value, terminated, _, final = env.step(command)
        steps, max_steps = len(info["expert_plan"]) + 1, env.unwrapped.engine.env.max_steps
        assert terminated and final["won"] and final["progress"] == 1.0
        assert value == (1.0 if reward == "success" else pytest.approx(1 - 0.9 * steps / max_steps))
    with pytest.raises(InvalidOptionError, match="unknown reward 'dense'"):
        _babyai("GoToLocal", reward="dense")


def test_a_turn_budget_wins_over_minigrids_max_steps_both_ways():
    longer = TurnBudget(_babyai("GoToLocal", progress="sparse"), max_turns=70)  # the level's max_steps is 64
    longer.reset(options={"task": 0})
    assert longer.unwrapped.engine.env.max_steps == 64
    flags = [longer.step("wait")[2:4] for _ in range(70)]  # turns pass, nothing moves
    assert flags[:69] == [(False, False)] * 69 and flags[69] == (False, True)
    shorter = TurnBudget(_babyai("GoToLocal", progress="sparse", max_steps=5), max_turns=3)
    shorter.reset(options={"task": 0})
    assert [shorter.step("wait")[2:4] for _ in range(3)][-1] == (False, True)


def test_progress_follows_the_remaining_plan():
    env = _babyai("PutNextLocal", info_keys={"expert_plan"})
    _, info = env.reset(options={"task": 3})
    plan = info["expert_plan"]
    progress = [info["progress"]]
    for command in plan:
        _, _, _, _, info = env.step(command)
        progress.append(info["progress"])
    assert progress == [pytest.approx(1 - (len(plan) - k) / len(plan)) for k in range(len(plan))] + [1.0]
    _, info = env.reset(options={"task": 3})
    _, _, _, _, info = env.step("toggle" if plan[0] != "toggle" else "drop")  # off the plan: planned again
    assert info["expert_plan"] and 0.0 <= info["progress"] < 1.0
    sparse = _babyai("PutNextLocal", progress="sparse")
    assert sparse.reset(options={"task": 3})[1]["progress"] == 0.0


def test_an_action_that_changes_nothing_keeps_the_plan_and_the_progress():
    env = _babyai("PutNextLocal", info_keys={"expert_plan", "step_count"})
    _, info = env.reset(options={"task": 3})
    _, _, _, _, info = env.step(info["expert_plan"][0])
    for nothing in ("drop", "not a command"):  # nothing to drop: the turn passes, the level is as it was
        _, _, _, _, after = env.step(nothing)
        assert (after["expert_plan"], after["progress"]) == (info["expert_plan"], info["progress"])
    assert after["step_count"] == 3


def test_the_expert_drops_first_where_a_fresh_minigrid_bot_fails():
    env = _babyai("PickupLoc", progress="sparse")
    rng, carrying, fresh_failed = np.random.default_rng(0), 0, 0
    for task in range(20):
        env.reset(options={"task": task})
        level = env.unwrapped.engine.env
        for _ in range(30):  # turns, forward and pick up until something (not the target) is carried
            terminated = env.step(COMMANDS[int(rng.integers(4))])[2]
            if terminated or level.carrying is not None:
                break
        if terminated or level.carrying is None:
            continue
        carrying += 1
        try:
            fresh_failed += not _bot_actions(copy.deepcopy(level))
        except AssertionError:  # minigrid's bot: "assert not self.bot.mission.unwrapped.carrying"
            fresh_failed += 1
        for action in env.unwrapped.engine.plan():  # drop, then minigrid's plan
            _, _, terminated, _, info = env.step(COMMANDS[action])
        assert terminated and info["won"], task
    assert carrying >= 5 and fresh_failed == carrying


def test_opening_the_box_to_pick_up_loses():
    env = _babyai("PickupLoc", info_keys={"expert_plan"}, progress="sparse")
    for task in range(200):
        _, info = env.reset(options={"task": task})
        if re.fullmatch(r"pick up the (\w+ )?box", info["goal"]):
            break
    for command in info["expert_plan"][:-1]:
        env.step(command)
    assert info["expert_plan"][-1] == "pick up"
    _, reward, terminated, _, info = env.step("toggle")  # the box opens: it is gone
    assert (reward, terminated, info["won"], info["lost"], info["expert_plan"]) == (0.0, True, False, True, [])


def test_a_put_next_whose_fixed_box_is_gone_is_lost():
    env = _babyai("PutNextLocal", info_keys={"expert_plan"}, progress="sparse")
    for task in range(100):
        _, info = env.reset(options={"task": task})
        if re.fullmatch(r"put the \w+ \w+ next to the \w+ box", info["goal"]):
            break
    engine = env.unwrapped.engine
    index = engine.objects.index(engine.env.instrs.desc_fixed.obj_set[0])
    state = env.unwrapped.get_state()
    objects = list(state.engine.objects)
    objects[index] = (*objects[index][:2], GONE, 0)  # as if opened: a legal state (boxes disappear)
    env.unwrapped.set_state(
        dataclasses.replace(state, engine=dataclasses.replace(state.engine, objects=tuple(objects)))
    )
    _, reward, terminated, _, info = env.step("toggle")
    assert (reward, terminated, info["lost"], info["expert_plan"]) == (0.0, True, True, [])


def test_a_mission_that_matches_walls_too_plays_on_after_a_toggle():
    env = _babyai("PickupDist", info_keys={"expert_plan"}, progress="sparse")
    _, info = env.reset(options={"task": 7})
    assert info["goal"] == "pick up a grey object"  # minigrid's description matches the grey walls as well
    _, _, terminated, _, info = env.step("toggle")
    assert not terminated and info["expert_plan"]


def test_mixed_ids_hold_out_their_combinations_in_train_and_name_them_in_test():
    held_out = held_out_combinations(0)
    assert held_out == {("key", "purple"), ("ball", "grey"), ("box", "yellow"), ("door", "red")}
    train, test = _babyai("MixedTrainLocal", progress="sparse"), _babyai("MixedTestLocal", progress="sparse")
    for task in range(10):
        train.reset(options={"task": task})
        level = train.unwrapped.engine.env
        assert type(level).__name__.lower() == "_" + MIXED_KINDS[task % 5].replace("_", "")
        assert not any(cell and (cell.type, cell.color) in held_out for cell in level.grid.grid)
        _, info = test.reset(options={"task": task})
        assert any(f"{color} {kind}" in info["goal"] for kind, color in held_out), info["goal"]
    again = _babyai("MixedTestLocal", progress="sparse").reset(options={"task": 7})[1]["goal"]
    assert again == test.reset(options={"task": 7})[1]["goal"]
    other, held_out_1 = _babyai("MixedTestLocal", progress="sparse", holdout_seed=1), held_out_combinations(1)
    for task in range(5):
        goal = other.reset(options={"task": task})[1]["goal"]
        assert any(f"{color} {kind}" in goal for kind, color in held_out_1), goal
    with pytest.raises(InvalidOptionError, match="holdout_seed only applies to the mixed ids"):
        _babyai("GoToLocal", holdout_seed=1)


@pytest.mark.slow
def test_missing_extra_and_old_python_raise_typed_errors():
    code = (
        "import sys\n"
        "sys.modules['minigrid'] = None\n"
        "import gymnasium as gym, agentgym_budget\n"
        "from agentgym_budget.errors import MissingDependencyError\n"
        "try:\n"
        "    gym.make('agentgym_budget/BabyAI-GoToLocal-v0')\n"
        "except MissingDependencyError as err:\n"
        "    print('MAKE:', err)\n"
        "class V(tuple):\n"
        "    major, minor = 3, 10\n"
        "sys.version_info = V((3, 10, 0))\n"
        "try:\n"
        "    gym.make('agentgym_budget/BabyAI-GoToLocal-v0')\n"
        "except MissingDependencyError as err:\n"
        "    print('OLD:', err)\n"
        "from agentgym_budget.cli.main import main\n"
        "main(['list', '--envs', '--family', 'babyai'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "MAKE: BabyAI (the BabyAI ids) needs the 'minigrid' package" in done.stdout and "[babyai]" in done.stdout
    old = (
        "OLD: BabyAI (the BabyAI ids) needs the 'minigrid' package, which requires Python >= 3.11 (this is Python 3.10)"
    )
    assert old in done.stdout
    assert "no: needs Python >= 3.11" in done.stdout and "Not installed" not in done.stdout  # pip would add nothing


def test_the_state_digest_is_the_grid_state_and_in_plan_mode_the_plan_too():
    sparse = _babyai("MixedTrainLocal", info_keys={"state_digest"}, progress="sparse")
    _, start = sparse.reset(options={"task": 4})  # a "then" mission: the verifier's memory changes on step one
    digests = [sparse.step(command)[-1]["state_digest"] for command in ("turn left", "turn right", "wait", "turn left")]
    assert digests[1] == digests[2] == start["state_digest"] != digests[0] == digests[3]
    plan = _babyai("MixedTrainLocal", info_keys={"state_digest", "expert_plan"})
    _, info = plan.reset(options={"task": 4})
    kept = plan.step("wait")[-1]
    assert kept["state_digest"] == info["state_digest"] != start["state_digest"]  # the plan is in it


def test_an_unknown_level_is_named_with_the_closest_ids():
    with pytest.raises(UnknownEnvIdError, match="Did you mean 'agentgym_budget/BabyAI-GoToLocal-v0'"):
        agentgym_budget.make("BabyAI-GoToLocl-v0")
    with pytest.raises(UnknownTaskError):
        _babyai("GoToLocal").reset(options={"task": "GoToLocal-123456789"})


def test_every_local_level_is_registered_with_its_extra():
    ids = agentgym_budget.registered_ids("babyai")
    assert len(ids) == len(LEVELS) == len(LOCAL) + 2
    info = agentgym_budget.env_info("BabyAI-GoToLocal-v0")
    assert (info.extra, info.requires, info.splits) == ("babyai", ("minigrid",), ("train", "valid", "test"))
