"""Group rollouts from one state: one reset, G independent forks with the same start."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.testing import transition_key
from agentgym_budget.vector.group import group_reset
from agentgym_budget.wrappers import BudgetMix, StateSnapshot, TurnBudget


def _coin(level: int = 5) -> gym.Env:
    return BudgetMix(
        TurnBudget(gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=level), max_turns=10), budgets=(2, 6)
    )


def _play(env: gym.Env, actions: list[str]) -> list[tuple]:
    return [transition_key(env.step(action)) for action in actions]


@pytest.mark.parametrize("seed", [0, 3])
def test_members_start_alike_and_play_like_a_fresh_reset(seed: int) -> None:
    env = _coin()
    group = group_reset(env, 4, seed=seed)
    try:
        fresh = _coin()
        observation, info = fresh.reset(seed=seed)
        assert (group.observation, group.info) == (observation, info)
        plan = ["go west", "go west", "look"][: info["max_turns"]]
        expected = _play(fresh, plan)
        for member in group.envs:  # same task, same drawn budget, same transitions as a fresh reset
            assert _play(member, plan) == expected
        assert len({id(member.unwrapped) for member in group.envs}) == 4
        assert group.infos() == [info] * 4 and group.infos()[0] is not group.infos()[1]
    finally:
        group.close()


def test_members_are_independent_and_env_stays_at_the_start() -> None:
    env = StateSnapshot(_coin())
    group = group_reset(env, 3, seed=1)
    try:
        first = group.envs[0].step("go west")
        assert group.envs[1].get_wrapper_attr("turn") == 0 and env.get_wrapper_attr("turn") == 0
        second = group.envs[1].step("look")
        assert first[0] != second[0]
        assert group.envs[2].step("go west")[0] == first[0]
        again = group_reset(env, 1, seed=1)  # the caller's StateSnapshot is reused, not wrapped again
        assert again.observation == group.observation and isinstance(again.envs[0].env, BudgetMix)
        again.close()
    finally:
        group.close()


def test_webshop_members_share_the_start() -> None:
    env = TurnBudget(gym.make("agentgym_budget/WebShop-1k-v0"), max_turns=5)
    group = group_reset(env, 2, seed=7, options={"task": 3})
    try:
        assert group.info["task_id"] == env.unwrapped.task_ids[3]
        a, b = (member.step("search[red dress]") for member in group.envs)
        assert transition_key(a) == transition_key(b)
    finally:
        group.close()


@pytest.mark.parametrize("size", [0, -1, 2.5, True, "3"])
def test_bad_group_sizes_are_refused(size: object) -> None:
    with pytest.raises(InvalidOptionError, match="group_size must be a positive integer"):
        group_reset(_coin(1), size)  # type: ignore[arg-type]
