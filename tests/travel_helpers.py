"""Scenarios for the snapshot-travel tests, run in child processes with their own ``PYTHONHASHSEED``.

``python -c "from tests.travel_helpers import main; main()" save FAMILY FOLDER`` plays a prefix of an
episode, snapshots the stack and writes the snapshot in every form that travels (its bytes, a pickle,
a protocol-5 pickle whose buffer is shipped out of band, a pickle of the whole env), then plays a
continuation and writes what it observed. ``... load FAMILY FOLDER`` restores each form into a fresh
stack (or unpickles the env), plays the same continuation and prints what it observed.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.testing import transition_key
from agentgym_budget.wrappers import BudgetMix, ProcessReward, StateSnapshot, TurnBudget

__all__ = ["FAMILIES", "load", "main", "mp_restore_and_play", "save"]


def _textworld() -> gym.Env:
    base = gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=3, info_keys={"expert_plan", "facts"})
    budget = TurnBudget(gym.wrappers.RecordEpisodeStatistics(base), max_turns=40)
    return StateSnapshot(ProcessReward(BudgetMix(budget, budgets=[30, 35]), coefficient=1.0))


def _alfworld() -> gym.Env:
    base = gym.make("agentgym_budget/ALFWorld-v0", num_games=1, info_keys={"expert_plan", "facts"})
    return StateSnapshot(TurnBudget(base, max_turns=40))


def _webshop() -> gym.Env:
    base = gym.make("agentgym_budget/WebShop-1k-v0", split="test", info_keys={"expert_plan", "reward_info"})
    return StateSnapshot(BudgetMix(TurnBudget(base, max_turns=40), budgets=[20, 25]))


def _twx() -> gym.Env:
    base = gym.make("agentgym_budget/TWX-Cooking-v0", info_keys={"expert_plan", "score"})
    return StateSnapshot(BudgetMix(TurnBudget(base, max_turns=40), budgets=[30, 35]))


def _babyai() -> gym.Env:
    base = gym.make("agentgym_budget/BabyAI-PutNextLocal-v0", info_keys={"expert_plan", "agent"})
    return StateSnapshot(BudgetMix(TurnBudget(base, max_turns=40), budgets=[30, 35]))


def _frozenlake() -> gym.Env:
    return StateSnapshot(gym.make("FrozenLake-v1", is_slippery=True))


FAMILIES: dict[str, tuple[Callable[[], gym.Env], dict[str, Any]]] = {
    "textworld": (_textworld, {"seed": 4}),
    "alfworld": (_alfworld, {"seed": 4, "options": {"task": 3}}),
    "webshop": (_webshop, {"seed": 0}),
    "twx": (_twx, {"seed": 2}),
    "babyai": (_babyai, {"seed": 3}),
    "frozenlake": (_frozenlake, {"seed": 5}),
}
"""Family -> (stack factory, reset arguments)."""


def _plan(family: str, info: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """The prefix and the continuation played in ``family`` from the reset ``info``."""
    if family == "frozenlake":
        return [1, 2, 2], [1, 1, 2, 2, 1, 0, 3]
    plan = list(info["expert_plan"])
    if family == "webshop":
        return plan[:2], plan[2:]
    return plan[:3], [*plan[3:6], "look", "inventory"]


def _play(env: gym.Env, actions: list[Any]) -> list[str]:
    keys = []
    for action in actions:
        result = env.step(action)
        keys.append(repr(transition_key(result)))
        if result[2] or result[3]:
            break
    return keys


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def save(family: str, folder: Path) -> dict[str, Any]:
    """Play the prefix, write the snapshot in every travelling form, play the continuation."""
    factory, reset = FAMILIES[family]
    env = factory()
    _, info = env.reset(**reset)
    prefix, continuation = _plan(family, info)
    for action in prefix:
        env.step(action)
    snap = env.snapshot()
    data = snap.to_bytes()
    (folder / "state.bin").write_bytes(data)
    (folder / "state.pkl").write_bytes(pickle.dumps(snap))
    buffers: list[pickle.PickleBuffer] = []
    (folder / "state5.pkl").write_bytes(pickle.dumps(snap, protocol=5, buffer_callback=buffers.append))
    (folder / "state5.buf").write_bytes(bytes(buffers[0].raw()))
    (folder / "env.pkl").write_bytes(pickle.dumps(env))
    turn = _turn(env)
    expected = {"continuation": continuation, "keys": _play(env, continuation), "digest": _digest(data), "turn": turn}
    (folder / "expected.json").write_text(json.dumps(expected))
    env.close()
    return expected


def _turn(env: gym.Env) -> int | None:
    try:
        return int(env.get_wrapper_attr("turn"))
    except AttributeError:
        return None


def load(family: str, folder: Path) -> dict[str, Any]:
    """Restore every travelling form written by :func:`save` and play the continuation from each."""
    factory, _ = FAMILIES[family]
    continuation = json.loads((folder / "expected.json").read_text())["continuation"]
    readonly = memoryview((folder / "state5.buf").read_bytes()).toreadonly()
    snapshots = {
        "bytes": EnvState.from_bytes((folder / "state.bin").read_bytes()),
        "pickle": pickle.loads((folder / "state.pkl").read_bytes()),
        "readonly": pickle.loads((folder / "state5.pkl").read_bytes(), buffers=[readonly]),
    }
    results: dict[str, Any] = {}
    env = factory()
    for how, snap in snapshots.items():
        env.restore(snap)
        digest = _digest(env.snapshot().to_bytes())
        results[how] = {"keys": _play(env, continuation), "digest": digest}
    env.close()
    unpickled = pickle.loads((folder / "env.pkl").read_bytes())
    turn = _turn(unpickled)
    results["env"] = {"keys": _play(unpickled, continuation), "turn": turn}
    unpickled.close()
    return results


def mp_restore_and_play(job: tuple[str, EnvState, list[Any]]) -> list[str]:
    """A ``multiprocessing`` worker: restore the pickled snapshot into a fresh stack and play ``actions``."""
    family, snap, actions = job
    env = FAMILIES[family][0]()
    try:
        env.restore(snap)
        return _play(env, actions)
    finally:
        env.close()


def main(argv: list[str] | None = None) -> None:
    """``save|load FAMILY FOLDER``; prints the result as JSON on the last line of stdout."""
    command, family, folder = argv or sys.argv[1:]
    result = save(family, Path(folder)) if command == "save" else load(family, Path(folder))
    print(json.dumps(result))
