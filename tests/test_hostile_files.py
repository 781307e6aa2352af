"""Hostile files read by loaders (deep JSON, FIFOs, symlink loops, devices) raise DataError naming the file."""

from __future__ import annotations

import json
import os
import threading

import pytest

from agentgym_budget.agents.prompting import PromptTemplate
from agentgym_budget.chat.format import FORMAT_FILE, ChatFormat
from agentgym_budget.errors import DataError, RunConfigError
from agentgym_budget.runner.store import pin_settings, read_jsonl
from agentgym_budget.storage.safe_json import MAX_DEPTH, read_json_file
from agentgym_budget.tasks.alfworld.data import read_game_data, read_trajectory
from agentgym_budget.tasks.webshop.data import load_webshop_data
from agentgym_budget.tasks.webshop.storage import read_json

DEEP = "[" * 100_000 + "]" * 100_000
MODERATE = '{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1)


@pytest.fixture
def hostile(tmp_path):
    """A folder with a deep file, a moderately deep file, a FIFO, a symlink loop and a huge-looking string."""
    (tmp_path / "deep.json").write_text(DEEP)
    (tmp_path / "moderate.json").write_text(MODERATE)
    (tmp_path / "strings.json").write_text(json.dumps({"s": "[" * 5000}))
    os.mkfifo(tmp_path / "fifo.json")
    os.symlink(tmp_path / "loop_b.json", tmp_path / "loop_a.json")
    os.symlink(tmp_path / "loop_a.json", tmp_path / "loop_b.json")
    return tmp_path


def _never_blocks(call):
    """Run ``call`` in a thread; fail if it has not returned after 20 s (a FIFO open would block forever)."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as err:  # reported to the test below
            outcome["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive(), "the loader blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("deep.json", "levels deep"),
        ("moderate.json", f"{MAX_DEPTH + 1} levels deep"),
        ("fifo.json", "not a regular file"),
        ("loop_a.json", "symlink loop"),
        ("missing.json", "No such file"),
    ],
)
def test_the_shared_reader_refuses_hostile_files(hostile, name, message):
    with pytest.raises(DataError, match=message):
        _never_blocks(lambda: read_json_file(hostile / name, what="test data"))


def test_brackets_inside_strings_do_not_count_and_devices_are_refused(hostile):
    assert read_json_file(hostile / "strings.json", what="test data") == {"s": "[" * 5000}
    with pytest.raises(DataError, match="not a regular file"):
        read_json_file("/dev/zero", what="test data")
    with pytest.raises(DataError, match="holds 15 bytes; at most 10"):
        (hostile / "big.json").write_text('"0123456789012"')
        read_json_file(hostile / "big.json", what="test data", max_bytes=10)


@pytest.mark.parametrize("name", ["deep.json", "fifo.json", "loop_a.json"])
def test_every_loader_raises_data_error(hostile, name):
    path = hostile / name
    loaders = [
        lambda: read_json(path, list),  # a WebShop cache entry
        lambda: read_game_data(path),  # ALFWorld's game.tw-pddl
        lambda: read_trajectory(path),  # ALFWorld's traj_data.json
        lambda: PromptTemplate.from_file(path),
    ]
    for loader in loaders:
        with pytest.raises(DataError, match=name.replace(".", r"\.")):
            _never_blocks(loader)


def test_webshop_data_dir_with_a_deep_or_fifo_catalogue(tmp_path):
    for kind in ("deep", "fifo"):
        folder = tmp_path / kind
        folder.mkdir()
        if kind == "deep":
            (folder / "items_shuffle.json").write_text(DEEP)
        else:
            os.mkfifo(folder / "items_shuffle.json")
        for name in ("items_ins_v2.json", "items_human_ins.json"):
            (folder / name).write_text("{}")
        with pytest.raises(DataError, match="items_shuffle"):
            _never_blocks(lambda folder=folder: load_webshop_data(folder))


def test_chat_format_file_deep(tmp_path):
    (tmp_path / FORMAT_FILE).write_text(DEEP)
    with pytest.raises(DataError, match="levels deep"):
        ChatFormat.load(tmp_path)


@pytest.mark.parametrize(
    ("env_id", "argument"),
    [
        ("agentgym_budget/WebShop-Data-v0", "data_dir"),
        ("agentgym_budget/ALFWorld-v0", "data_dir"),
        ("agentgym_budget/TextWorld-File-v0", "path"),
    ],
)
def test_a_symlink_loop_as_data_dir_or_game_path_is_a_data_error(hostile, env_id, argument):
    import gymnasium as gym

    import agentgym_budget  # noqa: F401  (registers the ids)

    with pytest.raises(DataError, match="symlink loop"):
        env = gym.make(env_id, **{argument: str(hostile / "loop_a.json")})
        env.reset(seed=0)


@pytest.mark.parametrize(("name", "message"), [("deep.json", "levels deep"), ("fifo.json", "not a regular file")])
def test_a_hostile_run_json_or_episode_log_is_a_typed_error(hostile, name, message):
    """``run.json`` of an evaluation run (passkt, probe, recovery) and its ``episodes.jsonl``."""
    with pytest.raises(RunConfigError, match=f"{name.replace('.', '[.]')} .*{message}.*another --out"):
        _never_blocks(lambda: pin_settings(hostile / name, {"seed": 0}, ["seed"], keep="the seed"))
    if name == "fifo.json":
        with pytest.raises(DataError, match="not a regular file"):
            _never_blocks(lambda: read_jsonl(hostile / name))


def test_a_run_json_holding_a_list_is_a_typed_error(tmp_path):
    (tmp_path / "run.json").write_text("[1]")
    with pytest.raises(RunConfigError, match="holds a JSON list; expected a JSON object"):
        pin_settings(tmp_path / "run.json", {"seed": 0}, ["seed"], keep="the seed")
