"""WebShop snapshots side by side: snapshot + restore, replay, the serialised form, and ``fork(8)``.

On ``WebShop-v0`` (10,000 products), at the states of several test instructions reached by the
expert's search, click and option choices (just before buying), measures on the full stack
(``gym.make`` + ``TurnBudget`` + ``StateSnapshot``):

* ``snapshot+restore`` in native mode (the session is immutable plain data);
* ``replay``: restoring the same state by reset + replaying the actions (``mode="replay"``);
* the serialised form: ``snapshot().to_bytes()`` and ``EnvState.from_bytes`` + ``restore`` into
  another stack, and its size;
* ``fork(8)``.

Usage::

    python benchmarks/webshop_snapshot.py [--repeats 50] [--tasks 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import _harness
import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.testing import transition_key
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

RESULTS = Path(__file__).parent / "results"
ENV_ID = "agentgym_budget/WebShop-v0"


def median_ms(function: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def make_stack(mode: str) -> StateSnapshot:
    return StateSnapshot(
        TurnBudget(gym.make(ENV_ID, split="test", info_keys={"expert_plan"}), max_turns=100), mode=mode
    )


def measure(task: int, args: argparse.Namespace) -> dict[str, float]:
    native, replay, other = make_stack("native"), make_stack("replay"), make_stack("native")
    for env in (native, replay):
        _, info = env.reset(seed=task, options={"task": task})
        plan = info["expert_plan"]
        for action in plan[:-1]:  # everything but "buy now"
            env.step(action)
    native_snap, replay_snap = native.snapshot(), replay.snapshot()
    data = native_snap.to_bytes()
    other.restore(EnvState.from_bytes(data))
    assert transition_key(other.step(plan[-1])) == transition_key(native.step(plan[-1])), "deserialised restore differs"
    native.restore(native_snap)
    figures = {
        "actions": len(plan) - 1,
        "snapshot_ms": median_ms(native.snapshot, args.repeats),
        "snapshot_restore_ms": median_ms(lambda: native.restore(native.snapshot()), args.repeats),
        "replay_ms": median_ms(lambda: replay.restore(replay_snap), args.repeats),
        "snapshot_to_bytes_ms": median_ms(lambda: native.snapshot().to_bytes(), args.repeats),
        "from_bytes_restore_ms": median_ms(lambda: other.restore(EnvState.from_bytes(data)), args.repeats),
        "serialised_kib": len(data) / 1024,
        "fork8_ms": median_ms(lambda: [fork.close() for fork in native.fork(8)], max(5, args.repeats // 5)),
    }
    figures["replay_over_snapshot_restore"] = figures["replay_ms"] / figures["snapshot_restore_ms"]
    for env in (native, replay, other):
        env.close()
    return {key: round(value, 4) for key, value in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=5)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeats, args.tasks = 3, 2
    recording = _harness.start("webshop_snapshot", args.smoke)
    result: dict[str, object] = {"tasks": {str(task): measure(task, args) for task in range(args.tasks)}}
    tasks = list(result["tasks"].values())
    result["summary"] = {
        key: statistics.median(task[key] for task in tasks)
        for key in (
            "snapshot_restore_ms",
            "replay_ms",
            "replay_over_snapshot_restore",
            "snapshot_to_bytes_ms",
            "from_bytes_restore_ms",
            "serialised_kib",
            "fork8_ms",
        )
    }
    print(json.dumps(result, indent=2))
    recording.finish(result)


if __name__ == "__main__":
    main()
