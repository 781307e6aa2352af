"""The on-disk cache: built once, atomically, under concurrent processes."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from agentgym_budget.storage.cache import CACHE_ENV_VAR, cache_key, cache_root, cached_directory


def _slow_build(log: str):
    def build(folder: Path) -> None:
        with open(log, "a") as handle:
            handle.write("built\n")
        time.sleep(0.5)
        (folder / "payload.txt").write_text("ok")

    return build


def _worker(root: str, log: str) -> str:
    return str(cached_directory("demo", {"n": 1}, _slow_build(log), root=Path(root)))


@pytest.mark.slow
def test_concurrent_processes_build_once(tmp_path):
    log = tmp_path / "builds.log"
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        paths = pool.starmap(_worker, [(str(tmp_path / "cache"), str(log))] * 4)
    assert len(set(paths)) == 1
    assert log.read_text().count("built") == 1
    assert (Path(paths[0]) / "payload.txt").read_text() == "ok"
    leftovers = [p.name for p in (tmp_path / "cache" / "demo").iterdir() if ".tmp-" in p.name]
    assert leftovers == []


def test_a_failed_build_leaves_nothing_behind(tmp_path):
    def broken(folder: Path) -> None:
        (folder / "half.txt").write_text("half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        cached_directory("demo", {"n": 2}, broken, root=tmp_path)
    assert [p.name for p in (tmp_path / "demo").iterdir() if not p.name.endswith(".lock")] == []


def test_key_covers_every_parameter():
    assert cache_key({"a": 1, "b": 2}) == cache_key({"b": 2, "a": 1})
    assert cache_key({"a": 1, "b": 2}) != cache_key({"a": 1, "b": 3})


def test_cache_root_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "here"))
    assert cache_root() == tmp_path / "here" and cache_root().is_dir()
