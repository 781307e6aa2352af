"""SkyRL-gym: registration, the per-trajectory env contract, and concurrent trajectories in threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import skyrl_gym

from agentgym_budget.errors import EpisodeOverError, InvalidOptionError
from agentgym_budget.integrations.skyrl import BudgetTextEnv, register_skyrl_env

SHOP = {"env_id": "WebShop-1k-v0", "max_turns": 15, "info_keys": ["expert_action"]}
COIN = {
    "env_id": "TextWorld-CoinCollector-v0",
    "env_kwargs": "level=2",
    "max_turns": 15,
    "info_keys": ["expert_action"],
}
PROMPT = [{"role": "system", "content": "Shop."}, {"role": "user", "content": ""}]


def _env(extra_info: dict, config: dict = SHOP) -> BudgetTextEnv:
    # SkyRL's generator puts its one global limit at the top level of extras: it is not the budget.
    return skyrl_gym.make(register_skyrl_env(), env_config=config, extras={"extra_info": extra_info, "max_turns": 99})


def _trajectory(extra_info: dict, config: dict = SHOP) -> dict:
    env = _env(extra_info, config)
    try:
        messages, meta = env.init(PROMPT)
        assert messages[:1] == PROMPT[:1] and messages[-1]["content"] == env.session.last.text
        outputs, turn = [], env.session.last
        while True:
            reply = f"<think>the expert says {turn.info['expert_action']}</think>\nAction: {turn.info['expert_action']}"
            output = env.step(reply)
            outputs.append(output)
            if output["done"]:
                break
            turn = env.session.last
            assert output["observations"][0]["role"] == "user"
        return {"meta": meta, "outputs": outputs, "metrics": env.get_metrics(), "max_turns": env.max_turns}
    finally:
        env.close()


def test_registration_is_guarded():
    assert register_skyrl_env() == register_skyrl_env() == "agentgym_budget"
    assert register_skyrl_env("agentgym_budget_other") == "agentgym_budget_other"
    with pytest.raises(InvalidOptionError, match=r"already registered for 'skyrl_gym\.envs\.gsm8k\.env:GSM8kEnv'"):
        register_skyrl_env("gsm8k")


@pytest.mark.parametrize("config", [SHOP, COIN], ids=["webshop", "textworld"])
def test_concurrent_trajectories_in_threads(config):
    infos = [{"seed": seed, "index": seed} for seed in range(8)]
    with ThreadPoolExecutor(4) as executor:
        results = list(executor.map(lambda info: _trajectory(info, config), infos))
    for result in results:
        last = result["outputs"][-1]
        assert last["reward"] == 1.0 and last["metadata"]["won"] and last["metadata"]["terminated"]
        assert not last["metadata"]["truncated"] and last["observations"] == []
        assert result["metrics"]["won"] == 1.0 and result["metrics"]["budget"] == 15 == result["max_turns"]
        assert all(out["metadata"]["matched"] for out in result["outputs"])
    assert [r["meta"]["task_id"] for r in results] == [_trajectory(i, config)["meta"]["task_id"] for i in infos]


def test_budget_from_extra_info_truncates():
    env = _env({"seed": 3, "max_turns": 2, "show_budget": True})
    try:
        messages, meta = env.init([{"role": "user", "content": "Shop for me."}])
        assert meta["max_turns"] == env.max_turns == 2 and "[Turns left: 2 of 2]" in messages[-1]["content"]
        first = env.step("search[purple elephant]")
        assert not first["done"] and "[Turns left: 1 of 2]" in first["observations"][0]["content"]
        second = env.step("Action: click[< prev]")
        assert second["done"] and second["metadata"]["truncated"] and not second["metadata"]["terminated"]
        assert second["reward"] == 0.0 and env.get_metrics()["truncated"] == 1.0
        with pytest.raises(EpisodeOverError, match="out of turns"):
            env.step("click[buy now]")
    finally:
        env.close()


def test_bad_settings_are_refused():
    with pytest.raises(InvalidOptionError, match="Did you mean 'max_turns'"):
        _env({"seed": 0}, {"env_id": "WebShop-1k-v0", "max_turn": 3})
    with pytest.raises(InvalidOptionError, match="Did you mean 'max_turns'"):
        _env({"seed": 0, "max_turn": 3})
    _env({"seed": 0, "split": "train", "index": 7}).close()  # other extra_info keys are ignored


def test_a_budget_above_the_generators_limit_warns_and_one_below_does_not() -> None:
    import warnings

    from agentgym_budget.integrations.skyrl import GeneratorLimitWarning

    def init(extra_info: dict, limit: int) -> BudgetTextEnv:
        env = skyrl_gym.make(
            register_skyrl_env(), env_config=COIN, extras={"extra_info": extra_info, "max_turns": limit}
        )
        env.init(PROMPT)
        return env

    with pytest.warns(GeneratorLimitWarning, match="budget is 10 turns but SkyRL's generator stops .* max_turns=3"):
        env = init({"seed": 0, "max_turns": 10}, 3)
    assert env.max_turns == 10 and env.generator_max_turns == 3
    env.close()
    with pytest.warns(GeneratorLimitWarning, match="budget is 15 turns"):  # the config's budget, none in the row
        init({"seed": 0}, 5).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", GeneratorLimitWarning)
        init({"seed": 0, "max_turns": 4}, 4).close()


def test_metrics_by_budget_survive_skyrls_averaging() -> None:
    from skyrl_gym.metrics import aggregate_for_environment

    config = {**COIN, "budgets": [1, 30]}
    metrics = []
    for seed in range(8):
        env = _env({"seed": seed}, config)
        try:
            env.init(PROMPT)
            turn = env.session.last
            while not turn.done:
                env.step(f"Action: {turn.info['expert_action']}")
                turn = env.session.last
            metrics.append(env.get_metrics())
        finally:
            env.close()
    budgets = {m["budget"] for m in metrics}
    assert budgets == {1, 30}  # both budgets drawn over these seeds
    aggregated = aggregate_for_environment(register_skyrl_env(), metrics)
    assert aggregated["won@1"] == 0.0 and aggregated["won@30"] == 1.0  # level 2 needs more than one turn
    assert aggregated["episodes@1"] + aggregated["episodes@30"] == 8
    assert 0.0 < aggregated["won"] < 1.0
