"""The TextWorldExpress family (``agentgym_budget.tasks.twx``): arguments, folds, expert, JVM sharing, errors."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import gymnasium as gym
import psutil
import pytest

import agentgym_budget
from agentgym_budget._internal.install_hint import install_command
from agentgym_budget.errors import (
    GenerationError,
    InvalidOptionError,
    SnapshotMismatchError,
    UnknownSplitError,
)
from agentgym_budget.snapshots.state import EnvState, TextEnvState
from agentgym_budget.tasks.twx import gateway
from agentgym_budget.tasks.twx.env import MAX_REPLAY_ACTIONS
from agentgym_budget.tasks.twx.games import FOLD_SEEDS, GAMES

TWX_IDS = agentgym_budget.registered_ids("twx")
COIN = "agentgym_budget/TWX-CoinCollector-v0"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def _jvm_started() -> None:
    """Start the process's JVM once (about a second), outside the timed tests."""
    gateway.new_game_interface()


def test_every_game_has_an_id() -> None:
    assert sorted(f"agentgym_budget/{spec.env_name}" for spec in GAMES.values()) == TWX_IDS
    assert len(TWX_IDS) == 8
    assert all(agentgym_budget.env_info(i).splits == ("train", "dev", "test") for i in TWX_IDS)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"num_location": 5}, "unknown argument 'num_location'. Did you mean 'num_locations'?"),
        ({"num_locations": 12}, "num_locations=12 is out of range; expected 1 to 11"),
        ({"num_locations": 2.5}, "num_locations must be an int from 1 to 11, got 2.5"),
        ({"num_locations": True}, "num_locations must be an int"),
        ({"include_doors": 2}, "include_doors must be True or False, got 2"),
    ],
)
def test_game_arguments_are_validated(kwargs: dict, expected: str) -> None:
    with pytest.raises(InvalidOptionError, match=expected.replace("?", r"\?").replace(".", r"\.")):
        gym.make(COIN, **kwargs)


def test_games_without_parameters_say_so_and_splits_are_the_folds() -> None:
    with pytest.raises(InvalidOptionError, match="none \\(this game has no parameters\\)"):
        gym.make("agentgym_budget/TWX-Sorting-v0", size=3)
    with pytest.raises(UnknownSplitError, match="dev"):
        gym.make(COIN, split="valid")


def test_defaults_spelled_out_make_the_same_configuration() -> None:
    default = gym.make(COIN)
    spelled = gym.make(COIN, num_locations=11, num_distractor_items=0, include_doors=True, limit_inventory_size=True)
    assert default.unwrapped.env_key == spelled.unwrapped.env_key
    assert gym.make(COIN, num_locations=3).unwrapped.env_key != default.unwrapped.env_key


def test_folds_are_the_engines_seed_ranges() -> None:
    engine = gateway.new_game_interface()
    assert list(engine.getSeedsTrain()) == list(FOLD_SEEDS["train"])
    assert list(engine.getSeedsDev()) == list(FOLD_SEEDS["dev"])
    assert list(engine.getSeedsTest()) == list(FOLD_SEEDS["test"])
    env = gym.make(COIN, split="test")
    assert env.unwrapped.task_ids[0] == "coin-20000" and len(env.unwrapped.task_ids) == 1000


def test_same_seed_same_game_and_the_engine_sees_the_arguments() -> None:
    first, second = gym.make(COIN, num_locations=4), gym.make(COIN, num_locations=4)
    assert first.reset(seed=5) == second.reset(seed=5)
    assert first.reset(seed=6)[0] != first.reset(seed=5)[0]
    engine = first.unwrapped._engine
    assert json.loads(engine.getGenerationPropertiesJSON())["numLocations"] == 4


@pytest.mark.slow
@pytest.mark.parametrize("env_id", TWX_IDS)
def test_the_gold_path_wins_every_game(env_id: str) -> None:
    env = gym.make(env_id, split="dev", info_keys={"expert_action", "expert_plan", "score"})
    _, info = env.reset(seed=3)
    total, steps = 0.0, 0
    while info["expert_action"] is not None:
        assert info["expert_plan"][0] == info["expert_action"]
        _, reward, terminated, truncated, info = env.step(info["expert_action"])
        total, steps = total + reward, steps + 1
        if terminated:
            break
    assert info["won"] and terminated and not truncated
    assert total == pytest.approx(1.0) and info["score"] == pytest.approx(1.0)
    assert steps <= len(env.unwrapped.gold_path)  # TWC's gold path may go on after the win


@pytest.mark.parametrize("env_id", [COIN, "agentgym_budget/TWX-TWC-v0"], ids=["coin", "twc"])
def test_the_gold_path_of_a_task_is_the_same_at_every_reset(env_id: str) -> None:
    # The engine seeds these two games' gold-path random walks from the clock; ours from the task's seed.
    envs = [gym.make(env_id, info_keys={"expert_plan"}) for _ in range(2)]
    plans = {tuple(env.reset(seed=seed, options={"task": 0})[1]["expert_plan"]) for seed in range(3) for env in envs}
    assert len(plans) == 1
    env = envs[0]
    _, info = env.reset(seed=0, options={"task": 0})
    for action in plans.pop():
        _, _, terminated, _, info = env.step(action)
        if terminated:
            break
    assert info["won"]


def test_leaving_the_gold_path_leaves_the_expert_without_a_plan() -> None:
    env = gym.make(COIN, num_locations=3, info_keys={"expert_action", "expert_plan"})
    _, info = env.reset(seed=0)
    assert info["expert_action"] == "look around"
    _, _, _, _, info = env.step("inventory")
    assert info["expert_action"] is None and info["expert_plan"] == []


def test_mapreader_generation_failure_is_typed() -> None:
    env = gym.make("agentgym_budget/TWX-MapReader-v0", num_locations=2, max_distance_apart=8)
    with pytest.raises(GenerationError, match="could not generate task"):
        env.reset(seed=0)


def _java_children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True) if "java" in child.name()}


def test_every_env_of_a_process_shares_one_jvm() -> None:
    before = _java_children()  # the TWX JVM (started by the module's fixture), and other families' own
    envs = gym.make_vec(COIN, num_envs=16)
    envs.reset(seed=0)
    other = gym.make("agentgym_budget/TWX-Cooking-v0")
    other.reset(seed=0)
    assert _java_children() == before and gateway.jvm_pid() in before
    envs.close()
    other.close()


def test_threads_play_the_same_episodes_as_alone() -> None:
    def play(seed: int) -> list:
        env = gym.make(COIN, num_locations=5)
        obs, info = env.reset(seed=seed)
        trace = [obs]
        for _ in range(12):
            obs, reward, terminated, _, info = env.step(
                info["admissible_actions"][seed % len(info["admissible_actions"])]
            )
            trace.append((obs, reward))
            if terminated:
                break
        return trace

    alone = {seed: play(seed) for seed in range(8)}
    together: dict[int, list] = {}
    threads = [threading.Thread(target=lambda s=seed: together.__setitem__(s, play(s))) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together == alone


def test_hostile_states_are_refused_before_any_replay() -> None:
    env = gym.make(COIN)
    env.reset(seed=0)
    env.step("look around")
    state = env.unwrapped.get_state()
    too_long = dataclasses.replace(state, actions=("look around",) * (MAX_REPLAY_ACTIONS + 1))
    for bad in (
        too_long,
        dataclasses.replace(state, actions=("look around", 7)),
        dataclasses.replace(state, actions=("x" * 70_000,)),
        dataclasses.replace(state, engine={"not": "a twx state"}),
    ):
        with pytest.raises(SnapshotMismatchError):
            env.unwrapped.set_state(TextEnvState.from_bytes(bad.to_bytes()))
    env.unwrapped.set_state(TextEnvState.from_bytes(state.to_bytes()))
    assert env.step("inventory")[1] == 0.0


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    environ.pop("JAVA_HOME", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120)


def test_without_java_the_error_says_how_to_install_it() -> None:
    code = (
        "import gymnasium as gym, agentgym_budget\n"
        "from agentgym_budget.errors import MissingDependencyError\n"
        "try:\n"
        "    gym.make('agentgym_budget/TWX-CoinCollector-v0')\n"
        "except MissingDependencyError as err:\n"
        "    print('ERROR', err)\n"
        "from agentgym_budget.cli.main import main\n"
        "main(['list', '--family', 'twx', '--envs'])\n"
    )
    bin_dir = str(Path(sys.executable).parent)
    out = _run(code, PATH=bin_dir)
    assert "ERROR" in out.stdout and "apt-get install default-jre-headless" in out.stdout, out.stderr
    assert "no: needs java" in out.stdout


def test_without_the_package_the_error_names_the_extra() -> None:
    code = (
        "import sys, gymnasium as gym, agentgym_budget\n"
        "assert 'textworld_express' not in sys.modules and 'py4j' not in sys.modules\n"
        "sys.modules['textworld_express'] = None\n"
        "from agentgym_budget.errors import MissingDependencyError\n"
        "try:\n"
        "    gym.make('agentgym_budget/TWX-Sorting-v0')\n"
        "except MissingDependencyError as err:\n"
        "    print(err)\n"
    )
    out = _run(code)
    assert "'textworld-express'" in out.stdout and install_command("twx") in out.stdout, out.stderr


def test_a_closed_env_resumes_its_episode_in_a_new_game_object() -> None:
    env = gym.make(COIN, num_locations=4)
    env.reset(seed=2)
    env.step("look around")
    twin = gym.make(COIN, num_locations=4)
    twin.reset(seed=2)
    twin.step("look around")
    env.unwrapped.close()
    assert env.unwrapped._engine is None
    for action in ("inventory", "look around"):
        assert env.step(action) == twin.step(action)


def test_a_restored_state_keeps_the_experts_place_on_the_gold_path() -> None:
    env = gym.make("agentgym_budget/TWX-Cooking-v0", info_keys={"expert_plan"})
    _, info = env.reset(seed=1)
    for action in info["expert_plan"][:3]:
        _, _, _, _, info = env.step(action)
    fresh = gym.make("agentgym_budget/TWX-Cooking-v0", info_keys={"expert_plan"})
    agentgym_budget.set_state(fresh, EnvState.from_bytes(agentgym_budget.get_state(env).to_bytes()))
    action = info["expert_plan"][0]
    assert fresh.step(action)[4]["expert_plan"] == env.step(action)[4]["expert_plan"] != []
