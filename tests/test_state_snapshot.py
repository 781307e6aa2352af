"""StateSnapshot and the stack snapshot machinery: native, replay, fork, mismatches."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import pytest

import agentgym_budget
from agentgym_budget.errors import (
    EpisodeOverError,
    InvalidOptionError,
    SnapshotMismatchError,
    SnapshotUnsupportedError,
)
from agentgym_budget.testing import transition_key
from agentgym_budget.wrappers import BudgetMix, StateSnapshot, TurnBudget

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"
COOKING = "agentgym_budget/TextWorld-Cooking-v0"


def test_restores_the_whole_stack_including_turn_counter_and_sampled_budget():
    env = StateSnapshot(BudgetMix(TurnBudget(gym.make(COIN), max_turns=99), budgets=[6, 7, 8]))
    _, info = env.reset(seed=2, options={"task": 0})
    env.step("look")
    snap = env.snapshot()
    budget = info["max_turns"]
    for _ in range(3):
        env.step("inventory")
    env.reset(seed=9, options={"task": 1, "max_turns": 50})
    env.restore(snap)
    assert env.get_wrapper_attr("turn") == 1
    assert env.get_wrapper_attr("episode_budget") == budget
    assert env.get_wrapper_attr("sampled_budget") == budget
    assert env.unwrapped.task_id == info["task_id"]
    _, _, _, _, info = env.step("look")
    assert (info["turn"], info["turns_left"]) == (2, budget - 2)


def test_snapshot_is_immutable_and_restorable_many_times():
    env = StateSnapshot(TurnBudget(gym.make(COIN), max_turns=20))
    _, info = env.reset(seed=0)
    snap = env.snapshot()
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.parts = ()
    outcomes = []
    for _ in range(5):
        env.restore(snap)
        outcomes.append(transition_key(env.step(info["admissible_actions"][-1])))
    assert all(outcome == outcomes[0] for outcome in outcomes)


def test_restore_after_the_env_moved_to_another_task():
    env = StateSnapshot(TurnBudget(gym.make(COIN, info_keys={"expert_plan"}), max_turns=20))
    _, info = env.reset(seed=0, options={"task": 3})
    snap = env.snapshot()
    expected = transition_key(env.step(info["expert_plan"][0]))
    env.reset(seed=0, options={"task": 4})
    env.restore(snap)
    assert transition_key(env.step(info["expert_plan"][0])) == expected


def test_snapshot_with_expert_plan_equals_replay():
    env = StateSnapshot(TurnBudget(gym.make(COOKING, difficulty=3, info_keys={"expert_plan"}), max_turns=50))
    fresh = TurnBudget(gym.make(COOKING, difficulty=3, info_keys={"expert_plan"}), max_turns=50)
    _, info = env.reset(seed=4)
    plan = info["expert_plan"]
    for action in plan[:2]:
        env.step(action)
    snap = env.snapshot()
    continuation = [transition_key(env.step(a)) for a in plan[2:]]
    env.restore(snap)
    assert [transition_key(env.step(a)) for a in plan[2:]] == continuation
    fresh.reset(seed=4)
    replay = [transition_key(fresh.step(a)) for a in plan]
    assert replay[2:] == continuation and continuation[-1][2] is True


def test_restore_into_an_env_of_another_task_set_raises():
    coin = StateSnapshot(TurnBudget(gym.make(COIN), max_turns=10))
    coin.reset(seed=0, options={"task": 0})
    other_level = StateSnapshot(TurnBudget(gym.make(COIN, level=6), max_turns=10))
    with pytest.raises(SnapshotMismatchError, match="configured as"):
        other_level.restore(coin.snapshot())


def test_restore_into_another_wrapper_stack_raises():
    env = StateSnapshot(TurnBudget(gym.make(COIN), max_turns=10))
    env.reset(seed=0, options={"task": 0})
    bare = StateSnapshot(gym.make(COIN))
    with pytest.raises(SnapshotMismatchError, match="stack"):
        bare.restore(env.snapshot())


def test_restore_rejects_non_snapshots_and_replay_logs_in_native_mode():
    env = StateSnapshot(gym.make(COIN))
    env.reset(seed=0, options={"task": 0})
    with pytest.raises(SnapshotMismatchError):
        env.restore({"turn": 3})
    replay = StateSnapshot(gym.make(COIN), mode="replay")
    replay.reset(seed=0, options={"task": 0})
    with pytest.raises(SnapshotMismatchError, match="replay"):
        env.restore(replay.snapshot())


def test_snapshot_before_reset_raises():
    with pytest.raises(EpisodeOverError, match="reset"):
        StateSnapshot(gym.make(COIN)).snapshot()
    with pytest.raises(EpisodeOverError, match="reset"):
        StateSnapshot(gym.make(COIN), mode="replay").snapshot()


@pytest.mark.parametrize("n", [0, -1, 1.5, True, "2"])
def test_fork_count_must_be_positive_integer(n):
    env = StateSnapshot(gym.make(COIN))
    env.reset(seed=0, options={"task": 0})
    with pytest.raises(InvalidOptionError):
        env.fork(n)


def test_unknown_mode_and_native_without_support():
    with pytest.raises(InvalidOptionError, match="mode"):
        StateSnapshot(gym.make(COIN), mode="fast")
    with pytest.raises(SnapshotUnsupportedError, match="replay"):
        StateSnapshot(gym.make("FrozenLake-v1"), mode="native")


def test_gymnasium_wrappers_are_captured_too():
    env = StateSnapshot(gym.wrappers.RecordEpisodeStatistics(gym.make(COIN, max_episode_steps=5)))
    env.reset(seed=0, options={"task": 0})
    env.step("look")
    snap = env.snapshot()
    for _ in range(3):
        env.step("look")
    env.restore(snap)
    results = [env.step("look") for _ in range(4)]
    assert [r[3] for r in results] == [False, False, False, True]
    assert results[-1][4]["episode"]["l"] == 5


def test_replay_fallback_on_a_foreign_deterministic_env():
    env = StateSnapshot(gym.make("FrozenLake-v1", is_slippery=True))
    assert env.mode == "replay"
    env.reset()
    for action in (1, 2, 2):
        env.step(action)
    snap = env.snapshot()
    continuation = [transition_key(env.step(a)) for a in (1, 1, 2, 2, 1)]
    env.restore(snap)
    assert [transition_key(env.step(a)) for a in (1, 1, 2, 2, 1)] == continuation
    env.restore(snap)
    forks = env.fork(2)
    assert [transition_key(fork.step(1)) for fork in forks] == [continuation[0]] * 2


def test_a_replay_log_longer_than_the_cap_is_refused_before_the_stack_is_touched():
    env = StateSnapshot(gym.make("FrozenLake-v1", is_slippery=True), max_replay_actions=3)
    env.reset(seed=5)
    env.step(1)
    short = env.snapshot()
    forged = dataclasses.replace(short, replay=dataclasses.replace(short.replay, actions=(1,) * 4))
    before = transition_key(env.step(2))
    with pytest.raises(SnapshotMismatchError, match="holds 4 actions, more than max_replay_actions=3"):
        env.restore(forged)
    assert env.get_wrapper_attr("s") == before[0] and len(env._actions) == 2  # untouched: no reset, no replay
    env.restore(short)
    assert env.fork(1)[0].max_replay_actions == 3
    for wrong in (0, -1, True, 2.5):
        with pytest.raises(InvalidOptionError, match="max_replay_actions must be a positive integer"):
            StateSnapshot(gym.make("FrozenLake-v1"), max_replay_actions=wrong)


def test_module_level_get_set_state_through_gym_make_stack():
    env = TurnBudget(gym.make(COIN), max_turns=10)
    env.reset(seed=0, options={"task": 0})
    state = agentgym_budget.get_state(env)
    assert state.task_id == env.unwrapped.task_id and state.is_native
    first = transition_key(env.step("go north"))
    agentgym_budget.set_state(env, state)
    assert transition_key(env.step("go north")) == first
    with pytest.raises(SnapshotUnsupportedError):
        agentgym_budget.get_state(gym.make("FrozenLake-v1"))


def test_clone_requires_recorded_constructor_arguments():
    class Bare(gym.Wrapper):
        pass

    with pytest.raises(SnapshotUnsupportedError, match="RecordConstructorArgs"):
        agentgym_budget.clone(Bare(gym.make(COIN)))
