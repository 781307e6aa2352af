"""ProcessReward: the shaped return telescopes, policy rankings are kept, invalid actions, snapshots."""

from __future__ import annotations

import random

import gymnasium as gym
import pytest

from agentgym_budget.agents import ExpertAgent, NoisyExpertNoRecover, NoisyExpertRecover, RandomAgent
from agentgym_budget.core.text import is_admissible
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.registration import make
from agentgym_budget.wrappers import ProcessReward, StateSnapshot, TurnBudget

COOKING = [("TextWorld-Cooking-v0", {"difficulty": 1}), ("TextWorld-Cooking-v0", {"difficulty": 3})]
KEYS = {"expert_plan", "expert_action"}


def _shaped(env_id: str, kwargs: dict, budget: int, **shaping: object) -> gym.Env:
    return ProcessReward(TurnBudget(make(env_id, info_keys=KEYS, **kwargs), max_turns=budget), **shaping)


def _play(env: gym.Env, agent: object, task: int, seed: int) -> tuple[list[float], list[float], list[dict]]:
    """Shaped rewards, original rewards and every info (the reset's first) of one episode."""
    observation, info = env.reset(seed=seed, options={"task": task})
    agent.reset(info["goal"], observation, info, seed=seed)
    shaped, original, infos = [], [], [info]
    done = False
    while not done:
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        shaped.append(reward)
        original.append(info["env_reward"])
        infos.append(info)
        done = terminated or truncated
    return shaped, original, infos


def _discounted(rewards: list[float], gamma: float) -> float:
    return sum(gamma**t * r for t, r in enumerate(rewards))


POLICIES = [
    ExpertAgent,
    lambda: NoisyExpertRecover(eps=0.3),
    lambda: NoisyExpertRecover(eps=0.7),
    lambda: NoisyExpertNoRecover(eps=0.3),
    RandomAgent,
]


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "kwargs"), COOKING)
@pytest.mark.parametrize(("gamma", "terminal"), [(1.0, "zero"), (0.9, "zero"), (0.9, "progress"), (1.0, "progress")])
def test_the_shaped_return_telescopes(env_id: str, kwargs: dict, gamma: float, terminal: str) -> None:
    """G' = G + c (gamma^T Phi(s_T) - Phi(s_0)), with Phi(s_T) = 0 in "zero" mode, for every policy and episode."""
    coefficient = 2.5
    env = _shaped(env_id, kwargs, 12, coefficient=coefficient, gamma=gamma, terminal_potential=terminal)
    for make_agent in POLICIES:
        for task, seed in ((0, 1), (1, 2), (2, 3)):
            shaped, original, infos = _play(env, make_agent(), task, seed)
            steps = len(shaped)
            final = 0.0 if terminal == "zero" else infos[-1]["progress"]
            expected = _discounted(original, gamma) + coefficient * (gamma**steps * final - infos[0]["progress"])
            assert _discounted(shaped, gamma) == pytest.approx(expected, abs=1e-9)
            terms = [i["shaping_reward"] for i in infos[1:]]
            assert [s - o for s, o in zip(shaped, original, strict=True)] == pytest.approx(terms)
    env.close()


def test_shaping_from_a_restored_mid_episode_state_telescopes_from_its_potential() -> None:
    """Phi(s_0) is the potential of the state the return starts from, also when restored from a snapshot."""
    env = StateSnapshot(_shaped("TextWorld-Cooking-v0", {"difficulty": 3}, 20, coefficient=1.0))
    _, info = env.reset(seed=0, options={"task": 0})
    for action in info["expert_plan"][:3]:
        _, _, _, _, info = env.step(action)
    start = info["progress"]
    assert start > 0
    twin = env.fork(1)[0]
    shaped, original = [], []
    for action in info["expert_plan"]:
        _, reward, terminated, _, after = twin.step(action)
        shaped.append(reward)
        original.append(after["env_reward"])
    assert terminated and after["won"]
    assert sum(shaped) == pytest.approx(sum(original) - start)
    env.close()
    twin.close()


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "kwargs"), COOKING)
def test_shaping_keeps_the_ranking_of_policies(env_id: str, kwargs: dict) -> None:
    """Per task every episode's shaped return is its return minus the same constant, so rankings are equal."""
    env = _shaped(env_id, kwargs, 10, coefficient=3.0)
    means: dict[int, tuple[float, float]] = {}
    offsets: dict[int, set[float]] = {0: set(), 1: set()}
    for index, make_agent in enumerate(POLICIES):
        returns, shaped_returns = [], []
        for task in (0, 1):
            for seed in range(4):
                shaped, original, _ = _play(env, make_agent(), task, seed)
                returns.append(sum(original))
                shaped_returns.append(sum(shaped))
                offsets[task].add(round(sum(shaped) - sum(original), 9))
        means[index] = (sum(returns) / len(returns), sum(shaped_returns) / len(shaped_returns))
    assert all(len(values) == 1 for values in offsets.values())  # one constant per start state
    by_return = sorted(means, key=lambda i: (means[i][0], i))
    by_shaped = sorted(means, key=lambda i: (means[i][1], i))
    assert by_return == by_shaped
    assert len({round(m[0], 6) for m in means.values()}) > 1, "the policies should differ for the test to bite"
    env.close()


def test_keeping_the_final_potential_can_reorder_policies_under_a_budget() -> None:
    """WebShop: viewing the right product with the right options (progress 1) and never buying scores 0;
    buying it without the options scores 0.75. "progress" mode pays the truncated episode its final potential."""

    def returns(terminal: str) -> dict[str, float]:
        totals = {}
        for policy in ("look-without-buying", "buy-without-options"):
            env = ProcessReward(
                TurnBudget(make("WebShop-1k-v0", split="test", info_keys=KEYS), max_turns=6),
                coefficient=10.0,
                terminal_potential=terminal,
            )
            _, info = env.reset(seed=0, options={"task": 0})
            plan = info["expert_plan"]
            actions = (
                plan[:-1] + ["click[description]", "click[< prev]"] * 5
                if policy.startswith("look")
                else [
                    *plan[:2],
                    "click[buy now]",
                ]
            )
            shaped = original = 0.0
            for action in actions:
                _, reward, terminated, truncated, info = env.step(action)
                shaped, original = shaped + reward, original + info["env_reward"]
                if terminated or truncated:
                    break
            totals[policy] = (original, shaped)
            env.close()
        return totals

    progress_mode, zero_mode = returns("progress"), returns("zero")
    look, buy = progress_mode["look-without-buying"], progress_mode["buy-without-options"]
    assert look[0] < buy[0]  # the family's reward prefers buying
    assert look[1] > buy[1]  # keeping the final potential reverses it
    look, buy = zero_mode["look-without-buying"], zero_mode["buy-without-options"]
    assert look[1] < buy[1] and look[1] - look[0] == pytest.approx(buy[1] - buy[0])


def test_invalid_actions_are_those_not_admissible_in_the_previous_state() -> None:
    env = _shaped("TextWorld-CoinCollector-v0", {"level": 3}, 10, coefficient=0.0, invalid_penalty=0.5)
    _, info = env.reset(seed=0, options={"task": 0})
    admissible = info["admissible_actions"]
    _, reward, _, _, after = env.step("dance wildly")
    assert after["invalid_action"] and reward == -0.5
    _, reward, _, _, after = env.step(admissible[0].upper() + "  ")  # case and spaces do not matter
    assert not after["invalid_action"] and reward == after["env_reward"]
    assert is_admissible("search[red socks under 20 dollars]", ["click[next >]", "search[<keywords>]"])
    assert not is_admissible("search[]", ["search[<keywords>]"]) and not is_admissible("click[x]", [])
    env.close()


def test_snapshots_and_forks_carry_the_potential_and_admissible_actions() -> None:
    env = StateSnapshot(_shaped("TextWorld-Cooking-v0", {"difficulty": 3}, 15, coefficient=1.0, invalid_penalty=0.2))
    _, info = env.reset(seed=0, options={"task": 1})
    rng = random.Random(0)
    for action in info["expert_plan"][:2]:
        env.step(action)
    snap = env.snapshot()
    actions = [rng.choice(["look", "inventory", "dance", "open fridge"]) for _ in range(6)]
    first = [env.step(action)[1] for action in actions]
    env.restore(snap)
    fork = env.fork(1)[0]
    assert [env.step(action)[1] for action in actions] == first
    assert [fork.step(action)[1] for action in actions] == first
    env.close()
    fork.close()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"gamma": 0.0}, "gamma must be in"),
        ({"gamma": 1.5}, "gamma must be in"),
        ({"invalid_penalty": -1}, "invalid_penalty must be"),
        ({"coefficient": float("nan")}, "coefficient must be a finite"),
        ({"terminal_potential": "last"}, "terminal_potential must be one of"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidOptionError, match=match):
        ProcessReward(make("TextWorld-CoinCollector-v0", level=3), **kwargs)
