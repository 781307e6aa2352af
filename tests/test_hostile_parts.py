"""Forged snapshot parts (valid unkeyed digest), hostile story and game files, long actions: issue 38, part 1.

Every test here failed before the fix it names: a forged part restored (or crashed, hung, raised an untyped
error), a FIFO hung the process, a long action stayed in memory.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_budget
from agentgym_budget.errors import DataError, SnapshotMismatchError
from agentgym_budget.snapshots import codec
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.tasks.textworld import games
from agentgym_budget.wrappers import BudgetMix, ProcessReward, StateSnapshot, TurnBudget
from tests.hostile_parts import coin_stack, forge_part

ROOT = Path(__file__).resolve().parents[1]
ACTIONS = ("inventory", "look", "go north")


@pytest.fixture(scope="module")
def coin():
    """A Coin Collector stack (StateSnapshot > TimeLimit > TurnBudget(3) > base) and a genuine snapshot after 1 turn."""
    base = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3)
    env = StateSnapshot(gym.wrappers.TimeLimit(TurnBudget(base, max_turns=3), max_episode_steps=50))
    env.reset(seed=1)
    env.step("look")
    genuine = env.snapshot().to_bytes()
    env.restore(EnvState.from_bytes(genuine))
    expected = [env.step(action)[:4] for action in ACTIONS[:2]]
    return env, genuine, expected


def _replays(env, genuine, expected):
    env.restore(EnvState.from_bytes(genuine))
    return [env.step(action)[:4] for action in ACTIONS[:2]] == expected


def _header_body(body) -> bytes:
    """A snapshot whose header body is ``body``, under a valid digest."""
    header = json.dumps({"versions": {"agentgym-budget": agentgym_budget.__version__}, "buffers": [], "body": body})
    payload = header.encode() + b"\0" * (-(32 + len(header)) % 8)
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    return struct.pack("<8sII16s", codec.MAGIC, codec.FORMAT_VERSION, len(header), digest) + payload


# ------------------------------------------------------------------------------------------- 1: the codec
@pytest.mark.parametrize(
    "body", [{"n": ["uint8", -1]}, {"n": ["int8", 10**30]}, {"n": ["bool", 7]}, {"n": ["uint8", "x"]}]
)
def test_numpy_scalar_that_its_dtype_cannot_hold_is_a_snapshot_mismatch(body):
    with pytest.raises(SnapshotMismatchError, match="Corrupt snapshot"):
        codec.decode(_header_body(body))


# ------------------------------------------------------------------------------------------- 2: wrapper parts
@pytest.mark.parametrize(
    "edit",
    [
        lambda part: (math.nan, *part[1:]),
        lambda part: (part[0], -1000, *part[2:]),
        lambda part: (part[0], part[0] + 1, *part[2:]),
        lambda part: (3, 3, False, True),  # at its budget yet not over
        lambda part: ("3", *part[1:]),
        lambda part: part[:3],
    ],
    ids=["budget NaN", "turn -1000", "turn past the budget", "over not set", "budget str", "3 fields"],
)
def test_turn_budget_part_out_of_range_is_refused_and_the_cap_holds(coin, edit):
    env, genuine, expected = coin
    with pytest.raises(SnapshotMismatchError, match="TurnBudget"):
        env.restore(forge_part(genuine, 1, edit))
    assert _replays(env, genuine, expected)
    env.restore(EnvState.from_bytes(genuine))
    truncated = [env.step("look")[3] for _ in range(2)]
    assert truncated == [False, True]  # the 3-turn cap still holds after the refusal


def test_every_wrapper_part_is_checked_by_its_layer():
    base = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3)
    env = StateSnapshot(ProcessReward(BudgetMix(TurnBudget(base, max_turns=5), budgets=[3, 4])))
    env.reset(seed=2)
    env.step("look")
    genuine = env.snapshot().to_bytes()
    forged = {
        "ProcessReward": (0, lambda part: (math.inf, part[1])),
        "ProcessReward actions": (0, lambda part: (part[0], (1, 2))),
        "BudgetMix generator": (
            1,
            lambda part: ({"bit_generator": "PCG64", "state": {"state": "x", "inc": 1}}, part[1]),
        ),
        "BudgetMix draw": (1, lambda part: (part[0], -4)),
    }
    for name, (index, edit) in forged.items():
        with pytest.raises(SnapshotMismatchError, match=name.split()[0]):
            env.restore(forge_part(genuine, index, edit))
    env.restore(EnvState.from_bytes(genuine))
    assert env.step("look")[4]["turn"] == 2


# ------------------------------------------------------------------------------------------- 3: Gymnasium wrappers
@pytest.mark.parametrize(
    "edit",
    [lambda part: {**part, "env": "x"}, lambda part: {**part, "step": 1}, lambda part: {"_elapsed_steps": 1}],
    ids=["env", "step", "a field missing"],
)
def test_gymnasium_wrapper_part_holds_only_its_own_fields(coin, edit):
    env, genuine, expected = coin
    env.restore(EnvState.from_bytes(genuine))
    with pytest.raises(SnapshotMismatchError, match="TimeLimit part holds the fields"):
        env.restore(forge_part(genuine, 0, edit))
    assert env.step("look")[4]["turn"] >= 1  # the env was left as it was: it still steps
    assert _replays(env, genuine, expected)


def test_a_passive_env_checker_part_without_its_kept_data_is_refused():
    """Found by ``python -m tests.snapshot_fuzz babyai 1000``: ``checked_step=False`` beside no kept data made the
    next step raise gymnasium's ``TypeError`` (every family: a WebShop stack here)."""
    env = StateSnapshot(TurnBudget(gym.make("agentgym_budget/WebShop-1k-v0"), max_turns=10))
    env.reset(seed=0)
    env.step("search[shoes]")
    env.step("search[shoes]")
    genuine = env.snapshot().to_bytes()
    parts = EnvState.from_bytes(genuine).parts
    index = next(i for i, part in enumerate(parts) if isinstance(part, dict) and "checked_step" in part)
    for flags in (
        {"checked_step": False},
        {"checked_data_reuse": False},
        {"checked_step": False, "checked_data_reuse": False},
    ):
        forged = forge_part(genuine, index, lambda part, flags=flags: {**part, **flags})
        with pytest.raises(SnapshotMismatchError, match="PassiveEnvChecker field _previous_data is None"):
            env.restore(forged)
    env.restore(EnvState.from_bytes(genuine))
    assert env.step("search[socks]")[4]["turn"] == 3


def test_a_refused_restore_leaves_the_whole_stack_as_it_was(coin):
    env, genuine, _ = coin
    env.restore(EnvState.from_bytes(genuine))
    env.step("inventory")
    before = env.snapshot().to_bytes()
    bad_base = forge_part(genuine, -1, lambda base: dataclasses.replace(base, episode_over="no"))
    with pytest.raises(SnapshotMismatchError):
        env.restore(bad_base)  # the wrapper parts are genuine: none of them may be applied
    assert env.snapshot().to_bytes() == before


# ------------------------------------------------------------------------------------------- 4: typed fields
@pytest.mark.parametrize(
    "edit",
    [
        lambda base: dataclasses.replace(base, engine=dataclasses.replace(base.engine, score="abc")),
        lambda base: dataclasses.replace(base, engine=dataclasses.replace(base.engine, moves="x")),
        lambda base: dataclasses.replace(base, last_turn=5),
        lambda base: dataclasses.replace(base, rng_state={**base.rng_state, "state": {"state": "x", "inc": 3}}),
        lambda base: dataclasses.replace(base, rng_state={"bit_generator": "PCG64"}),
        lambda base: dataclasses.replace(base, actions=(*base.actions, 7)),
    ],
    ids=["score", "moves", "last_turn", "rng state", "rng fields", "action"],
)
def test_wrong_typed_textworld_fields_are_refused_at_restore(coin, edit):
    env, genuine, expected = coin
    with pytest.raises(SnapshotMismatchError):
        env.restore(forge_part(genuine, -1, edit))
    env.reset(seed=3)  # a refused rng state never reaches the generator the next reset draws from
    assert _replays(env, genuine, expected)


@pytest.mark.slow
def test_webshop_session_out_of_the_catalog_is_refused():
    base = gym.make("agentgym_budget/WebShop-1k-v0", split="test")
    env = StateSnapshot(TurnBudget(base, max_turns=10))
    _, info = env.reset(seed=0)
    env.step(info["admissible_actions"][0] if info["admissible_actions"] else "search[shirt]")
    genuine = env.snapshot().to_bytes()
    for edit in ({"item": 10**9}, {"results": (10**9,)}, {"page": "admin"}, {"options": ((1, 2),)}):
        with pytest.raises(SnapshotMismatchError, match="WebShop"):
            env.restore(
                forge_part(
                    genuine, -1, lambda b, e=edit: dataclasses.replace(b, engine=dataclasses.replace(b.engine, **e))
                )
            )
    env.restore(EnvState.from_bytes(genuine))
    env.step("search[shirt]")


# ------------------------------------------------------------------------------------------- 5, 6: the interpreter
@pytest.mark.slow
def test_program_counters_moved_inside_the_story_are_refused_and_never_crash():
    result = subprocess.run(
        [sys.executable, "-m", "tests.hostile_parts", "pcs"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"child exited with {result.returncode}: {result.stderr[-2000:]}"
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome == {"refused": [182257, 13766, 72949, 67942], "same": True}


def test_unsealed_textworld_state_must_be_the_one_its_actions_lead_to(coin):
    env, genuine, expected = coin
    forged = forge_part(genuine, -1, lambda b: dataclasses.replace(b, engine=dataclasses.replace(b.engine, score=1)))
    with pytest.raises(SnapshotMismatchError, match="differ from those its own"):
        env.restore(forged)
    assert _replays(env, genuine, expected)


def test_engine_less_textworld_snapshot_is_refused_without_replaying(coin):
    env, genuine, expected = coin
    forged = forge_part(genuine, -1, lambda b: dataclasses.replace(b, engine=None, actions=("look",) * 3000))
    started = time.process_time()
    with pytest.raises(SnapshotMismatchError, match="no engine state"):
        env.restore(forged)
    assert time.process_time() - started < 0.5
    assert _replays(env, genuine, expected)


# ------------------------------------------------------------------------------------------- 11-13: files
def _game_folder(tmp_path: Path, story: str) -> Path:
    source = Path(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    shutil.copyfile(source.with_suffix(".json"), tmp_path / "game.json")
    if story == "fifo":
        os.mkfifo(tmp_path / "game.z8")
    elif story == "zero":
        os.symlink("/dev/zero", tmp_path / "game.z8")
    else:
        shutil.copyfile(source, tmp_path / "game.z8")
    return tmp_path


_RESET_FILE = """
import sys, warnings; warnings.simplefilter("ignore")
import gymnasium as gym, agentgym_budget
from agentgym_budget.errors import DataError
try:
    gym.make("agentgym_budget/TextWorld-File-v0", path=sys.argv[1]).reset(seed=0)
    print("played")
except DataError as err:
    print("DataError", err)
"""


@pytest.mark.slow
@pytest.mark.parametrize("story", ["fifo", "zero"])
def test_story_file_that_is_a_fifo_or_a_device_is_a_data_error(tmp_path, story):
    folder = _game_folder(tmp_path, story)
    result = subprocess.run(
        [sys.executable, "-c", _RESET_FILE, str(folder)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.startswith("DataError") and "not a regular file" in result.stdout, result.stderr[-2000:]


_RESET_CACHED = """
import os, sys, warnings; warnings.simplefilter("ignore")
from pathlib import Path
from agentgym_budget.tasks.textworld import games
z8 = Path(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
z8.unlink()
os.mkfifo(z8) if sys.argv[1] == "fifo" else os.symlink("/dev/zero", z8)
from agentgym_budget.storage import cache
cache._VERIFIED.clear()  # as in a new process
import gymnasium as gym, agentgym_budget
env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3)
env.reset(options={"task": "coin-l3-0"})
print(z8.is_file() and not z8.is_symlink())
"""


@pytest.mark.slow
@pytest.mark.parametrize("story", ["fifo", "zero"])
def test_cache_entry_whose_story_is_a_fifo_or_a_device_is_rebuilt(tmp_path, story):
    result = subprocess.run(
        [sys.executable, "-c", _RESET_CACHED, story],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "AGENTGYM_BUDGET_CACHE": str(tmp_path)},
    )
    assert result.stdout.strip() == "True", result.stderr[-2000:]


@pytest.mark.parametrize("field,value", [("metadata", 5), ("objective", 3), ("quests", {}), ("infos", None)])
def test_game_json_of_the_wrong_shape_is_a_data_error(tmp_path, field, value):
    folder = _game_folder(tmp_path, "copy")
    data = json.loads((folder / "game.json").read_text())
    data[field] = value
    (folder / "game.json").write_text(json.dumps(data))
    env = gym.make("agentgym_budget/TextWorld-File-v0", path=str(folder))
    with pytest.raises(DataError, match=f"its '{field}'"):
        env.reset(seed=0)


# ------------------------------------------------------------------------------------------- 14: memory
def test_long_actions_are_not_kept_after_their_turn():
    env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3, lean=True)
    env.reset(seed=0)
    env.step("look " + "x" * 60_000)  # warm: what a first long step loads once
    env.reset(seed=0)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for turn in range(40):
            env.step(f"look {turn} " + "x" * 60_000)
            if turn % 20 == 19:
                env.reset(seed=0)
        kept = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
        env.close()
    assert kept < 2**20, f"{kept / 2**20:.1f} MiB kept after 40 actions of 60,000 characters"


# ------------------------------------------------------------------------------------------- decisions
def test_a_snapshot_keeps_its_budget_in_a_stack_made_with_another():
    small = coin_stack(max_turns=10)
    small.reset(seed=1)
    small.step("look")
    snap = EnvState.from_bytes(small.snapshot().to_bytes())
    large = coin_stack(max_turns=20)
    large.restore(snap)
    info = large.step("look")[4]
    assert (info["max_turns"], info["turn"], info["turns_left"]) == (10, 2, 8)


def test_an_empty_snapshot_key_means_no_key_and_warns_once(monkeypatch):
    from agentgym_budget.snapshots import keys

    monkeypatch.setenv(keys.ENV_VAR, "")
    if hasattr(keys, "_warn_empty"):
        keys._warn_empty.cache_clear()  # once per process: start this test's process afresh
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, second = keys.current_key(), keys.current_key()
    assert (first, second) == (None, None)
    assert [str(w.message)[:60] for w in caught] == [f"{keys.ENV_VAR} is set but empty: an empty key means no key"[:60]]
