"""verifiers: its own `openenv` taskset and env code playing an agentgym-budget OpenEnv server.

verifiers' command line runs harnesses through `uv` (a registry download on first use), so the suite
runs verifiers' ``OpenEnvTaskset`` / ``OpenEnvEnv.run`` in process, with agentgym-budget agents as
the player, against a real server on a loopback port.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from agentgym_budget.agents import ExpertAgent, RandomAgent
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.openenv import serve_in_thread
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.verifiers import openenv_taskset, play

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.version_info < (3, 11), reason="verifiers needs Python >= 3.11"),
]

CONFIG = SessionConfig("WebShop-1k-v0", max_turns=10, info_keys=("expert_action",))


@pytest.fixture(scope="module")
def url():
    with serve_in_thread(CONFIG, max_sessions=2) as base_url:
        yield base_url


def test_expert_wins_and_budget_truncates_through_verifiers(url):
    episodes = [{"seed": 0}, {"seed": 0, "max_turns": 2}, {"seed": 1, "show_budget": True}]
    played = asyncio.run(play(url, episodes, ExpertAgent()))
    won, truncated, shown = played
    assert won.rewards == {"openenv_reward": 1.0} and won.stop is None
    final = won.last_observation  # the observation after the winning step, which the player never sees
    assert final["won"] is True and final["terminated"] is True and final["turn"] == won.turns
    assert won.observations[-1]["won"] is False and len(won.observations) == won.turns
    assert set(final) == set(won.observations[-1]) and "[Episode over: task completed" in final["text"]
    assert truncated.last_observation["truncated"] is True and truncated.last_observation["turn"] == 2
    assert all(reply.startswith("Action: ") for reply in won.replies) and won.turns == len(won.replies) >= 3
    assert truncated.rewards == {"openenv_reward": 0.0} and truncated.turns == 2
    assert truncated.replies == won.replies[:2]  # same seed, same task, same expert moves
    assert shown.rewards == {"openenv_reward": 1.0} and shown.last_observation["max_turns"] == 10
    assert won.last_observation["max_turns"] is None  # the budget is hidden from the model unless shown


def test_random_player_is_deterministic(url):
    episodes = [{"seed": 4, "max_turns": 4}]
    first = asyncio.run(play(url, episodes, RandomAgent(), seed=9))
    second = asyncio.run(play(url, episodes, RandomAgent(), seed=9))
    assert first[0].replies == second[0].replies and first[0].turns <= 4


def test_taskset_rows_are_validated():
    taskset = openenv_taskset("http://127.0.0.1:1", [{"seed": 1}, {"task": 3, "max_turns": 5}])
    assert [task.data.reset for task in taskset.load()] == [{"seed": 1}, {"task": 3, "max_turns": 5}]
    with pytest.raises(InvalidOptionError, match="Did you mean 'max_turns'"):
        openenv_taskset("http://127.0.0.1:1", [{"max_turn": 5}])
