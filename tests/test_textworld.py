"""TextWorld family specifics: command sanitising, generation and its cache, file games, expert, progress."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401
from agentgym_budget.errors import DataError, InvalidOptionError, UnknownSplitError, UnknownTaskError
from agentgym_budget.storage.cache import CACHE_ENV_VAR
from agentgym_budget.tasks.textworld import games
from agentgym_budget.tasks.textworld.commands import MAX_COMMAND_LENGTH, sanitize_command
from agentgym_budget.wrappers import TurnBudget

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("Open Fridge", "open fridge"),
        ("  go   north  ", "go north"),
        ("look. restart", "look"),
        ("look then quit", "look"),
        ("take apple; save", "take apple"),
        ("\\x", "x"),
        ("\\help", "help"),
        ("caf\u00e9 au lait", "cafe au lait"),
        ("go\x00north\x1b[0m", "go north [0m"),
        ("", ""),
        ("restart", None),
        ("RESTART please", None),
        ("\\q", None),
        ("oops restart", None),
        ("tw-trace-actions", None),
        ("undo", None),
        ("save game", None),
    ],
)
def test_sanitize_command(action, expected):
    assert sanitize_command(action) == expected


def test_long_commands_are_cut_at_a_word_end():
    command = sanitize_command("take " + "apple " * 100)
    assert len(command) <= MAX_COMMAND_LENGTH and command.endswith("apple")


def test_blocked_commands_cost_a_turn_and_change_nothing():
    env = gym.make(COIN, info_keys={"expert_plan"})
    _, info = env.reset(seed=0, options={"task": 0})
    obs, reward, terminated, truncated, after = env.step("restart")
    assert truncated is False
    assert obs == env.unwrapped.blocked_feedback and reward == 0.0 and not terminated
    assert after["expert_plan"] == info["expert_plan"]
    assert env.step(info["expert_plan"][0])[4]["expert_plan"] == info["expert_plan"][1:]


def test_observations_drop_banner_and_prompt():
    env = gym.make(COIN)
    obs, _ = env.reset(seed=0, options={"task": 0})
    assert "$$" not in obs and not obs.startswith(" ")
    obs, *_ = env.step("look")
    assert not obs.rstrip().endswith(">") and "-=" in obs


def test_a_finished_game_shows_no_interpreter_question_and_counts_turns_as_the_budget_does():
    env = TurnBudget(gym.make(COIN, info_keys={"expert_action", "moves"}), max_turns=20)
    _, info = env.reset(seed=0, options={"task": 0})
    turns = 0
    for action in ("restart", "xyzzy", "go nowhere"):
        obs, _, _, _, info = env.step(action)
        turns += 1
        assert info["moves"] == 0 and info["turn"] == turns
    while not info["won"]:
        obs, _, terminated, _, info = env.step(info["expert_action"])
        turns += 1
        assert info["moves"] <= info["turn"] == turns
    assert terminated and "RESTART" not in obs and "Would you like" not in obs
    assert obs.endswith(f"You scored 1 out of a possible 1, in {turns} turns.") and info["moves"] == turns - 3


def test_a_lost_game_shows_no_interpreter_question():
    env = gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=3, info_keys={"expert_plan"})
    _, info = env.reset(seed=0, options={"task": 0})
    plan = info["expert_plan"]
    take = next(i for i, command in enumerate(plan) if command.startswith("take "))  # the first ingredient
    for action in (*plan[: take + 1], "eat " + plan[take][len("take ") :].split(" from ")[0]):
        obs, _, terminated, _, info = env.step(action)
    assert terminated and info["lost"] and "*** You lost! ***" in obs
    assert "Would you like" not in obs and obs.endswith(f"in {take + 2} turns.")


def test_expert_plan_wins_with_monotone_progress():
    env = gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=3, info_keys={"expert_action", "expert_plan"})
    _, info = env.reset(seed=1)
    progress, total = [info["progress"]], 0.0
    while not (info["won"] or info["lost"]):
        assert info["expert_action"] == info["expert_plan"][0]
        _, reward, terminated, _, info = env.step(info["expert_action"])
        progress.append(info["progress"])
        total += reward
    assert info["won"] and terminated and progress[-1] == 1.0
    assert progress == sorted(progress) and total > 0


def test_unknown_split_task_and_level_are_typed_errors():
    with pytest.raises(UnknownSplitError, match="Did you mean 'valid'"):
        gym.make(COIN, split="vaild")
    with pytest.raises(UnknownTaskError, match="coin-l5-0"):
        gym.make(COIN).reset(options={"task": "coin-l5-O"})
    with pytest.raises(InvalidOptionError, match="level"):
        gym.make(COIN, level=0)
    with pytest.raises(InvalidOptionError, match="100"):
        gym.make(COIN, level=250)


def test_splits_are_disjoint_seed_ranges():
    ids = {split: set(gym.make(COIN, split=split).unwrapped.task_ids) for split in ("train", "valid", "test")}
    assert ids["train"].isdisjoint(ids["valid"]) and ids["valid"].isdisjoint(ids["test"])
    assert [len(ids[s]) for s in ("train", "valid", "test")] == [1000, 200, 200]


@pytest.mark.slow
def test_generation_is_cached_and_never_redone(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    recipe = games.treasure_hunter_recipe(level=2)
    first = games.generate_game(recipe, seed=5, split="train")
    monkeypatch.setattr(games, "_make", lambda *a: pytest.fail("a cached game was regenerated"))
    assert games.generate_game(recipe, seed=5, split="train") == first
    key = json.loads((first.parent / "key.json").read_text())
    assert key["seed"] == 5 and key["settings"] == {"level": 2} and "textworld" in key and "check" in key
    assert sorted(p.name for p in first.parent.iterdir()) == [
        "game.json",
        "game.z8",
        "generation.json",
        "key.json",
        "manifest.sha256",
    ]


@pytest.mark.slow
def test_generation_is_deterministic_across_cache_dirs(monkeypatch, tmp_path):
    recipe = games.cooking_recipe(difficulty=1)
    contents = []
    for name in ("a", "b"):
        monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / name))
        path = games.generate_game(recipe, seed=11, split="valid")
        contents.append(json.loads(path.with_suffix(".json").read_text()))
    assert contents[0] == contents[1]


@pytest.mark.slow
def test_trajectories_do_not_depend_on_the_hash_seed():
    code = (
        "import gymnasium as gym, agentgym_budget, json\n"
        "env = gym.make('agentgym_budget/TextWorld-Cooking-v0', difficulty=1, info_keys={'facts', 'expert_plan'})\n"
        "obs, info = env.reset(seed=3)\n"
        "steps = [env.step(a)[4] for a in info['expert_plan'][:3]]\n"
        "print(json.dumps([info] + steps, sort_keys=True))\n"
    )
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        outputs.append(subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True).stdout)
    assert outputs[0] == outputs[1]


@pytest.mark.slow
@pytest.mark.parametrize("difficulty", sorted(games.COOKING_DIFFICULTIES))
def test_every_cooking_difficulty_generates_a_winnable_game(difficulty):
    env = gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=difficulty, info_keys={"expert_action"})
    _, info = env.reset(seed=0)
    for _ in range(100):
        _, _, terminated, _, info = env.step(info["expert_action"])
        if terminated:
            break
    assert info["won"]


class TestFileEnv:
    def test_plays_a_game_file_and_a_folder(self, coin_game_path, tmp_path):
        env = gym.make("agentgym_budget/TextWorld-File-v0", path=coin_game_path, info_keys={"expert_plan"})
        _, info = env.reset()
        assert info["task_id"] == "game" and info["expert_plan"]
        for name in ("b_game", "a_game"):
            for suffix in (".z8", ".json"):
                (tmp_path / (name + suffix)).write_bytes(Path(coin_game_path).with_suffix(suffix).read_bytes())
        folder = gym.make("agentgym_budget/TextWorld-File-v0", path=tmp_path)
        assert folder.unwrapped.task_ids == ("a_game", "b_game")

    def test_missing_path(self, tmp_path):
        with pytest.raises(DataError, match="does not exist"):
            gym.make("agentgym_budget/TextWorld-File-v0", path=tmp_path / "nope.z8")

    def test_folder_without_games(self, tmp_path):
        (tmp_path / "notes.txt").write_text("no games here")
        with pytest.raises(DataError, match=r"no \.z8 game"):
            gym.make("agentgym_budget/TextWorld-File-v0", path=tmp_path)

    def test_game_without_its_json(self, coin_game_path, tmp_path):
        (tmp_path / "lonely.z8").write_bytes(Path(coin_game_path).read_bytes())
        with pytest.raises(DataError, match=r"lonely\.z8.*\.json"):
            gym.make("agentgym_budget/TextWorld-File-v0", path=tmp_path)
