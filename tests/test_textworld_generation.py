"""Generated TextWorld games: every task is won by its own expert (issue 9 §2), the compiler stays in the cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_budget
from agentgym_budget.errors import GenerationError
from agentgym_budget.storage.cache import CACHE_ENV_VAR
from agentgym_budget.tasks.textworld import games
from agentgym_budget.tasks.textworld.commands import sanitize_command

GENERATED_IDS = [env_id for env_id in agentgym_budget.registered_ids("textworld") if not env_id.endswith("File-v0")]
FIRST_TASKS = 3
SMALL = {
    "TextWorld-Cooking-v0": {"difficulty": 1},
    "TextWorld-CoinCollector-v0": {"level": 3},
    "TextWorld-TreasureHunter-v0": {"level": 1},
    "TextWorld-Simple-v0": {},
    "TextWorld-Custom-v0": {"world_size": 2, "nb_objects": 4, "quest_length": 2},
}
"""The cheapest settings of each id (Simple has no size to choose)."""


def assert_commands_pass_unchanged(commands):
    """TextWorld's admissible commands and expert plans are never cut or refused by the command screening."""
    for command in commands:
        assert sanitize_command(command) == " ".join(command.lower().split()), command


def play_expert(env, task):
    """Play the env's expert on ``task``; return (won, turns, the game's generation record)."""
    _, info = env.reset(seed=0, options={"task": task})
    path = env.unwrapped._game_path(info["task_id"])
    record = json.loads((Path(path).parent / "generation.json").read_text())
    for turn in range(1, 2 * record["expert_turns"] + 1):
        assert_commands_pass_unchanged(info["admissible_actions"])
        _, _, terminated, _, info = env.step(info["expert_action"])
        if terminated:
            return info["won"], turn, record
    return False, None, record


def test_every_generated_id_is_tested():
    assert {env_id.split("/")[1] for env_id in GENERATED_IDS} == set(SMALL)


@pytest.mark.parametrize("env_id", GENERATED_IDS)
def test_first_tasks_of_every_id_are_won_by_their_expert(env_id):
    env = gym.make(env_id, info_keys={"expert_action"}, **SMALL[env_id.split("/")[1]])
    for task in range(FIRST_TASKS):
        won, turns, record = play_expert(env, task)
        assert won and turns == record["expert_turns"], (env.unwrapped.task_ids[task], record)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", [env_id for env_id in GENERATED_IDS if SMALL[env_id.split("/")[1]]])
def test_first_tasks_with_default_settings_are_won_by_their_expert(env_id):
    env = gym.make(env_id, info_keys={"expert_action"})
    for task in range(FIRST_TASKS):
        won, turns, record = play_expert(env, task)
        assert won and turns == record["expert_turns"], (env.unwrapped.task_ids[task], record)


@pytest.mark.parametrize("split", ["valid", "test"])
def test_first_tasks_of_other_splits_are_won_by_their_expert(split):
    env = gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=1, split=split, info_keys={"expert_action"})
    won, _, _ = play_expert(env, 0)
    assert won


@pytest.mark.slow
def test_an_unwinnable_draw_is_redrawn_deterministically(monkeypatch, tmp_path):
    """Issue 9: TextWorld-Custom task 0 looped on "Which do you mean, the locker or the type 0 locker?"."""
    # game.json records TextWorld's grammar folder, an absolute path of the venv: a cache another venv wrote differs
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "first"))
    env = gym.make("agentgym_budget/TextWorld-Custom-v0", info_keys={"expert_action"})
    won, _, record = play_expert(env, 0)
    assert won and record["textworld_seed"] == games.draw_seed(0, 1)
    assert record["rejected"] == [{"textworld_seed": 0, "reason": "its expert does not win"}]
    assert games.expert_turns(env.unwrapped._game_path("custom-r5-o10-q5-b1-0")) == record["expert_turns"]

    first = env.unwrapped._game_path("custom-r5-o10-q5-b1-0")
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "again"))
    again = games.generate_game(games.custom_recipe(), seed=0, split="train")
    assert str(again) != first
    for name in ("game.json", "generation.json"):
        assert (again.parent / name).read_text() == (Path(first).parent / name).read_text()


def test_a_seed_no_draw_wins_is_a_generation_error(monkeypatch, tmp_path):
    drawn = []
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    monkeypatch.setattr(games, "MAX_DRAWS", 3)
    monkeypatch.setattr(games, "_make", lambda recipe, seed, split, folder: drawn.append(seed))
    monkeypatch.setattr(games, "expert_turns", lambda path: None)
    with pytest.raises(GenerationError, match=r"none of 3 draws \(TextWorld seeds 4\.\.2000004\) is a game its own"):
        games.generate_game(games.coin_collector_recipe(level=1), seed=4, split="train")
    assert drawn == [4, 1_000_004, 2_000_004]
    assert not list((tmp_path / "textworld").glob("*/key.json"))


@pytest.mark.slow
def test_a_seed_textworld_cannot_generate_is_redrawn(monkeypatch, tmp_path):
    """TextWorld asks for another seed with QuestGenerationError (e.g. Treasure Hunter level 20, seed 3, after 80 s)."""
    from textworld.generator.chaining import QuestGenerationError

    make = games._make

    def make_or_refuse(recipe, seed, split, folder):
        if seed == 3:
            raise QuestGenerationError("Current map configuration doesn't permit quest of length: 10.")
        make(recipe, seed, split, folder)

    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    monkeypatch.setattr(games, "_make", make_or_refuse)
    path = games.generate_game(games.coin_collector_recipe(level=1), seed=3, split="train")
    record = json.loads((path.parent / "generation.json").read_text())
    assert record["textworld_seed"] == games.draw_seed(3, 1) and record["expert_turns"] == 1
    assert record["rejected"] == [{"textworld_seed": 3, "reason": "QuestGenerationError: " + "Current map configuration "
                                   "doesn't permit quest of length: 10."}]  # fmt: skip


def test_the_expert_check_fails_a_game_its_expert_cannot_finish(coin_game_path):
    assert games.expert_turns(coin_game_path) == 3
    assert games.expert_turns(coin_game_path, max_turns=2) is None


@pytest.mark.slow
def test_the_inform_compiler_writes_into_the_cache_not_home(monkeypatch, tmp_path):
    """Issue 13: TextWorld generation wrote ``~/Inform`` into the user's home."""
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(CACHE_ENV_VAR, str(cache))
    games.generate_game(games.coin_collector_recipe(level=1), seed=0, split="train")
    assert list(home.iterdir()) == [] and os.environ["HOME"] == str(home)
    assert (cache / "inform7-home" / "Inform").is_dir()
