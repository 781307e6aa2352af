"""One memory bound for the parsed-game caches of TextWorld and ALFWorld."""

from __future__ import annotations

import os

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.storage.game_cache_size import (
    DEFAULT_GAME_CACHE_MB,
    GAME_CACHE_ENV_VAR,
    LEGACY_ALFWORLD_CACHE_ENV_VAR,
    game_cache_bytes,
)
from agentgym_budget.tasks.textworld import engine


def test_the_shared_setting_wins_over_the_legacy_alfworld_one():
    both = {GAME_CACHE_ENV_VAR: "32", LEGACY_ALFWORLD_CACHE_ENV_VAR: "8"}
    assert game_cache_bytes(both) == 32 * 2**20
    assert game_cache_bytes({LEGACY_ALFWORLD_CACHE_ENV_VAR: "8"}) == 8 * 2**20
    assert game_cache_bytes({GAME_CACHE_ENV_VAR: "  "}) == int(DEFAULT_GAME_CACHE_MB * 2**20)
    assert game_cache_bytes({GAME_CACHE_ENV_VAR: "0.5"}) == 2**19


@pytest.mark.parametrize("text", ["a lot", "-1", "nan"])
def test_a_bad_size_is_a_typed_error_naming_the_variable(text):
    with pytest.raises(InvalidOptionError, match=f"{GAME_CACHE_ENV_VAR} must be .* megabytes, got '{text}'"):
        game_cache_bytes({GAME_CACHE_ENV_VAR: text})


def test_alfworld_reads_the_shared_setting(monkeypatch):
    pytest.importorskip("alfworld")
    from agentgym_budget.tasks.alfworld import pddl_env

    monkeypatch.delenv(LEGACY_ALFWORLD_CACHE_ENV_VAR, raising=False)
    monkeypatch.setenv(GAME_CACHE_ENV_VAR, "3")
    assert pddl_env._cache_capacity() == 3 * 2**20


def textworld_game_paths(count: int) -> list[str]:
    env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=1)
    paths = []
    for task in env.unwrapped.task_ids[:count]:
        env.reset(seed=0, options={"task": task})
        paths.append(env.unwrapped._engine.game_path)
    env.close()
    return paths


@pytest.mark.slow
def test_textworld_game_cache_is_bounded_by_estimated_bytes(monkeypatch):
    paths = textworld_game_paths(3)
    weights = [3 * os.path.getsize(path[:-3] + ".json") + engine._GAME_FIXED_BYTES for path in paths]
    engine._GAMES.clear()
    monkeypatch.setattr(engine._GAMES, "capacity", weights[-2] + weights[-1])  # room for the last two only
    games = [engine.load_game(path) for path in paths]
    assert len(engine._GAMES) == 2 and engine._GAMES.weight == weights[-2] + weights[-1]
    assert engine.load_game(paths[-1]) is games[-1]  # a hit: the same parsed game
    assert engine.load_game(paths[0]) is not games[0]  # evicted: parsed again
    assert engine.load_game(paths[0]).metadata == games[0].metadata
    engine._GAMES.clear()
