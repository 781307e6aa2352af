"""WebShop environments: pages and actions, formats, reward / progress, expert, snapshots, errors."""

from __future__ import annotations

import dataclasses
import random
import subprocess
import sys

import gymnasium as gym
import pytest

import agentgym_budget
from agentgym_budget._internal.install_hint import install_command
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.tasks.webshop.env import WebShopEnv
from agentgym_budget.tasks.webshop.session import SEARCH_TEMPLATE, Session, parse_action
from agentgym_budget.wrappers import StateSnapshot

KEYS = {
    "expert_plan",
    "expert_action",
    "page",
    "asin",
    "selected_options",
    "reward_info",
    "goal_asin",
    "available_actions",
}


@pytest.fixture(scope="module")
def env():
    env = WebShopEnv(1_000, info_keys=KEYS)
    yield env
    env.close()


def _first_product_with_options(env, query="t-shirt"):
    _, _, _, _, info = env.step(f"search[{query}]")
    for action in info["admissible_actions"]:
        asin = action[len("click[") : -1]
        if len(asin) == 10 and asin.startswith("b0"):
            index = env.catalog.index_of_asin[asin.upper()]
            if len(env.catalog.products[index].options) == 2:
                return asin, index
    raise AssertionError("no product with two option groups on the first page")


def test_ids_are_registered_in_the_family():
    ids = agentgym_budget.registered_ids("webshop")
    names = [i.split("/")[1] for i in ids]
    assert names == sorted(["WebShop-v0", "WebShop-1k-v0", "WebShop-10k-v0", "WebShop-100k-v0", "WebShop-Data-v0"])
    assert agentgym_budget.env_info("WebShop-100k-v0").kwargs == {"num_products": 100_000}
    assert agentgym_budget.env_info("WebShop-v0").kwargs == {"num_products": 10_000}


def test_walk_through_every_page(env):
    obs, info = env.reset(options={"task": 0})
    assert info["admissible_actions"] == [SEARCH_TEMPLATE] and info["page"] == "search"
    assert obs.startswith("Instruction: ") and "--- Search ---" in obs
    assert info["available_actions"] == {"has_search_bar": True, "clickables": []}
    asin, index = _first_product_with_options(env)
    obs, _, _, _, info = env.step("click[next >]")
    assert "page 2 of" in obs and "click[< prev]" in info["admissible_actions"]
    assert SEARCH_TEMPLATE not in info["admissible_actions"] and not info["available_actions"]["has_search_bar"]
    obs, _, _, _, info = env.step("click[< prev]")
    assert "page 1 of" in obs and "click[< prev]" not in info["admissible_actions"]
    obs, _, _, _, info = env.step(f"Click[ {asin.upper()} ]")
    product = env.catalog.products[index]
    assert info["page"] == "item" and info["asin"] == product.asin and product.title in obs
    (group_a, values_a), (group_b, values_b) = product.options
    expected = {"click[back to search]", "click[< prev]", "click[description]", "click[features]", "click[reviews]"}
    expected |= {"click[buy now]"} | {f"click[{v}]" for v in values_a + values_b}
    assert set(info["admissible_actions"]) == expected and info["admissible_actions"] == sorted(expected)
    obs, _, _, _, info = env.step(f"click[{values_a[0]}]")
    obs, _, _, _, info = env.step(f"click[{values_a[-1]}]")
    obs, _, _, _, info = env.step(f"click[{values_b[0]}]")
    assert info["selected_options"] == {group_a: values_a[-1], group_b: values_b[0]}
    assert f"[{values_a[-1]}] (selected)" in obs and f"[{values_a[0]}] (selected)" not in obs
    for sub in ("description", "features", "reviews"):
        obs, _, _, _, info = env.step(f"click[{sub}]")
        assert info["page"] == sub and info["admissible_actions"] == ["click[< prev]", "click[back to search]"]
        assert info["selected_options"] == {group_a: values_a[-1], group_b: values_b[0]}
        obs, _, _, _, info = env.step("click[< prev]")
        assert info["page"] == "item"
    details = env.catalog.details(index)
    obs, *_ = env.step("click[features]")
    assert all(bullet.split(" - ")[0] in obs for bullet in details.bullet_points)
    env.step("click[< prev]")
    _, _, _, _, info = env.step("click[< prev]")
    assert info["page"] == "results" and info["asin"] is None and info["selected_options"] == {}
    _, _, _, _, info = env.step("click[back to search]")
    assert info["page"] == "search" and info["admissible_actions"] == [SEARCH_TEMPLATE]


def test_invalid_actions_change_nothing_and_explain(env):
    env.reset(options={"task": 1})
    _, _, _, _, before = env.step("search[cotton socks]")
    snapshot = env.get_state()
    for action in ("look", "click[buy now]", "search[shoes]", "click[b0nonexist0]", "search[]", "click[next >]x"):
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs.startswith("Invalid action") and reward == 0.0 and not terminated and not truncated
        assert info["admissible_actions"] == before["admissible_actions"]
        assert info["page"] == "results"
    assert "no search box" in env.step("search[shoes]")[0]
    assert env.session == dataclasses.replace(snapshot.engine, feedback=env.session.feedback)


def test_search_anywhere_and_webshop_format():
    env = WebShopEnv(1_000, observation_format="webshop", search_anywhere=True)
    obs, _ = env.reset(options={"task": 2})
    assert obs.startswith("WebShop [SEP] Instruction: [SEP] ") and obs.endswith(" [SEP] Search")
    obs, *_ = env.step("search[green tea]")
    assert obs.startswith("Instruction: [SEP] ") and " [SEP] Back to Search [SEP] Page 1 (Total results: " in obs
    assert SEARCH_TEMPLATE in env.step("search[organic honey]")[-1]["admissible_actions"]
    same, *_ = env.step("dance")
    assert same == env.step("click[nothing]")[0] and "Invalid" not in same
    asin = next(a for a in env.step("click[next >]")[-1]["admissible_actions"] if a.startswith("click[b0"))
    obs, *_ = env.step(asin)
    assert " [SEP] < Prev [SEP] " in obs and obs.endswith(
        " [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"
    )
    obs, reward, terminated, _, _ = env.step("click[buy now]")
    assert terminated and obs.startswith("Thank you for shopping with us! [SEP] Your code: [SEP] None [SEP] ")
    assert obs.endswith(f" [SEP] Your score (min 0.0, max 1.0) [SEP] {reward} [SEP] Reward Details [SEP] None")


def test_purchase_reward_progress_won_and_lost(env):
    obs, info = env.reset(options={"task": 3})
    assert info["progress"] == 0.0 and info["reward_info"] is None
    plan = info["expert_plan"]
    rewards = []
    for action in plan[:-1]:
        _, reward, terminated, _, info = env.step(action)
        rewards.append(reward)
        assert not terminated
        if info["page"] == "item":
            assert info["progress"] == info["reward_info"]["reward"]
    assert info["progress"] == 1.0 and set(rewards) == {0.0}
    obs, reward, terminated, _, info = env.step(plan[-1])
    assert (reward, terminated, info["won"], info["lost"], info["progress"]) == (1.0, True, True, False, 1.0)
    assert "Your score (min 0.0, max 1.0): 1.0" in obs and info["admissible_actions"] == []
    # buying the wrong product loses with the partial reward
    env.reset(options={"task": 3})
    actions = env.step("search[dining chairs solid wood]")[-1]["admissible_actions"]
    target = env.goal.asin.lower()
    other = next(a for a in actions if a.startswith("click[b0") and target not in a)
    _, _, _, _, info = env.step(other)
    progress = info["progress"]
    _, reward, terminated, _, info = env.step("click[buy now]")
    assert terminated and info["lost"] and not info["won"] and reward == progress < 1.0
    assert reward == pytest.approx(info["reward_info"]["reward"])


@pytest.mark.slow
def test_expert_wins_every_task_of_every_split():
    for split in ("train", "valid", "test"):
        env = WebShopEnv(1_000, split=split, info_keys={"expert_plan"})
        for task in env.task_ids:
            _, info = env.reset(options={"task": task})
            plan = info["expert_plan"]
            for n, action in enumerate(plan):
                _, reward, terminated, _, info = env.step(action)
                assert info["expert_plan"] == plan[n + 1 :]
            assert terminated and info["won"] and reward == 1.0, task


def test_expert_recovers_from_detours(env):
    rng = random.Random(0)
    for task in range(40):
        _, info = env.reset(options={"task": task})
        for _ in range(rng.randrange(1, 8)):
            choices = [a for a in info["admissible_actions"] if a != "click[buy now]"]
            action = rng.choice(choices).replace(
                SEARCH_TEMPLATE, "search[" + rng.choice(("shirt", "tea", "sofa")) + "]"
            )
            _, _, _, _, info = env.step(action)
        while not info["won"]:
            assert info["expert_action"] is not None
            _, _, terminated, _, info = env.step(info["expert_action"])
            if terminated:
                break
        assert info["won"], task


def test_snapshot_is_the_plain_session(env):
    env.reset(options={"task": 4})
    env.step("search[women's boots]")
    state = env.get_state()
    assert isinstance(state.engine, Session) and state.engine.page == "results"
    results = env.step("click[next >]")
    fork = StateSnapshot(gym.make("agentgym_budget/WebShop-1k-v0", info_keys=KEYS))
    fork.reset(seed=0)
    fork.unwrapped.set_state(state)
    again = fork.step("click[next >]")
    assert again[0] == results[0] and again[-1] == results[-1]
    fork.close()


def test_construction_errors():
    with pytest.raises(InvalidOptionError, match="observation_format"):
        WebShopEnv(1_000, observation_format="html")
    with pytest.raises(InvalidOptionError, match="search_anywhere"):
        WebShopEnv(1_000, search_anywhere="yes")
    with pytest.raises(InvalidOptionError, match="num_products"):
        WebShopEnv(10)
    with pytest.raises(agentgym_budget.errors.UnknownSplitError):
        WebShopEnv(1_000, split="dev")


def test_configuration_is_part_of_the_env_key():
    a = WebShopEnv(1_000)
    assert a.env_key == WebShopEnv(1_000).env_key
    assert a.env_key != WebShopEnv(1_000, observation_format="webshop").env_key
    assert a.env_key != WebShopEnv(1_000, catalog_seed=1).env_key
    assert WebShopEnv(1_000).catalog is a.catalog, "catalogs are shared within a process"


def test_parse_action():
    assert parse_action("search[ Red  SHOES ]") == ("search", "red shoes")
    assert parse_action("CLICK [Buy Now]") == ("click", "buy now")
    assert parse_action("click[a[b]]") == ("click", "a[b]")
    assert parse_action("click buy now") is None and parse_action("search[x] please") is None


@pytest.mark.slow
def test_registration_is_light_and_missing_extras_are_explained():
    code = (
        "import sys, agentgym_budget\n"
        "heavy = {'bm25s', 'Stemmer', 'rapidfuzz', 'agentgym_budget.tasks.webshop.env'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
        "sys.modules['bm25s'] = None\n"
        "from agentgym_budget.errors import MissingDependencyError\n"
        "from agentgym_budget.tasks.webshop.env import WebShopEnv\n"
        "try:\n"
        "    WebShopEnv(60)\n"
        "except MissingDependencyError as err:\n"
        "    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert "'bm25s'" in out.stdout and install_command("webshop") in out.stdout
