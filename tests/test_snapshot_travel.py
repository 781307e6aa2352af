"""Snapshots travel between processes: other hash seeds, pickle, read-only buffers, pickled envs, every family.

The slow tests run real child processes (``tests/travel_helpers.py``): one takes a snapshot with
``PYTHONHASHSEED=101``, another restores it with ``PYTHONHASHSEED=202`` from its bytes, from a pickle,
from a protocol-5 pickle whose buffer arrives read-only (as Ray's object store hands it over) and as a
pickled env, and both play the same continuation.
"""

from __future__ import annotations

import copy
import json
import multiprocessing
import os
import pickle
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.errors import SnapshotMismatchError
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.tasks.alfworld.portable import PortableAlfworldState
from agentgym_budget.tasks.textworld.portable import PortableTextWorldState
from agentgym_budget.testing import transition_key
from agentgym_budget.wrappers import StateSnapshot, TurnBudget
from tests import travel_helpers

ROOT = Path(__file__).resolve().parents[1]
COIN = "agentgym_budget/TextWorld-CoinCollector-v0"


def _child(command: str, family: str, folder: Path, hash_seed: int) -> dict:
    env = dict(os.environ, PYTHONHASHSEED=str(hash_seed))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    code = "from tests.travel_helpers import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, command, family, str(folder)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"child {command} {family} failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("family", list(travel_helpers.FAMILIES))
def test_snapshot_taken_in_one_process_restores_in_another(family, tmp_path):
    expected = _child("save", family, tmp_path, hash_seed=101)
    assert expected["keys"], "the continuation was not played"
    results = _child("load", family, tmp_path, hash_seed=202)
    for how in ("bytes", "pickle", "readonly"):
        assert results[how]["keys"] == expected["keys"], f"{family}: the continuation differs after restoring {how}"
        assert results[how]["digest"] == expected["digest"], f"{family}: the restored state serialises differently"
    assert results["env"]["keys"] == expected["keys"], f"{family}: an unpickled env continued differently"
    assert results["env"]["turn"] == expected["turn"]


@pytest.mark.slow
@pytest.mark.parametrize("family", ["textworld", "alfworld"])
def test_snapshot_pickled_through_multiprocessing(family, monkeypatch):
    factory, reset = travel_helpers.FAMILIES[family]
    env = factory()
    _, info = env.reset(**reset)
    prefix, continuation = travel_helpers._plan(family, info)
    for action in prefix:
        env.step(action)
    snap = env.snapshot()
    expected = travel_helpers._play(env, continuation)
    env.close()
    monkeypatch.setenv("PYTHONHASHSEED", "303")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.map(travel_helpers.mp_restore_and_play, [(family, snap, continuation)])[0]
    assert got == expected


def _coin_stack(**kwargs) -> StateSnapshot:
    return StateSnapshot(TurnBudget(gym.make(COIN, info_keys={"expert_plan"}, **kwargs), max_turns=20))


def _prefix(env: StateSnapshot, steps: int = 2) -> dict:
    _, info = env.reset(seed=3, options={"task": 1})
    for action in info["expert_plan"][:steps]:
        _, _, _, _, info = env.step(action)
    return info


def test_equal_snapshots_compare_equal_and_hash_alike():
    env = _coin_stack()
    _prefix(env)
    first, second = env.snapshot(), env.snapshot()
    assert first == second and hash(first) == hash(second)
    env.step("look")
    moved = env.snapshot()
    assert moved != first
    env.restore(first)
    assert env.snapshot() == first
    assert len({first, second, moved}) == 2


def test_native_state_with_read_only_buffers_restores():
    """Arrays made read-only (as Ray's zero-copy object store hands numpy buffers over) restore."""
    env = _coin_stack()
    info = _prefix(env)
    snap = env.snapshot()
    interpreter = snap.parts[-1].engine.interpreter
    for array in interpreter[:2]:
        array.flags.writeable = False
    expected = transition_key(env.step(info["expert_plan"][0]))
    other = _coin_stack()
    other.restore(snap)
    assert transition_key(other.step(info["expert_plan"][0])) == expected


def test_decoded_states_hold_portable_engine_states_only():
    for family in ("textworld", "alfworld"):
        factory, reset = travel_helpers.FAMILIES[family]
        env = factory()
        env.reset(**reset)
        snap = EnvState.from_bytes(env.snapshot().to_bytes())
        engine = snap.parts[-1].engine
        assert isinstance(engine, PortableTextWorldState) or isinstance(engine.engine, PortableAlfworldState)
        if family == "textworld":
            assert not engine.ram.flags.writeable
        env.close()


def test_restoring_into_another_configuration_is_refused():
    env = _coin_stack()
    _prefix(env)
    data = env.snapshot().to_bytes()
    other = _coin_stack(level=6)
    with pytest.raises(SnapshotMismatchError, match="configured as"):
        other.restore(EnvState.from_bytes(data))


def test_portable_state_of_another_game_is_refused(tmp_path):
    from agentgym_budget.tasks.textworld import games
    from agentgym_budget.tasks.textworld.engine import TextWorldEngine, TextWorldEngineState

    env = gym.make(COIN)
    env.reset(seed=0, options={"task": 0})
    portable = env.unwrapped._engine.save().portable()
    other = str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    with pytest.raises(SnapshotMismatchError, match="digest"):
        TextWorldEngineState.thaw(portable, other)
    engine = TextWorldEngine(env.unwrapped._engine.request_infos)
    with pytest.raises(SnapshotMismatchError, match="digest"):
        engine.restore(portable, other)
    env.close()


def test_portable_alfworld_state_of_another_game_is_refused():
    env = gym.make("agentgym_budget/ALFWorld-v0", num_games=1)
    env.reset(seed=0, options={"task": 0})
    portable = env.unwrapped._engine.save().portable()
    other_game = env.unwrapped._game_path(env.unwrapped.task_ids[1])
    with pytest.raises(SnapshotMismatchError, match="digest"):
        env.unwrapped._engine.restore(portable, other_game)
    env.close()


def test_pickled_env_carries_its_episode():
    env = _coin_stack()
    info = _prefix(env)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.get_wrapper_attr("turn") == env.get_wrapper_attr("turn") == 2
    assert copy.unwrapped.task_id == env.unwrapped.task_id and copy.unwrapped.spec == env.unwrapped.spec
    action = info["expert_plan"][0]
    assert transition_key(copy.step(action)) == transition_key(env.step(action))
    never_reset = pickle.loads(pickle.dumps(_coin_stack()))
    assert never_reset.unwrapped.task_id is None


def test_deepcopy_of_an_env_is_an_independent_env_at_the_same_state():
    env = _coin_stack()
    info = _prefix(env)
    twin = copy.deepcopy(env)
    assert twin.unwrapped is not env.unwrapped and twin.get_wrapper_attr("turn") == 2
    action = info["expert_plan"][0]
    assert transition_key(twin.step(action)) == transition_key(env.step(action))
    twin.step("look")
    assert (env.get_wrapper_attr("turn"), twin.get_wrapper_attr("turn")) == (3, 4)


def test_replay_snapshot_of_a_gymnasium_env_travels_as_bytes():
    env = StateSnapshot(gym.make("FrozenLake-v1", is_slippery=True))
    env.reset(seed=2)
    env.step(np.int64(1))
    snap = env.snapshot()
    again = EnvState.from_bytes(snap.to_bytes())
    assert again == snap and isinstance(again.replay.actions[0], np.int64)
    expected = [transition_key(env.step(a)) for a in (2, 2, 1)]
    fresh = StateSnapshot(gym.make("FrozenLake-v1", is_slippery=True))
    fresh.restore(again)
    assert [transition_key(fresh.step(a)) for a in (2, 2, 1)] == expected
