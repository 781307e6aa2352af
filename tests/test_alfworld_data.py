"""The official-data loader, on a small ``json_2.1.1`` tree in ALFWorld's on-disk format built from generated games."""

from __future__ import annotations

import atexit
import functools
import json
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import pytest
import textworld

pytest.importorskip("alfworld")

from agentgym_budget.errors import DataError
from agentgym_budget.tasks.alfworld.data import DATA_ENV_VAR, find_games
from agentgym_budget.tasks.alfworld.engine import AlfworldEngine
from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
from agentgym_budget.testing import EnvConformance
from tests.alfworld_support import choose, game_paths, stock_env

OLD_TEMPLATE = ('template :: \\"move {o} to {r}\\"', 'template :: \\"put {o} in/on {r}\\"')


def _trial(root: Path, split: str, folder: str, trial: str, game: Path, *, edit=None) -> Path:
    target = root / "json_2.1.1" / split / folder / trial
    target.mkdir(parents=True)
    text = game.read_text()
    (target / "game.tw-pddl").write_text(edit(text) if edit else text)
    shutil.copy(game.with_name("traj_data.json"), target / "traj_data.json")
    return target


@functools.cache
def data_dir() -> Path:
    """A ``json_2.1.1`` tree: every task type in train, two in valid_seen, plus trials ALFWorld skips."""
    root = Path(tempfile.mkdtemp(prefix="alfworld-data-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    games = {task_type: Path(path) for task_type, path in game_paths().items()}
    for index, (task_type, game) in enumerate(sorted(games.items())):
        params = json.loads(game.with_name("traj_data.json").read_text())["pddl_params"]
        folder = f"{task_type}-{params['object_target']}-None-{params['parent_target'] or 'None'}-{index}"
        _trial(root, "train", folder, "trial_T20190101_000000_000001", game)
    heat = games["pick_heat_then_place_in_recep"]
    # an older ALFWorld grammar ("put ... in/on ..."), as in the json_2.1.1 release
    _trial(
        root,
        "valid_seen",
        "pick_heat_then_place_in_recep-Old-None-Grammar-1",
        "trial_T1",
        heat,
        edit=lambda text: text.replace(*OLD_TEMPLATE),
    )
    _trial(root, "valid_seen", "pick_two_obj_and_place-A-None-B-2", "trial_T2", games["pick_two_obj_and_place"])
    # folder name without a task type: the type comes from traj_data.json
    _trial(root, "valid_seen", "renamed-trial", "trial_T3", games["look_at_obj_in_light"])
    # skipped like ALFWorld: movable receptacles, sliced objects, unsolvable games, missing game files
    _trial(root, "train", "pick_and_place_with_movable_recep-X-Bowl-Y-9", "trial_T9", heat)
    _trial(root, "train", "pick_heat_then_place_in_recep-AppleSliced-None-Y-9", "trial_T9", heat)
    _trial(
        root,
        "train",
        "pick_heat_then_place_in_recep-Z-None-Y-9",
        "trial_T9",
        heat,
        edit=lambda text: text.replace('"solvable": true', '"solvable": false'),
    )
    (_trial(root, "train", "pick_heat_then_place_in_recep-W-None-Y-9", "trial_T9", heat) / "game.tw-pddl").unlink()
    (root / "json_2.1.1" / "valid_unseen").mkdir()
    return root


def test_finds_playable_games_like_alfworld():
    train = find_games(data_dir(), "train", None)
    assert len(train) == 6 and [g.task_id for g in train] == sorted(g.task_id for g in train)
    assert {g.task_type for g in train} == set(game_paths())
    seen = find_games(data_dir() / "json_2.1.1", "valid_seen", None)
    assert sorted(g.task_type for g in seen) == [
        "look_at_obj_in_light",
        "pick_heat_then_place_in_recep",
        "pick_two_obj_and_place",
    ]
    assert [g.task_id for g in find_games(data_dir(), "valid_seen", {"pick_two_obj_and_place"})] == [
        "pick_two_obj_and_place-A-None-B-2/trial_T2"
    ]


@pytest.mark.slow
def test_env_plays_official_games_per_task_type():
    env = gym.make("agentgym_budget/ALFWorld-HeatAndPlace-v0", data_dir=str(data_dir()), info_keys={"expert_plan"})
    try:
        assert len(env.unwrapped.task_ids) == 1 and env.unwrapped.task_ids[0].startswith("pick_heat")
        _, info = env.reset(seed=0)
        for command in info["expert_plan"]:
            _, reward, terminated, _, info = env.step(command)
        assert terminated and reward == 1.0 and info["won"]
    finally:
        env.close()


@pytest.mark.slow
def test_older_grammar_plays_like_the_stock_engine():
    env = ALFWorldEnv(
        "pick_heat_then_place_in_recep", split="valid_seen", data_dir=data_dir(), info_keys={"expert_plan"}
    )
    try:
        path = env._game_path(env.task_ids[0])
        _, info = env.reset(seed=0)
        assert any(command.startswith("put ") for command in info["expert_plan"])
    finally:
        env.close()
    infos = textworld.EnvInfos(admissible_commands=True, won=True, moves=True, extras=["gamefile"])
    stock, ours = stock_env(path, infos), AlfworldEngine()
    try:
        ours.load(path)
        expected, got = stock.reset(), ours.reset(0)
        rng = random.Random(0)
        for command in [*ours.plan(), *(None for _ in range(5))]:
            assert (expected.feedback, expected["admissible_commands"]) == (got.feedback, got["admissible_commands"])
            command = command or choose(expected, rng)
            expected, got = stock.step(command)[0], ours.step(command)
            assert expected["won"] == got["won"]
    finally:
        ours.close()


def test_environment_variable(monkeypatch):
    monkeypatch.setenv(DATA_ENV_VAR, str(data_dir()))
    env = ALFWorldEnv(split="valid_seen", num_games=2)
    assert env.task_ids == (
        "pick_heat_then_place_in_recep-Old-None-Grammar-1/trial_T1",
        "pick_two_obj_and_place-A-None-B-2/trial_T2",
    )
    assert env.env_key != ALFWorldEnv(split="valid_seen", data_dir=data_dir(), num_games=1).env_key


def test_missing_or_empty_data_is_an_error(tmp_path):
    with pytest.raises(DataError, match=str(tmp_path / "nowhere")):
        ALFWorldEnv(data_dir=tmp_path / "nowhere")
    with pytest.raises(DataError, match="no split folder 'train'") as err:
        ALFWorldEnv(data_dir=tmp_path)
    assert str(tmp_path) in str(err.value) and "json_2.1.1" in str(err.value)
    with pytest.raises(DataError, match="no playable game") as err:
        ALFWorldEnv(split="valid_unseen", data_dir=data_dir())
    assert str(data_dir() / "json_2.1.1" / "valid_unseen") in str(err.value)
    with pytest.raises(DataError, match="pick_cool_then_place_in_recep"):
        ALFWorldEnv("pick_cool_then_place_in_recep", split="valid_seen", data_dir=data_dir())


class TestOfficialDataConformance(EnvConformance):
    """The conformance suite on the official-data loader (valid_seen: three games, one with an older grammar)."""

    pytestmark = pytest.mark.slow
    env_id: ClassVar[str] = "agentgym_budget/ALFWorld-v0"
    keeping_action: ClassVar[str] = "help"  # ALFWorld's inventory marks the agent checked

    def make_env(self, **kwargs: Any) -> gym.Env:
        return gym.make(self.env_id, split="valid_seen", data_dir=str(data_dir()), **kwargs)
