"""TextWorld snapshots side by side: snapshot + restore, replay, ``env.copy()``, the serialised form, and forks.

On one Cooking game, after 10 and after 30 random (non-terminal) actions, measures:

* ``snapshot+restore``: ``StateSnapshot.snapshot()`` then ``restore()`` on the full stack
  (``gym.make`` + ``TurnBudget`` + ``StateSnapshot``), native mode;
* ``replay``: restoring the same state by reset + replaying the actions (``StateSnapshot``
  in replay mode: the generic fallback);
* ``env.copy()``: TextWorld's own copy of a bare TextWorld env at that state;
* the serialised form: ``snapshot().to_bytes()``, and ``EnvState.from_bytes`` + ``restore`` into
  another stack (what a worker process does with a snapshot it receives), and its size;
* ``fork(n)`` (forks share the interpreter) against the way forks were made before: a new stack
  per fork (a new interpreter each) into which the snapshot is restored, for n = 8 and 64.

Targets: snapshot+restore >= 100x faster than replaying 30 steps; ``fork(64)`` >= 3x faster than
one new stack per fork.

Usage::

    python benchmarks/textworld_snapshot.py [--repeats 30] [--difficulty 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import _harness
import gymnasium as gym
import textworld

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.snapshots import stack as snapshot
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

RESULTS = Path(__file__).parent / "results"
SAFE_VERBS = ("look", "inventory", "examine", "open", "close", "go")


def median_ms(function: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def safe_actions(seed: int, length: int, difficulty: int) -> list[str]:
    env = gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=difficulty)
    rng = random.Random(seed)
    _, info = env.reset(seed=seed)
    actions = []
    while len(actions) < length:
        action = rng.choice([a for a in info["admissible_actions"] if a.startswith(SAFE_VERBS)])
        actions.append(action)
        _, _, terminated, _, info = env.step(action)
        assert not terminated, "a safe action ended the episode"
    env.close()
    return actions


def make_stack(mode: str, difficulty: int) -> StateSnapshot:
    base = gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=difficulty)
    return StateSnapshot(TurnBudget(base, max_turns=1000), mode=mode)


def forks_one_stack_each(env: StateSnapshot, n: int) -> list[StateSnapshot]:
    """Forks as they were made before forks shared the interpreter: a new stack each, then restore."""
    snap = env.snapshot()
    forks = []
    for _ in range(n):
        twin = snapshot.clone(env)
        twin.restore(snap)
        forks.append(twin)
    return forks


def close_all(forks: list[StateSnapshot]) -> None:
    for fork in forks:
        fork.close()


def measure(depth: int, actions: list[str], args: argparse.Namespace) -> dict[str, float]:
    seed = 0
    native, replay = make_stack("native", args.difficulty), make_stack("replay", args.difficulty)
    other = make_stack("native", args.difficulty)
    for env in (native, replay):
        env.reset(seed=seed)
        for action in actions[:depth]:
            env.step(action)
    native_snap, replay_snap = native.snapshot(), replay.snapshot()
    data = native_snap.to_bytes()
    other.restore(EnvState.from_bytes(data))
    probe = actions[depth]
    assert other.step(probe)[0] == native.step(probe)[0], "a deserialised snapshot continued differently"
    native.restore(native_snap)

    base = native.unwrapped
    bare = textworld.start(base._engine.game_path, request_infos=base._engine.request_infos)
    bare.seed(base._engine_seed)
    bare.reset()
    for action in actions[:depth]:
        bare.step(action)

    few = max(3, args.repeats // 10)
    figures = {
        "snapshot_ms": median_ms(native.snapshot, args.repeats),
        "snapshot_restore_ms": median_ms(lambda: native.restore(native.snapshot()), args.repeats),
        "restore_ms": median_ms(lambda: native.restore(native_snap), args.repeats),
        "replay_ms": median_ms(lambda: replay.restore(replay_snap), max(5, args.repeats // 3)),
        "textworld_copy_ms": median_ms(lambda: bare.copy().close(), max(5, args.repeats // 3)),
        "snapshot_to_bytes_ms": median_ms(lambda: native.snapshot().to_bytes(), args.repeats),
        "from_bytes_restore_ms": median_ms(lambda: other.restore(EnvState.from_bytes(data)), args.repeats),
        "serialised_kib": len(data) / 1024,
        "fork8_ms": median_ms(lambda: close_all(native.fork(8)), few),
        "fork8_one_stack_each_ms": median_ms(lambda: close_all(forks_one_stack_each(native, 8)), few),
        "fork64_ms": median_ms(lambda: close_all(native.fork(64)), 3),
        "fork64_one_stack_each_ms": median_ms(lambda: close_all(forks_one_stack_each(native, 64)), 3),
    }
    figures["replay_over_snapshot_restore"] = figures["replay_ms"] / figures["snapshot_restore_ms"]
    figures["copy_over_snapshot_restore"] = figures["textworld_copy_ms"] / figures["snapshot_restore_ms"]
    figures["fork64_speedup"] = figures["fork64_one_stack_each_ms"] / figures["fork64_ms"]
    for env in (native, replay, other, bare):
        env.close()
    return {key: round(value, 4) for key, value in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--difficulty", type=int, default=3)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeats = 3
    recording = _harness.start("textworld_snapshot", args.smoke)
    actions = safe_actions(seed=1, length=31, difficulty=args.difficulty)
    result: dict[str, object] = {f"after_{depth}_steps": measure(depth, actions, args) for depth in (10, 30)}
    result["target_replay30_over_snapshot_restore"] = 100
    result["target_fork64_speedup"] = 3
    print(json.dumps(result, indent=2))
    recording.finish(result)


if __name__ == "__main__":
    main()
