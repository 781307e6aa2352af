"""Damaged files of every task family never crash the process: cache entries are rebuilt, user data raises DataError.

Cached TextWorld games, ALFWorld games and WebShop entries fail their SHA-256 manifest when a file
is truncated, junk or bit-flipped, and are regenerated with a warning (the mechanism itself is in
``tests/test_cache_integrity.py``). User files (TextWorld games, ALFWorld and WebShop data) have no
manifest: they are parsed strictly, and ``.z8`` story files are checked like frotz reads them
(header, length, checksum), so a bad file raises :class:`DataError` naming it instead of ending the
process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentgym_budget.errors import DataError
from agentgym_budget.storage import cache
from agentgym_budget.storage.cache import CacheRepairWarning, check_entry
from tests.cache_support import CORRUPTIONS, corrupt, new_process


def _run(
    script: str, *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=str(Path(__file__).parent.parent),
    )


# ---------------------------------------------------------------------- entries of every family
def _copy_entry(source: Path, root: Path, namespace: str) -> Path:
    entry = root / namespace / source.name
    shutil.copytree(source, entry)
    return entry


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kind"), [("game.z8", "truncated"), ("game.z8", "bit flip"), ("game.json", "junk")])
def test_damaged_textworld_games_in_the_cache_are_regenerated(tmp_path, monkeypatch, coin_game_path, name, kind):
    from agentgym_budget.tasks.textworld.env import CoinCollectorEnv

    entry = _copy_entry(Path(coin_game_path).parent, tmp_path, "textworld")
    monkeypatch.setenv(cache.CACHE_ENV_VAR, str(tmp_path))
    env = CoinCollectorEnv(level=3)
    expected = env.reset(seed=0, options={"task": "coin-l3-0"})[0]
    env.close()
    corrupt(entry / name, kind)
    new_process(monkeypatch)
    env = CoinCollectorEnv(level=3)
    try:
        with pytest.warns(CacheRepairWarning, match=re.escape(f"{name} differs")):
            assert env.reset(seed=0, options={"task": "coin-l3-0"})[0] == expected
    finally:
        env.close()
    assert check_entry(entry) is None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "kind"), [("game.tw-pddl", "truncated"), ("game.tw-pddl", "bit flip"), ("traj_data.json", "junk")]
)
def test_damaged_alfworld_games_in_the_cache_are_regenerated(tmp_path, monkeypatch, name, kind):
    pytest.importorskip("alfworld")
    from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
    from tests.alfworld_support import game_paths

    source = Path(game_paths()["pick_and_place_simple"])
    entry = _copy_entry(source.parent, tmp_path, "alfworld")
    corrupt(entry / name, kind)
    monkeypatch.setenv(cache.CACHE_ENV_VAR, str(tmp_path))
    new_process(monkeypatch)
    env = ALFWorldEnv("pick_and_place_simple", num_games=1, info_keys={"expert_plan"})
    try:
        with pytest.warns(CacheRepairWarning, match=re.escape(f"{name} differs")):
            _, info = env.reset(seed=0)
        for command in info["expert_plan"]:
            _, reward, terminated, _, info = env.step(command)
        assert terminated and reward == 1.0
    finally:
        env.close()
    assert (entry / name).read_bytes() == (source.parent / name).read_bytes()


_WEBSHOP = """
    import json, warnings
    from agentgym_budget.storage.cache import CacheRepairWarning
    from agentgym_budget.tasks.webshop.data import example_data_dir
    from agentgym_budget.tasks.webshop.env import WebShopDataEnv, WebShopEnv

    out = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, make in [("generated", lambda: WebShopEnv(num_products=200)),
                           ("data", lambda: WebShopDataEnv(example_data_dir(60)))]:
            env = make()
            obs, info = env.reset(seed=0)
            out[name] = [obs, env.step("search[shirt]")[0]]
            env.close()
    out["repaired"] = sorted(str(w.message).split()[3] for w in caught if issubclass(w.category, CacheRepairWarning))
    print(json.dumps(out))
"""


@pytest.mark.slow
def test_damaged_webshop_entries_are_rebuilt_whatever_their_format(tmp_path):
    pytest.importorskip("bm25s")
    env = {cache.CACHE_ENV_VAR: str(tmp_path)}
    first = _run(_WEBSHOP, env=env)
    assert first.returncode == 0, first.stderr
    before = json.loads(first.stdout.splitlines()[-1])
    entries = sorted(p for p in tmp_path.glob("webshop-*/*") if p.is_dir())
    assert {p.parent.name for p in entries} >= {"webshop-index", "webshop-example-data"}
    for index, entry in enumerate(entries):  # damage the largest file of every entry, a different way each
        largest = max((p for p in entry.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
        corrupt(largest, CORRUPTIONS[index % len(CORRUPTIONS)])
    second = _run(_WEBSHOP, env=env)
    assert second.returncode == 0, second.stderr
    after = json.loads(second.stdout.splitlines()[-1])
    assert after["generated"] == before["generated"] and after["data"] == before["data"]
    repaired = [Path(p) for p in after["repaired"]]
    assert set(repaired) <= set(entries) and all(check_entry(entry) is None for entry in repaired)
    # the catalog and example data are rebuilt in place; an index is rebuilt or, when its key (the data
    # files' modification times) changed with the rebuilt data, built anew
    assert {p for p in entries if p.parent.name != "webshop-index"} <= set(repaired)
    assert any(p.parent.name == "webshop-index" for p in repaired)


# ---------------------------------------------------------------------- user data
_PLAY_FILES = """
    import json, sys
    from agentgym_budget.errors import DataError
    from agentgym_budget.tasks.textworld.env import FileEnv

    results = {}
    for path in sys.argv[1:]:
        try:
            env = FileEnv(path)
            env.reset(seed=0)
            env.step("look")
            results[path] = "played"
        except DataError as err:
            results[path] = "DataError: " + str(err)
        except Exception as err:
            results[path] = f"{type(err).__name__}: {err}"
    print(json.dumps(results))
"""


def _user_game(folder: Path, source: Path) -> Path:
    folder.mkdir(parents=True)
    shutil.copy(source, folder / "game.z8")
    shutil.copy(source.with_suffix(".json"), folder / "game.json")
    return folder / "game.z8"


@pytest.mark.slow
def test_damaged_user_textworld_games_raise_data_error_naming_the_file(tmp_path, coin_game_path):
    """Run in a subprocess: before the story file check, frotz called exit() and ended the whole process."""
    source = Path(coin_game_path)
    cases = {}
    for kind in CORRUPTIONS:
        cases[f"z8 {kind}"] = path = _user_game(tmp_path / f"z8-{kind}".replace(" ", "-"), source)
        corrupt(path, kind)
    header = _user_game(tmp_path / "z8-header", source)
    data = bytearray(header.read_bytes())
    data[0x1D] ^= 0x01  # the header's checksum
    header.write_bytes(bytes(data))
    cases["z8 header"] = header
    for kind in ("truncated", "junk"):
        cases[f"json {kind}"] = path = _user_game(tmp_path / f"json-{kind}", source)
        corrupt(path.with_suffix(".json"), kind)
    intact = cases["intact"] = _user_game(tmp_path / "intact", source)
    run = _run(_PLAY_FILES, *(str(path) for path in cases.values()))
    assert run.returncode == 0, f"the process ended: {run.returncode} {run.stdout[-300:]} {run.stderr[-300:]}"
    results = json.loads(run.stdout.splitlines()[-1])
    assert results.pop(str(intact)) == "played"
    for case, path in cases.items():
        if path == intact:
            continue
        named = str(path) if case.startswith("z8") else str(path.with_suffix(".json"))
        assert results[str(path)].startswith("DataError: ") and named in results[str(path)], (case, results[str(path)])


def _alfworld_data_dir(root: Path) -> Path:
    from tests.alfworld_support import game_paths

    source = Path(game_paths()["pick_and_place_simple"])
    trial = root / "json_2.1.1" / "train" / "pick_and_place_simple-Apple-None-Fridge-1" / "trial_T1"
    trial.mkdir(parents=True)
    shutil.copy(source, trial / "game.tw-pddl")
    shutil.copy(source.with_name("traj_data.json"), trial / "traj_data.json")
    return trial


def _flip_first(path: Path, char: str) -> None:
    """Flip the lowest bit of the first ``char`` (e.g. ``:`` becomes ``;``): a bit flip that breaks the syntax."""
    data = bytearray(path.read_bytes())
    data[data.index(char.encode())] ^= 0x01
    path.write_bytes(bytes(data))


ALFWORLD_DAMAGES = {
    "game truncated": ("game.tw-pddl", lambda path: corrupt(path, "truncated")),
    "game junk": ("game.tw-pddl", lambda path: corrupt(path, "junk")),
    "game bit flip": ("game.tw-pddl", lambda path: _flip_first(path, ":")),
    "game without grammar": (
        "game.tw-pddl",
        lambda path: path.write_text(json.dumps({**json.loads(path.read_text()), "grammar": None})),
    ),
    "grammar that does not parse": (
        "game.tw-pddl",
        lambda path: path.write_text(path.read_text().replace("action GotoLocation {", "action GotoLocation {{", 1)),
    ),
    "PDDL the planner refuses": (
        "game.tw-pddl",
        lambda path: path.write_text(path.read_text().replace("(:goal", "(:goal (nosuchpredicate)", 1)),
    ),
    "PDDL with an undeclared object": (
        "game.tw-pddl",
        lambda path: path.write_text(path.read_text().replace("(:init", "(:init (atLocation nosuchobject x)", 1)),
    ),
    "trajectory truncated": ("traj_data.json", lambda path: corrupt(path, "truncated")),
    "trajectory bit flip": ("traj_data.json", lambda path: _flip_first(path, "{")),
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(ALFWORLD_DAMAGES))
def test_damaged_alfworld_data_raises_data_error_naming_the_file(tmp_path, damage):
    pytest.importorskip("alfworld")
    from agentgym_budget.tasks.alfworld.env import ALFWorldEnv

    trial = _alfworld_data_dir(tmp_path)
    name, apply = ALFWORLD_DAMAGES[damage]
    apply(trial / name)
    with pytest.raises(DataError) as err:
        env = ALFWorldEnv(data_dir=tmp_path)  # finding games reads the solvable flag
        try:
            env.reset(seed=0)  # reading the game parses it
        finally:
            env.close()
    assert str(trial / name) in str(err.value)


@pytest.mark.parametrize("kind", ["truncated", "junk"])
def test_damaged_webshop_data_raises_data_error_naming_the_file(tmp_path, kind):
    pytest.importorskip("bm25s")
    from agentgym_budget.tasks.webshop.data import example_data_dir
    from agentgym_budget.tasks.webshop.env import WebShopDataEnv

    folder = tmp_path / "data"
    shutil.copytree(example_data_dir(60), folder)
    corrupt(folder / "items_shuffle.json", kind)
    with pytest.raises(DataError, match=re.escape(str(folder / "items_shuffle.json"))):
        WebShopDataEnv(folder).reset(seed=0)
