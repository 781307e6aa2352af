"""Built-in agents and the agent-name registry."""

from __future__ import annotations

import pickle
import random

import pytest

from agentgym_budget.agents import (
    ExpertAgent,
    NoisyExpertNoRecover,
    NoisyExpertRecover,
    RandomAgent,
    agent_kinds,
    is_async_agent,
    parse_agent,
    required_info_keys,
)
from agentgym_budget.agents.openai_chat import OpenAIChatAgent
from agentgym_budget.errors import InvalidOptionError, UnknownAgentError
from agentgym_budget.runner.rollout import EnvRef, run_episode

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")


def _info(expert: str, admissible: list[str], plan: list[str] | None = None) -> dict:
    return {"admissible_actions": admissible, "expert_action": expert, "expert_plan": plan or [expert]}


# ------------------------------------------------------------------ registry
def test_canonical_names_and_building() -> None:
    assert parse_agent("random").name == "random"
    assert parse_agent("expert").build().__class__ is ExpertAgent
    spec = parse_agent("noisy-expert-recover:eps=0.25")
    assert spec.name == "noisy-expert-recover:eps=0.25"
    assert spec.build().eps == 0.25
    assert parse_agent("noisy-expert-norecover").name == "noisy-expert-norecover:eps=0.3"
    assert parse_agent(spec) is spec
    assert pickle.loads(pickle.dumps(spec)).name == spec.name


def test_openai_names_keep_colons_in_models_and_urls() -> None:
    spec = parse_agent("openai:llama3.1:8b:base_url=http://127.0.0.1:11434/v1,temperature=0.2,history=3")
    assert spec.argument == "llama3.1:8b"
    assert spec.options["base_url"] == "http://127.0.0.1:11434/v1"
    assert spec.options["temperature"] == 0.2 and spec.options["history"] == 3
    # operational parameters (server, retries) do not change the agent's identity
    assert spec.name == "openai:llama3.1:8b:temperature=0.2,history=3"
    agent = spec.build()
    assert isinstance(agent, OpenAIChatAgent) and is_async_agent(agent)
    assert agent.base_url == "http://127.0.0.1:11434/v1" and agent.history == 3
    assert parse_agent("openai:org/model-7B:show_actions=false").options["show_actions"] is False


@pytest.mark.parametrize(
    ("name", "error", "match"),
    [
        ("noisy-expert-recovr", UnknownAgentError, "Did you mean 'noisy-expert-recover'"),
        ("gpt", UnknownAgentError, "Known agents: expert, hf, noisy-expert-norecover"),
        ("noisy-expert-recover:esp=0.2", InvalidOptionError, "Did you mean 'eps'"),
        ("noisy-expert-recover:eps=high", InvalidOptionError, "not a valid float"),
        ("noisy-expert-recover:eps=1.5", InvalidOptionError, r"in \[0, 1\]"),
        ("openai", InvalidOptionError, "needs its model"),
        ("random:extra", InvalidOptionError, "takes no argument"),
        ("openai:m:show_actions=maybe", InvalidOptionError, "not a valid bool"),
        ("", InvalidOptionError, "Agent names are strings"),
    ],
)
def test_bad_names_raise_typed_errors(name: str, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        parse_agent(name).build()


def test_every_kind_is_listed_with_a_description() -> None:
    kinds = agent_kinds()
    assert {"random", "expert", "noisy-expert-recover", "noisy-expert-norecover", "openai"} <= set(kinds)
    assert all(kind.description for kind in kinds.values())


# ------------------------------------------------------------------ built-ins on synthetic infos
def test_random_agent_is_uniform_and_seeded() -> None:
    info = {"admissible_actions": ["a", "b", "c", "d"]}
    agent = RandomAgent()
    agent.reset("", "", info, seed=5)
    first = [agent.act("", info) for _ in range(400)]
    agent.reset("", "", info, seed=5)
    assert [agent.act("", info) for _ in range(400)] == first
    assert {a: first.count(a) for a in "abcd"} == pytest.approx({a: 100 for a in "abcd"}, abs=35)
    assert agent.act("", {"admissible_actions": []}) == ""


def test_expert_and_info_keys() -> None:
    assert required_info_keys(ExpertAgent()) == {"expert_action", "admissible_actions"}
    assert required_info_keys(NoisyExpertRecover()) == {"expert_action", "admissible_actions"}
    assert required_info_keys(NoisyExpertNoRecover()) == {"expert_plan", "admissible_actions"}
    assert required_info_keys(RandomAgent()) == {"admissible_actions"}
    agent = ExpertAgent()
    agent.reset("", "", {}, seed=0)
    assert agent.act("", _info("go east", ["go east", "look"])) == "go east"
    assert agent.act("", {"expert_action": None, "admissible_actions": ["look"]}) == "look"


def test_noisy_recover_errs_at_rate_eps_with_non_expert_actions() -> None:
    info = _info("go east", ["go east", "go west", "look", "inventory"])
    agent = NoisyExpertRecover(eps=0.3)
    agent.reset("", "", info, seed=1)
    actions = [agent.act("", info) for _ in range(2000)]
    mistakes = [a for a in actions if a != "go east"]
    assert len(mistakes) / len(actions) == pytest.approx(0.3, abs=0.04)
    assert set(mistakes) == {"go west", "look", "inventory"}
    assert agent.stats() == {"mistakes": len(mistakes)}
    never = NoisyExpertRecover(eps=0.0)
    never.reset("", "", info, seed=1)
    assert {never.act("", info) for _ in range(50)} == {"go east"}
    always = NoisyExpertRecover(eps=1.0)
    always.reset("", "", info, seed=1)
    assert "go east" not in {always.act("", info) for _ in range(50)}


def test_noisy_norecover_follows_its_stale_plan() -> None:
    plan = ["go east", "go north", "take coin"]
    agent = NoisyExpertNoRecover(eps=0.0)
    agent.reset("", "", _info("go east", ["go east"], plan), seed=0)
    # the env's fresh expert says something else: the agent ignores it and keeps its own plan
    fresh = _info("go south", ["go south", "go east", "go north", "take coin"], ["go south"])
    assert [agent.act("", fresh) for _ in range(5)] == [*plan, "take coin", "take coin"]


def test_noisy_norecover_mistakes_do_not_consume_plan_steps() -> None:
    plan = ["s1", "s2", "s3", "s4"]
    info = _info("s1", ["x", "y"], plan)
    agent = NoisyExpertNoRecover(eps=0.5)
    agent.reset("", "", info, seed=3)
    actions = [agent.act("", info) for _ in range(40)]
    on_plan = [a for a in actions if a.startswith("s")]
    assert on_plan[:4] == plan and set(on_plan[4:]) <= {"s4"}
    # a mistake is never the pending plan step itself
    pending, mistakes = 0, 0
    for action in actions:
        step = plan[min(pending, 3)]
        if action == step:
            pending += 1
        else:
            mistakes += 1
    assert mistakes == agent.stats()["mistakes"] > 0


def test_both_noisy_experts_err_on_the_same_turns_on_the_expert_path() -> None:
    """Same seed, on-path states: identical per-turn error decisions, so equal single-step error rates."""
    plan = [f"step{i}" for i in range(30)]
    admissible = [*plan, "wrong a", "wrong b"]
    for seed in range(5):
        recover, stale = NoisyExpertRecover(eps=0.3), NoisyExpertNoRecover(eps=0.3)
        recover.reset("", "", _info(plan[0], admissible, plan), seed=seed)
        stale.reset("", "", _info(plan[0], admissible, plan), seed=seed)
        position = 0
        for _ in range(25):
            info = _info(plan[position], admissible, plan[position:])
            a, b = recover.act("", info), stale.act("", info)
            assert (a == plan[position]) == (b == plan[position])
            position += a == plan[position]
        assert recover.stats() == stale.stats()


# ------------------------------------------------------------------ built-ins on a real game
@pytest.mark.slow
def test_expert_and_recovering_expert_win_and_are_deterministic() -> None:
    tasks = COIN.task_ids()[:2]
    env_action = COIN.make({"expert_action"})
    env_plan = COIN.make({"expert_plan"})
    try:
        for task in tasks:
            expert = run_episode(env_action, ExpertAgent(), task_id=task, budget=20, seed=0)
            assert expert.won and expert.turns == expert.success_turn
            for seed in range(4):
                noisy = run_episode(env_action, NoisyExpertRecover(eps=0.5), task_id=task, budget=80, seed=seed)
                assert noisy.won, "the recovering expert re-plans, so with a generous budget it always wins"
                assert noisy.turns >= expert.turns
                again = run_episode(env_action, NoisyExpertRecover(eps=0.5), task_id=task, budget=80, seed=seed)
                assert again.actions == noisy.actions
                stale = run_episode(env_plan, NoisyExpertNoRecover(eps=0.5), task_id=task, budget=80, seed=seed)
                twice = run_episode(env_plan, NoisyExpertNoRecover(eps=0.5), task_id=task, budget=80, seed=seed)
                assert stale.actions == twice.actions
    finally:
        env_action.close()
        env_plan.close()


def test_recovery_matters_after_a_harmful_mistake() -> None:
    """After one correct move, force a move back: the recovering expert still wins, the stale one never does."""
    task = COIN.task_ids()[0]
    agents = ((NoisyExpertRecover(eps=0.0), {"expert_action"}), (NoisyExpertNoRecover(eps=0.0), {"expert_plan"}))
    for agent, keys in agents:
        env = COIN.make(keys)
        try:
            observation, info = env.reset(seed=0, options={"task": task, "max_turns": 40})
            agent.reset(info["goal"], observation, info, seed=0)
            first = agent.act(observation, info)
            assert first.startswith("go ")
            observation, _, _, _, info = env.step(first)
            back = {"go east": "go west", "go west": "go east", "go north": "go south", "go south": "go north"}[first]
            observation, _, _, _, info = env.step(back)
            done, won = False, False
            while not done:
                observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
                done, won = terminated or truncated, info["won"]
            assert won == isinstance(agent, NoisyExpertRecover)
        finally:
            env.close()


def test_seeded_agents_do_not_share_global_random_state() -> None:
    random.seed(123)
    agent = RandomAgent()
    info = {"admissible_actions": list("abcdefgh")}
    agent.reset("", "", info, seed=9)
    first = [agent.act("", info) for _ in range(20)]
    random.seed(456)
    agent.reset("", "", info, seed=9)
    assert [agent.act("", info) for _ in range(20)] == first
