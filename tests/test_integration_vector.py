"""Gymnasium vector envs: shared-memory async envs return real text, autoreset after truncation, per-env options."""

from __future__ import annotations

import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import agentgym_budget  # noqa: F401
from agentgym_budget.core.text import CHARSET, observation_space
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.vector import reset_each
from agentgym_budget.wrappers import TurnBudget

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"
ACTIONS = [("look", "go north"), ("inventory", "look"), ("take coin", "go south")]


def _run(envs, seeds):
    observations, infos = envs.reset(seed=seeds)
    trace = [(tuple(observations), tuple(infos["task_id"]))]
    for actions in ACTIONS:
        observations, rewards, terminated, truncated, infos = envs.step(actions)
        trace.append((tuple(observations), tuple(rewards), tuple(terminated), tuple(truncated), tuple(infos["turn"])))
    return trace


@pytest.mark.slow
@pytest.mark.parametrize("context", ["fork", "forkserver", "spawn"])
def test_async_shared_memory_matches_sync(context):
    wrappers = [lambda env: TurnBudget(env, max_turns=2)]
    sync = gym.make_vec(COIN, num_envs=2, vectorization_mode="sync", wrappers=wrappers)
    shared = gym.make_vec(
        COIN,
        num_envs=2,
        vectorization_mode="async",
        wrappers=wrappers,
        vector_kwargs={"shared_memory": True, "context": context},
    )
    try:
        expected = _run(sync, [3, 4])
        got = _run(shared, [3, 4])
        assert got == expected
        assert all(isinstance(text, str) and len(text) > 20 for text in got[1][0])
    finally:
        sync.close()
        shared.close()


@pytest.mark.slow
def test_charset_order_does_not_depend_on_the_hash_seed():
    script = (
        "from agentgym_budget.core.text import observation_space; print(''.join(observation_space().character_list))"
    )
    orders = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        orders.add(subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True).stdout)
    assert orders == {"".join(sorted(CHARSET)) + "\n"}
    assert observation_space() == gym.spaces.Text(16_384, min_length=0, charset=CHARSET)


def test_autoreset_after_truncation_ignores_the_action_and_restarts_the_budget():
    envs = gym.make_vec(
        COIN, num_envs=2, vectorization_mode="sync", wrappers=[lambda env: TurnBudget(env, max_turns=1)]
    )
    try:
        envs.reset(seed=[0, 1], options={"max_turns": 2})  # applies to these first episodes only
        _, _, _, truncated, infos = envs.step(("look", "look"))
        assert not truncated.any() and infos["turns_left"].tolist() == [1, 1]
        _, _, _, truncated, infos = envs.step(("look", "look"))
        assert truncated.tolist() == [True, True]
        _, rewards, terminated, truncated, infos = envs.step(("take coin", "take coin"))
        assert rewards.tolist() == [0.0, 0.0] and not terminated.any() and not truncated.any()
        assert infos["turn"].tolist() == [0, 0] and infos["max_turns"].tolist() == [1, 1]  # the wrapper's default
        _, _, _, truncated, _ = envs.step(("look", "look"))
        assert truncated.tolist() == [True, True]
    finally:
        envs.close()


def test_reset_each_gives_every_sub_env_its_own_options():
    envs = gym.make_vec(
        COIN, num_envs=3, vectorization_mode="async", wrappers=[lambda env: TurnBudget(env, max_turns=9)]
    )
    try:
        task_ids = envs.call("get_wrapper_attr", "task_ids")[0]
        observations, infos = reset_each(envs, [{"task": 2, "max_turns": 4}, None, {"task": 0}], seeds=[7, 8, 9])
        assert infos["max_turns"].tolist() == [4, 9, 9]
        assert infos["task_id"][0] == task_ids[2] and infos["task_id"][2] == task_ids[0]
        alone = TurnBudget(gym.make(COIN), max_turns=9)
        assert observations[1] == alone.reset(seed=8)[0]
        with pytest.raises(InvalidOptionError, match="one options mapping"):
            reset_each(envs, [None, None])
        with pytest.raises(InvalidOptionError, match="reset_mask"):
            reset_each(envs, [{"reset_mask": np.ones(3, dtype=bool)}, None, None])
    finally:
        envs.close()
