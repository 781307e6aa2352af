"""Damaged files never crash the process: cache entries are verified and rebuilt, user data raises DataError.

Each cache entry carries a SHA-256 manifest of its files; a truncated, junk or bit-flipped file
is detected on load and the entry rebuilt (same content, since builds are deterministic). User
files (TextWorld games, ALFWorld and WebShop data) have no manifest: they are parsed strictly,
and ``.z8`` story files are checked like frotz reads them (header, length, checksum), so a bad
file raises :class:`DataError` naming it instead of ending the process.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import pytest

from agentgym_budget import cache
from agentgym_budget.cache import CacheRepairWarning, cached_directory, check_entry
from agentgym_budget.errors import DataError

CORRUPTIONS = ("truncated", "junk", "bit flip")


def corrupt(path: Path, kind: str) -> None:
    """Damage ``path``: cut it in half, replace it with random bytes, or flip one bit in its middle."""
    data = bytearray(path.read_bytes())
    if kind == "truncated":
        data = data[: len(data) // 2]
    elif kind == "junk":
        data = bytearray(random.Random(0).randbytes(len(data)))
    elif kind == "bit flip":
        data[len(data) // 2] ^= 0x10
    else:
        raise ValueError(kind)
    path.write_bytes(bytes(data))


def new_process(monkeypatch) -> None:
    """Forget what this process verified, as a new process would."""
    monkeypatch.setattr(cache, "_VERIFIED", {})


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


# ---------------------------------------------------------------------- the generic mechanism
def _builder(log: list[str]):
    def build(folder: Path) -> None:
        log.append("built")
        (folder / "data.bin").write_bytes(bytes(range(256)) * 64)
        (folder / "sub").mkdir()
        (folder / "sub" / "notes.txt").write_text("hello")

    return build


DAMAGES = {
    **{kind: (lambda entry, kind=kind: corrupt(entry / "data.bin", kind)) for kind in CORRUPTIONS},
    "file in a sub-folder": lambda entry: corrupt(entry / "sub" / "notes.txt", "bit flip"),
    "file deleted": lambda entry: (entry / "data.bin").unlink(),
    "key.json changed": lambda entry: (entry / "key.json").write_text("{}"),
    "manifest truncated": lambda entry: corrupt(entry / "manifest.sha256", "truncated"),
    "manifest junk": lambda entry: corrupt(entry / "manifest.sha256", "junk"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_entry_is_rebuilt_with_a_warning(tmp_path, monkeypatch, damage):
    log: list[str] = []
    entry = cached_directory("demo", {"n": 1}, _builder(log), root=tmp_path)
    original = {p.relative_to(entry): p.read_bytes() for p in entry.rglob("*") if p.is_file()}
    DAMAGES[damage](entry)
    new_process(monkeypatch)
    assert check_entry(entry) is not None
    with pytest.warns(CacheRepairWarning, match=re.escape(str(entry))):
        again = cached_directory("demo", {"n": 1}, _builder(log), root=tmp_path)
    assert again == entry and log == ["built", "built"]
    assert {p.relative_to(entry): p.read_bytes() for p in entry.rglob("*") if p.is_file()} == original
    assert check_entry(entry) is None


def test_an_entry_without_manifest_is_rebuilt_quietly(tmp_path, monkeypatch):
    """Entries written before manifests existed cannot be verified: they are rebuilt once, without a warning."""
    log: list[str] = []
    entry = cached_directory("demo", {"n": 1}, _builder(log), root=tmp_path)
    (entry / "manifest.sha256").unlink()
    new_process(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cached_directory("demo", {"n": 1}, _builder(log), root=tmp_path)
    assert log == ["built", "built"] and (entry / "manifest.sha256").is_file()


def test_the_manifest_is_sha256sum_format_and_lists_every_file(tmp_path):
    entry = cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path)
    lines = (entry / "manifest.sha256").read_text().splitlines()
    assert sorted(line.split("  ", 1)[1] for line in lines) == ["data.bin", "key.json", "sub/notes.txt"]
    if shutil.which("sha256sum"):
        checked = subprocess.run(["sha256sum", "--check", "--quiet", "manifest.sha256"], cwd=entry)
        assert checked.returncode == 0


def test_files_are_hashed_once_per_process_and_again_when_they_change(tmp_path, monkeypatch):
    hashed: list[str] = []
    real = cache._sha256
    monkeypatch.setattr(cache, "_sha256", lambda path: hashed.append(Path(path).name) or real(path))
    entry = cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path)
    new_process(monkeypatch)
    hashed.clear()
    for _ in range(3):
        assert cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path) == entry
    assert sorted(hashed) == ["data.bin", "key.json", "notes.txt"]  # the first use only
    hashed.clear()
    corrupt(entry / "data.bin", "bit flip")
    stat = os.stat(entry / "data.bin")
    os.utime(entry / "data.bin", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # coarse clocks: make it visible
    with pytest.warns(CacheRepairWarning):
        cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path)
    assert "data.bin" in hashed


def test_a_path_traversal_in_a_manifest_is_refused(tmp_path, monkeypatch):
    entry = cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path)
    manifest = entry / "manifest.sha256"
    manifest.write_text(manifest.read_text() + f"{'0' * 64}  ../../outside\n")
    new_process(monkeypatch)
    assert "unreadable" in check_entry(entry)


# ---------------------------------------------------------------------- killed builds
_SLOW_BUILD = """
    import sys, time
    from pathlib import Path
    from agentgym_budget.cache import cached_directory

    def build(folder):
        (folder / "half.txt").write_text("half")
        Path(sys.argv[2]).write_text("building")
        time.sleep(float(sys.argv[4]))
        (folder / "done.txt").write_text("done")

    print(cached_directory("demo", {"n": int(sys.argv[3])}, build, root=Path(sys.argv[1])))
"""


def _start_builder(root: Path, n: int, seconds: float) -> tuple[subprocess.Popen, Path]:
    ready = root.parent / f"ready-{n}-{time.monotonic_ns()}"
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_SLOW_BUILD), str(root), str(ready), str(n), str(seconds)],
        cwd=str(Path(__file__).parent.parent),
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert process.poll() is None and time.monotonic() < deadline, "the builder did not start"
        time.sleep(0.05)
    return process, ready


def _scratch(root: Path, n: int) -> list[Path]:
    return sorted((root / "demo").glob(cache.cache_key({"n": n}) + ".tmp-*"))


def test_a_killed_build_leaves_scratch_that_the_next_build_of_the_entry_removes(tmp_path):
    root = tmp_path / "cache"
    process, _ = _start_builder(root, 1, 300)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert len(_scratch(root, 1)) == 1  # what a killed build leaves
    entry = cached_directory("demo", {"n": 1}, lambda folder: (folder / "done.txt").write_text("done"), root=root)
    assert (entry / "done.txt").read_text() == "done" and _scratch(root, 1) == []


@pytest.mark.slow
def test_orphans_of_other_entries_are_swept_but_live_builds_are_left_alone(tmp_path):
    root = tmp_path / "cache"
    killed, _ = _start_builder(root, 1, 300)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    live, _ = _start_builder(root, 2, 3)  # still building while we sweep
    log: list[str] = []
    cached_directory("demo", {"n": 3}, _builder(log), root=root)  # a miss in the same namespace sweeps it
    assert _scratch(root, 1) == [], "the killed build's scratch directory was not removed"
    assert len(_scratch(root, 2)) == 1, "a live build's scratch directory was removed"
    out, _ = live.communicate(timeout=120)
    assert live.returncode == 0 and (Path(out.strip()) / "done.txt").read_text() == "done"
    assert _scratch(root, 2) == []


def test_a_build_in_another_thread_is_left_alone(tmp_path):
    root = tmp_path / "cache"
    started, release = threading.Event(), threading.Event()

    def slow(folder: Path) -> None:
        started.set()
        release.wait(60)
        (folder / "done.txt").write_text("done")

    worker = threading.Thread(target=cached_directory, args=("demo", {"n": 1}, slow), kwargs={"root": root})
    worker.start()
    assert started.wait(60)
    cached_directory("demo", {"n": 2}, _builder([]), root=root)  # sweeps the namespace
    assert len(_scratch(root, 1)) == 1
    release.set()
    worker.join(60)
    assert check_entry(root / "demo" / cache.cache_key({"n": 1})) is None and _scratch(root, 1) == []


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
    from agentgym_budget.cache import CacheRepairWarning
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
