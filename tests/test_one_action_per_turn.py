"""ALFWorld and WebShop cannot chain actions in one line either (issue 9 §1: "apply the same rule").

ALFWorld's engine carries out a command only when it equals one admissible command (anything else
is "Nothing happens."), and WebShop reads one ``search[...]`` / ``click[...]`` per line, whose
argument runs to the last ``]``. TextWorld is tested in ``test_textworld_commands.py``.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401
from agentgym_budget.tasks.webshop.env import WebShopEnv

SEPARATORS = (", ", ",", ". ", " then ", " and ", "; ", "\n")


@pytest.mark.slow
def test_alfworld_runs_no_chained_line():
    pytest.importorskip("alfworld")
    env = gym.make("agentgym_budget/ALFWorld-v0", num_games=1, info_keys={"expert_plan", "facts"})
    try:
        _, info = env.reset(seed=0, options={"task": 0})
        plan = info["expert_plan"]
        for separator in SEPARATORS:
            obs, reward, terminated, _, after = env.step(separator.join(plan[:2]))
            assert (obs, reward, terminated) == ("Nothing happens.", 0.0, False)
            assert after["facts"] == info["facts"] and after["expert_plan"] == plan
        _, _, _, _, after = env.step(plan[0])
        assert after["expert_plan"] == plan[1:]
    finally:
        env.close()


@pytest.fixture(scope="module")
def shop():
    env = WebShopEnv(1_000, info_keys={"page", "asin"})
    yield env
    env.close()


def test_webshop_runs_one_action_per_line(shop):
    shop.reset(options={"task": 0})
    _, _, _, _, results = shop.step("search[cotton t-shirt]")
    product = next(action for action in results["admissible_actions"] if action.startswith("click[b0"))
    for separator in (*SEPARATORS, ""):
        _, _, _, _, info = shop.step(f"{product}{separator}click[buy now]")
        assert info["page"] == "results" and info["asin"] is None, separator
    shop.step("click[back to search]")
    _, _, _, _, info = shop.step(f"search[cotton t-shirt] {product}")
    assert info["page"] == "results" and shop.session.keywords == f"cotton t-shirt] {product[:-1]}"
