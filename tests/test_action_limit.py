"""Over-long actions are refused in-process by every family (no turn spent); bad reset options are typed errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.core.text import ACTION_MAX_LENGTH, ACTION_STEP_LIMIT
from agentgym_budget.errors import InvalidActionError, InvalidOptionError
from agentgym_budget.wrappers import TurnBudget

FAMILIES = {
    "textworld": ("agentgym_budget/TextWorld-CoinCollector-v0", {"level": 3}),
    "alfworld": ("agentgym_budget/ALFWorld-v0", {"num_games": 1}),
    "webshop": ("agentgym_budget/WebShop-1k-v0", {"split": "test"}),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_an_over_long_action_is_refused_and_spends_no_turn(family):
    env_id, kwargs = FAMILIES[family]
    env = TurnBudget(gym.make(env_id, **kwargs), max_turns=3)
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match=r"15,728,641 characters .* at most 65,536 characters; no turn"):
        env.step("look " * (15 * 2**20 // 5) + "x")
    assert env.turns_left == 3
    _, _, _, _, info = env.step("look " * (ACTION_STEP_LIMIT // 5))  # the limit itself is a normal turn
    assert info["turn"] == 1
    env.close()


def test_the_limit_is_far_above_the_action_space():
    assert ACTION_STEP_LIMIT >= 100 * ACTION_MAX_LENGTH


@pytest.mark.parametrize("task", [["x"], {"a": 1}, 1.5, b"id"])
def test_a_task_option_of_another_type_is_a_typed_error(task):
    env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3)
    with pytest.raises(InvalidOptionError, match=r"the 'task' option is a .* expected a task id \(str"):
        env.reset(seed=0, options={"task": task})
    with pytest.raises(InvalidOptionError, match="reset options must be a dict"):
        env.reset(seed=0, options=["task"])
    assert env.reset(seed=0, options={"task": np.int64(0)})[0]
    env.close()
