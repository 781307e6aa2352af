"""TurnBudget: hard cap on turns, truncation semantics, per-episode budgets, budget display."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agentgym_budget  # noqa: F401
from agentgym_budget.errors import EpisodeOverError, InvalidBudgetError, InvalidOptionError
from agentgym_budget.wrappers import TurnBudget

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"


@pytest.fixture
def coin_env():
    env = gym.make(COIN, info_keys={"expert_plan"})
    yield env
    env.close()


@pytest.mark.parametrize("budget", [0, -3, 2.5, 20.0, "10", True, None, float("nan")])
def test_invalid_budget_says_what_was_given(coin_env, budget):
    with pytest.raises(InvalidBudgetError) as err:
        TurnBudget(coin_env, max_turns=budget)
    assert repr(budget) in str(err.value) and "positive integer" in str(err.value)


def test_numpy_integer_budget_is_accepted(coin_env):
    assert TurnBudget(coin_env, max_turns=np.int64(4)).max_turns == 4


def test_truncates_at_cap_and_refuses_more_steps(coin_env):
    env = TurnBudget(coin_env, max_turns=3)
    _, info = env.reset(seed=0)
    assert (info["turn"], info["max_turns"], info["turns_left"]) == (0, 3, 3)
    results = [env.step("xyzzy plugh") for _ in range(3)]
    assert [(r[2], r[3]) for r in results] == [(False, False), (False, False), (False, True)]
    assert [r[4]["turns_left"] for r in results] == [2, 1, 0]
    with pytest.raises(EpisodeOverError, match="3 of 3 turns"):
        env.step("look")


def test_win_on_last_turn_is_termination_not_truncation(coin_env):
    _, info = coin_env.reset(seed=0)
    plan = info["expert_plan"]
    env = TurnBudget(coin_env, max_turns=len(plan))
    env.reset(seed=0)
    for action in plan:
        _, reward, terminated, truncated, info = env.step(action)
    assert (terminated, truncated, info["won"], info["turns_left"]) == (True, False, True, 0)
    assert reward > 0
    with pytest.raises(EpisodeOverError):
        env.step("look")


def test_per_episode_budget_override(coin_env):
    env = TurnBudget(coin_env, max_turns=10)
    _, info = env.reset(seed=0, options={"max_turns": 1})
    assert info["max_turns"] == 1
    assert env.step("look")[3] is True
    _, info = env.reset(seed=0)
    assert info["max_turns"] == 10
    with pytest.raises(InvalidBudgetError, match="reset options"):
        env.reset(seed=0, options={"max_turns": 0})


def test_show_budget_default_and_custom_format(coin_env):
    env = TurnBudget(coin_env, max_turns=5, show_budget=True)
    obs, _ = env.reset(seed=0)
    assert obs.endswith("[Turns left: 5 of 5]")
    obs, *_ = env.step("look")
    assert obs.endswith("[Turns left: 4 of 5]")
    custom = TurnBudget(coin_env, max_turns=5, show_budget=True, budget_format=" <{turn}/{max_turns}>")
    custom.reset(seed=0)
    assert custom.step("look")[0].endswith(" <1/5>")
    hidden = TurnBudget(coin_env, max_turns=5)
    assert "Turns left" not in hidden.reset(seed=0)[0]


def test_bad_budget_format_is_rejected(coin_env):
    with pytest.raises(InvalidOptionError, match="turns_left"):
        TurnBudget(coin_env, max_turns=5, budget_format="{remaining}")


def test_step_before_reset_raises(coin_env):
    with pytest.raises(EpisodeOverError, match="reset"):
        TurnBudget(coin_env, max_turns=5).step("look")


def test_budget_works_on_foreign_envs():
    env = TurnBudget(gym.make("FrozenLake-v1", is_slippery=False), max_turns=2)
    env.reset(seed=0)
    assert env.step(0)[3] is False
    assert env.step(0)[3] is True
