"""Gymnasium vector envs over agentgym-budget ids (sync, and async without shared memory)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"


@pytest.mark.parametrize(
    ("mode", "vector_kwargs"),
    [("sync", {}), ("async", {"shared_memory": False})],
)
def test_vector_envs_match_single_envs(mode, vector_kwargs):
    envs = gym.make_vec(COIN, num_envs=2, vectorization_mode=mode, vector_kwargs=vector_kwargs)
    try:
        observations, infos = envs.reset(seed=[0, 1])
        singles = [gym.make(COIN) for _ in range(2)]
        expected = [env.reset(seed=seed) for env, seed in zip(singles, [0, 1], strict=True)]
        assert list(observations) == [obs for obs, _ in expected]
        assert list(infos["task_id"]) == [info["task_id"] for _, info in expected]
        observations, rewards, terminated, truncated, infos = envs.step(("look", "go north"))
        steps = [env.step(a) for env, a in zip(singles, ["look", "go north"], strict=True)]
        assert list(observations) == [step[0] for step in steps]
        assert list(rewards) == [step[1] for step in steps]
        assert list(terminated) == [step[2] for step in steps] and not any(truncated)
        assert list(infos["admissible_actions"]) == [step[4]["admissible_actions"] for step in steps]
    finally:
        envs.close()
