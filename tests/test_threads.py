"""Envs of every family made, reset and stepped from 8 threads at once, on a cold and a warm cache.

Each thread plays its own env (some threads share a task); every episode must equal the same
episode played alone, on a cache of its own (so game generation under threads is checked too).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.storage.cache import CACHE_ENV_VAR
from agentgym_budget.storage.memory_cache import MemoryCache

THREADS = 8
STEPS = 6

FAMILIES: Mapping[str, tuple[tuple[str, dict[str, Any]], ...]] = {
    "textworld": (
        ("agentgym_budget/TextWorld-CoinCollector-v0", {"level": 2}),
        ("agentgym_budget/TextWorld-Cooking-v0", {"difficulty": 1}),
    ),
    "alfworld": (
        ("agentgym_budget/ALFWorld-PickAndPlace-v0", {"num_games": 2, "shuffle_names": True}),
        ("agentgym_budget/ALFWorld-PickAndPlace-v0", {"num_games": 2, "expert": "handcoded"}),
    ),
    "webshop": (
        ("agentgym_budget/WebShop-1k-v0", {"split": "test"}),
        ("agentgym_budget/WebShop-1k-v0", {"split": "test", "observation_format": "webshop"}),
    ),
    "babyai": (
        ("agentgym_budget/BabyAI-PickupLoc-v0", {}),  # its generation rejects layouts often
        ("agentgym_budget/BabyAI-MixedTrainLocal-v0", {}),
    ),
}
TASKS_PER_CONFIG = 2


def play(family: str, job: int, barrier: threading.Barrier | None = None) -> list[Any]:
    """One episode: thread ``job`` plays config ``job % 2`` on task ``job // 2 % 2`` (the expert's actions)."""
    configs = FAMILIES[family]
    env_id, kwargs = configs[job % len(configs)]
    task = job // len(configs) % TASKS_PER_CONFIG
    if barrier is not None:
        barrier.wait(timeout=60)
    env = gym.make(env_id, info_keys={"expert_action"}, **kwargs)
    try:
        record: list[Any] = [env.reset(seed=job, options={"task": task})]
        info = record[0][1]
        for step in range(STEPS):
            action = "look, xyzzy" if step == 1 else info["expert_action"] or "look"
            observation, reward, terminated, truncated, info = env.step(action)
            record.append((observation, reward, terminated, truncated, info))
            if terminated:
                break
        return record
    finally:
        env.close()


def play_in_threads(family: str) -> list[list[Any]]:
    barrier = threading.Barrier(THREADS)
    with ThreadPoolExecutor(THREADS) as pool:
        futures = [pool.submit(play, family, job, barrier) for job in range(THREADS)]
        return [future.result(timeout=600) for future in futures]


def clear_process_caches(family: str) -> None:
    """Forget what this process keeps in memory about games (parsed games, grammar parses)."""
    if family == "textworld":
        from agentgym_budget.tasks.textworld import engine

        engine._GAMES.clear()
    elif family == "alfworld":
        from agentgym_budget.tasks.alfworld import grammar, parsed_game, pddl_env

        pddl_env.GAME_CACHE.clear()
        for cached in (parsed_game._symbols, grammar._parse_symbols, grammar._parse_query):
            cached.cache_clear()


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_eight_threads_on_cold_and_warm_caches_match_one_thread(family, tmp_path, monkeypatch):
    if family == "alfworld":
        pytest.importorskip("alfworld")
    clear_process_caches(family)
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "threads"))
    cold = play_in_threads(family)
    clear_process_caches(family)
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "alone"))
    alone = [play(family, job) for job in range(THREADS)]
    assert any(len(episode) > 2 for episode in alone), "no episode went past its first steps"
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "threads"))
    warm = play_in_threads(family)
    for job in range(THREADS):
        assert cold[job] == alone[job], f"thread {job} on a cold cache differs from the same episode alone"
        assert warm[job] == alone[job], f"thread {job} on a warm cache differs from the same episode alone"
    assert sorted(Path(tmp_path / "threads").rglob("*.tmp-*")) == []


def test_seeded_global_random_gives_each_thread_its_own_stream():
    pytest.importorskip("alfworld")
    from agentgym_budget.tasks.alfworld.engine import seeded_global_random

    def draws(seed: int) -> list[float]:
        with seeded_global_random(seed):
            values = []
            for _ in range(200):
                values.append(random.random())
                time.sleep(0)  # let the other threads run in between
            return values

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(draws, range(THREADS)))
    for seed, values in enumerate(results):
        expected = random.Random(seed)
        assert values == [expected.random() for _ in range(200)]


@pytest.mark.slow
def test_translating_a_pddl_problem_leaves_other_threads_output_alone():
    pytest.importorskip("alfworld")
    import contextlib
    import io
    import json

    from agentgym_budget.tasks.alfworld import planner
    from tests.alfworld_support import game_paths

    game = json.loads(Path(game_paths()["pick_heat_then_place_in_recep"]).read_text())
    done = threading.Event()

    def translate() -> None:
        try:
            planner.translate(game["pddl_domain"], game["pddl_problem"])
        finally:
            done.set()

    output = io.StringIO()
    with contextlib.redirect_stdout(output), ThreadPoolExecutor(1) as pool:
        future = pool.submit(translate)
        lines = 0
        while not done.is_set() or lines < 20:
            print("main thread", lines)
            lines += 1
            time.sleep(0.001)
        future.result()
    assert output.getvalue().splitlines() == [f"main thread {i}" for i in range(lines)]


@pytest.mark.slow
def test_textworld_parsers_are_per_thread():
    """TextWorld's four TatSu parsers (logic, text grammar, PDDL document, ALFWorld grammar) from 8 threads."""
    from textworld.envs.pddl import logic as pddl_logic
    from textworld.envs.pddl import textgen as pddl_textgen
    from textworld.logic import Proposition
    from textworld.textgen import TextGrammar

    from agentgym_budget.tasks.textworld.parsers import make_parsers_thread_safe

    make_parsers_thread_safe()
    parsers = (
        lambda i: str(Proposition.parse(f"in(o{i}: o, c{i}: c)")),
        lambda i: sorted(TextGrammar.parse(f"start: hello {i};world\nother: x{i}").rules),
        lambda i: [str(symbol) for symbol in pddl_textgen._parse_and_convert(f"go #to{i}# {i}", rule_name="symbols")],
        lambda i: sorted(
            pddl_logic.GameLogic("", 'grammar :: """{"a' + str(i) + '": [{"rhs": "b #c#"}]}""";').grammar._rules
        ),
    )
    barrier = threading.Barrier(THREADS)

    def parse_all(offset: int) -> list[Any]:
        barrier.wait(timeout=30)
        return [parsers[(offset + i) % len(parsers)](i % 7) for i in range(120)]

    expected = {offset: [parsers[(offset + i) % len(parsers)](i % 7) for i in range(120)] for offset in range(THREADS)}
    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(parse_all, range(THREADS)))
    for offset, parsed in enumerate(results):
        assert parsed == expected[offset]


def test_cache_entries_are_built_once_when_threads_of_one_process_race(tmp_path):
    """The file lock of ``cached_directory`` also excludes threads of the same process."""
    from agentgym_budget.storage.cache import cached_directory

    builds: list[int] = []
    barrier = threading.Barrier(THREADS)

    def build(folder: Path) -> None:
        builds.append(1)
        time.sleep(0.1)
        (folder / "data.txt").write_text("done")

    def fetch(job: int) -> str:
        barrier.wait(timeout=30)
        entry = cached_directory("race", {"key": job % 2}, build, root=tmp_path)
        return (entry / "data.txt").read_text()

    with ThreadPoolExecutor(THREADS) as pool:
        assert list(pool.map(fetch, range(THREADS))) == ["done"] * THREADS
    assert len(builds) == 2
    assert sorted(p.name for p in (tmp_path / "race").iterdir() if ".tmp-" in p.name) == []


def test_memory_cache_builds_each_key_once_under_threads():
    cache: MemoryCache[str] = MemoryCache(capacity=100)
    builds: list[str] = []
    barrier = threading.Barrier(THREADS)

    def build(key: str) -> str:
        builds.append(key)
        time.sleep(0.05)
        return key.upper()

    def fetch(job: int) -> str:
        key = "ab"[job % 2]
        barrier.wait(timeout=30)
        return cache.get(key, lambda: build(key))

    with ThreadPoolExecutor(THREADS) as pool:
        values = list(pool.map(fetch, range(THREADS)))
    assert values == ["A", "B"] * (THREADS // 2)
    assert sorted(builds) == ["a", "b"]
    assert (cache.hits, cache.misses) == (THREADS - 2, 2)


def test_memory_cache_does_not_keep_failures_and_evicts_by_weight():
    cache: MemoryCache[bytes] = MemoryCache(capacity=10, weigh=len)

    def fail() -> bytes:
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        cache.get("x", fail)
    assert cache.get("x", lambda: b"1234") == b"1234"
    cache.get("y", lambda: b"12345")
    cache.get("x", lambda: b"never")  # refreshes x: y is now the oldest
    cache.get("z", lambda: b"123")
    assert ("x" in cache, "y" in cache, "z" in cache, cache.weight) == (True, False, True, 7)
    cache.get("huge", lambda: b"0" * 50)  # alone over capacity: kept, everything else goes
    assert (len(cache), cache.weight) == (1, 50)
