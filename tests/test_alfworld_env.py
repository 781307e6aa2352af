"""ALFWorld environments: contract details, rewards and progress, experts, snapshots, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import gymnasium as gym
import pytest

pytest.importorskip("alfworld")

import agentgym_budget
from agentgym_budget._internal.install_hint import install_command
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.tasks.alfworld.env import ALFWorldEnv, sanitize_command
from agentgym_budget.wrappers import StateSnapshot, TurnBudget
from tests.alfworld_support import TYPES, game_paths

ALL_KEYS = {"expert_action", "expert_plan", "facts", "task_type", "game_file"}


def test_registered_ids_and_splits():
    ids = agentgym_budget.registered_ids("alfworld")
    assert len(ids) == 7 and "agentgym_budget/ALFWorld-v0" in ids
    for env_id in ids:
        assert agentgym_budget.env_info(env_id).splits == ("train", "valid_seen", "valid_unseen")
    env = gym.make("agentgym_budget/ALFWorld-HeatAndPlace-v0", num_games=3)
    assert env.unwrapped.task_ids == tuple(f"pick_heat_then_place_in_recep-{i}" for i in range(3))
    env.close()
    everything = ALFWorldEnv()
    assert len(everything.task_ids) == 6 * 5000
    assert ALFWorldEnv(split="valid_unseen").task_ids[0] == "pick_and_place_simple-6000"
    assert set(ALFWorldEnv(split="valid_seen").task_ids).isdisjoint(everything.task_ids)


@pytest.mark.slow
@pytest.mark.parametrize("task_type", TYPES)
def test_following_the_planner_wins_with_reward_and_progress(task_type):
    game_paths()
    env = gym.make("agentgym_budget/ALFWorld-v0", num_games=1, info_keys=ALL_KEYS)
    try:
        obs, info = env.reset(options={"task": f"{task_type}-0"})
        assert obs.startswith("-= Welcome to TextWorld, ALFRED! =-") and info["goal"] in obs
        assert info["task_type"] == task_type and info["game_file"].endswith("game.tw-pddl")
        assert info["progress"] == 0.0 and info["expert_action"] == info["expert_plan"][0]
        assert any(fact.startswith("atlocation(agent1") for fact in info["facts"])
        progress, rewards = [info["progress"]], []
        for _ in range(len(info["expert_plan"])):
            obs, reward, terminated, truncated, info = env.step(info["expert_action"])
            progress.append(info["progress"])
            rewards.append(reward)
        assert terminated and info["won"] and not truncated and not info["lost"]
        assert rewards[-1] == 1.0 and sum(rewards) == 1.0
        assert progress[-1] == 1.0 and progress == sorted(progress), "progress along the plan should only grow"
        if task_type != "pick_and_place_simple":
            assert 0.0 < progress[-2] < 1.0, "multi-condition goals should show partial progress"
        assert info["expert_plan"] == [] and info["expert_action"] is None
    finally:
        env.close()


def test_handcoded_expert_is_seeded_and_snapshotted():
    game_paths()
    env = StateSnapshot(
        gym.make(
            "agentgym_budget/ALFWorld-PickAndPlace-v0", num_games=1, expert="handcoded", info_keys={"expert_action"}
        )
    )
    try:
        _, info = env.reset(seed=3)
        assert info["expert_action"] == "look"
        actions, snap = [], None
        for step in range(60):
            if step == 4:
                snap = env.snapshot()
                info_at_snap = info
            action = info["expert_action"] or "look"
            actions.append(action)
            _, _, terminated, _, info = env.step(action)
            if terminated:
                break
        assert info["won"], "ALFWorld's handcoded expert should solve a pick-and-place task"
        env.restore(snap)
        replayed, info = [], info_at_snap
        for _ in actions[4:]:
            replayed.append(info["expert_action"] or "look")
            _, _, terminated, _, info = env.step(replayed[-1])
        assert replayed == actions[4:] and terminated
    finally:
        env.close()


def test_invalid_commands_are_normal_turns():
    game_paths()
    env = gym.make("agentgym_budget/ALFWorld-v0", num_games=1)
    try:
        _, info = env.reset(seed=0)
        obs, reward, terminated, _, info2 = env.step("fly to the moon")
        assert (obs, reward, terminated) == ("Nothing happens.", 0.0, False)
        assert info2["admissible_actions"] == info["admissible_actions"]
        obs, *_ = env.step("  " + info["admissible_actions"][0].upper() + "  ")
        assert obs != "Nothing happens."
    finally:
        env.close()
    assert sanitize_command("Take  Apple 1\tfrom\nFridge 1") == "take apple 1 from fridge 1"
    assert len(sanitize_command("x" * 10_000)) == 200


def test_restore_after_reset_falls_back_to_replay():
    game_paths()
    env = StateSnapshot(TurnBudget(gym.make("agentgym_budget/ALFWorld-CoolAndPlace-v0", num_games=1), max_turns=50))
    try:
        _, info = env.reset(seed=1)
        for action in info["admissible_actions"][:3]:
            _, _, _, _, info = env.step(action)
        snap = env.snapshot()
        expected = env.step(info["admissible_actions"][-1])
        env.reset(seed=5)
        env.restore(snap)
        again = env.step(info["admissible_actions"][-1])
        assert again[0] == expected[0] and again[-1] == expected[-1]
    finally:
        env.close()


def test_shuffle_names_changes_with_the_seed_only():
    game_paths()
    env = gym.make("agentgym_budget/ALFWorld-PickTwoAndPlace-v0", num_games=1, shuffle_names=True)
    try:
        intros = [env.reset(seed=seed)[0] for seed in (0, 1, 2, 3, 0)]
        assert intros[0] == intros[-1] and len(set(intros)) > 1
    finally:
        env.close()


@pytest.mark.slow
def test_same_trajectory_in_another_process():
    """Same seed, same task, same trajectory, whatever Python's string hashing."""
    game_paths()
    script = textwrap.dedent(
        """
        import json, gymnasium as gym, agentgym_budget
        env = gym.make("agentgym_budget/ALFWorld-v0", num_games=1, info_keys={"expert_plan"})
        obs, info = env.reset(seed=4)
        out = [obs, info["expert_plan"]]
        for i in range(8):
            obs, r, term, trunc, info = env.step(info["admissible_actions"][(7 * i) % len(info["admissible_actions"])])
            out.append([obs, info["admissible_actions"], info["progress"], info["expert_plan"]])
        print(json.dumps(out))
        """
    )
    runs = []
    for hash_seed in ("1", "2"):
        environ = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environ, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert runs[0] == runs[1]


@pytest.mark.slow
def test_missing_alfworld_names_the_extra():
    script = textwrap.dedent(
        """
        import sys
        for name in ("alfworld", "fast_downward"):
            sys.modules[name] = None
        import gymnasium as gym, agentgym_budget
        from agentgym_budget.errors import MissingDependencyError
        try:
            gym.make("agentgym_budget/ALFWorld-HeatAndPlace-v0")
        except MissingDependencyError as err:
            print("MISSING:", err)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "MISSING: ALFWorld-HeatAndPlace-v0 needs the 'alfworld' package" in done.stdout
    assert install_command("alfworld") in done.stdout


def test_bad_arguments():
    with pytest.raises(InvalidOptionError, match="task type"):
        ALFWorldEnv("pick_and_place")
    with pytest.raises(InvalidOptionError, match="expert"):
        ALFWorldEnv(expert="oracle")
    with pytest.raises(InvalidOptionError, match="num_games"):
        ALFWorldEnv(num_games=0)
    env = ALFWorldEnv(["pick_two_obj_and_place", "pick_and_place_simple"], num_games=1)
    assert env.task_ids == ("pick_and_place_simple-0", "pick_two_obj_and_place-0")


def test_the_planner_runs_only_when_its_keys_are_requested(monkeypatch):
    from agentgym_budget.tasks.alfworld import engine as engine_module

    game_paths()

    def no_planner(*args, **kwargs):
        raise AssertionError("the planner ran without expert_action/expert_plan being requested")

    monkeypatch.setattr(engine_module, "solve", no_planner)
    env = StateSnapshot(gym.make("agentgym_budget/ALFWorld-v0", num_games=1, info_keys={"facts", "task_type"}))
    try:
        _, info = env.reset(seed=2)
        snap = env.snapshot()
        for action in info["admissible_actions"][:5]:
            env.step(action)
        env.restore(snap)
        fork = env.fork(1)[0]
        assert fork.step(info["admissible_actions"][0])[-1]["task_id"] == info["task_id"]
        fork.close()
    finally:
        env.close()
