"""Shared fixtures: a TextWorld game file for the File env, generated once per session."""

from __future__ import annotations

import pytest

from agentgym_budget.tasks.textworld import games


@pytest.fixture(scope="session")
def coin_game_path() -> str:
    """A small generated TextWorld game (.z8 with its .json beside it)."""
    return str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
