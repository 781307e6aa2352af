"""The background game warm-up of full test runs (tests/warm_games.py) generates what the suite will use."""

from __future__ import annotations

import json

import pytest

from agentgym_budget.tasks.textworld import games
from tests import warm_games


@pytest.mark.slow
def test_warm_up_generates_the_listed_games_once_and_records_them_in_order(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTGYM_BUDGET_CACHE", str(tmp_path))
    listed = [
        {"challenge": "tw-coin_collector", "settings": {"level": 1}, "split": None, "seed": 3},
        {"challenge": "tw-coin_collector", "settings": {"level": 2}, "split": None, "seed": 4},
    ]
    assert warm_games.warm(listed) == 2
    assert warm_games.warm(listed) == 0
    assert warm_games.recorded_games(tmp_path) == listed
    path = games.cached_game(games.coin_collector_recipe(level=2), seed=4, split="test")
    assert path is not None and path.exists()


def test_the_committed_list_names_real_recipes():
    listed = json.loads(warm_games.GAMES_FILE.read_text())
    assert listed and len({json.dumps(game, sort_keys=True) for game in listed}) == len(listed)
    assert {game["challenge"] for game in listed} <= {
        None,
        "tw-coin_collector",
        "tw-cooking",
        "tw-treasure_hunter",
        "tw-simple",
    }
