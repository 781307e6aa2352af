"""ALFWorld snapshot + restore vs replaying the episode, on the full Gymnasium stack.

On generated games of each task type, after 10 and after 30 random non-terminal actions,
measures on ``gym.make("agentgym_budget/ALFWorld-v0") + TurnBudget + StateSnapshot``:

* ``snapshot+restore``: ``StateSnapshot.snapshot()`` then ``restore()`` in native mode (the
  planner's state id plus the PDDL facts);
* ``restore``: restoring an existing snapshot (native);
* ``replay``: restoring by reset + replaying the actions (``StateSnapshot(mode="replay")``);
* ``engine save/restore``: the engine-level native snapshot alone;
* the serialised form: ``snapshot().to_bytes()``, ``EnvState.from_bytes`` + ``restore`` into another
  stack (what a worker process does with a snapshot it receives: the planner operators of the
  episode are applied again), and its size;
* ``fork(8)``: eight independent copies of the stack at that state; forks share the planner
  library and restore natively (no replay). The forks are closed outside the timed call
  (``fork8_and_close_ms`` includes it).

The fork and snapshot+restore figures are taken in interleaved rounds, in wall-clock time and in
CPU time (``*_cpu``: robust to other processes competing for the cores).

Each native restore is checked to reproduce the next step of a replayed copy.
Targets: snapshot+restore >= 100x faster than replaying 30 steps; ``fork(8)`` <= 10x one
snapshot+restore. Results go to ``benchmarks/results/alfworld_snapshot.json``.

Usage::

    python benchmarks/alfworld_snapshot.py [--repeats 30] [--games-per-type 1]
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

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
from agentgym_budget.testing import transition_key
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

RESULTS = Path(__file__).parent / "results"


def median_ms(function: Callable[[], object], repeats: int, clock: Callable[[], float] = time.perf_counter) -> float:
    times = []
    for _ in range(repeats):
        start = clock()
        function()
        times.append(clock() - start)
    return statistics.median(times) * 1e3


def fork8(env: StateSnapshot, forks: list[StateSnapshot]) -> None:
    """``env.fork(8)``; the forks are closed outside the timed call."""
    for fork in forks:
        fork.close()
    forks[:] = env.fork(8)


def make_stack(mode: str, games: int) -> StateSnapshot:
    return StateSnapshot(
        TurnBudget(gym.make("agentgym_budget/ALFWorld-v0", num_games=games), max_turns=1000), mode=mode
    )


def actions_for(task: str, length: int, games: int, seed: int) -> list[str]:
    """``length`` random admissible actions that do not end the episode."""
    env = make_stack("native", games)
    rng = random.Random(seed)
    _, info = env.reset(seed=seed, options={"task": task})
    actions: list[str] = []
    while len(actions) < length:
        snap = env.snapshot()
        action = rng.choice(info["admissible_actions"])
        _, _, terminated, _, next_info = env.step(action)
        if terminated:
            env.restore(snap)
            continue
        actions.append(action)
        info = next_info
    env.close()
    return actions


def measure(task: str, depth: int, actions: list[str], args: argparse.Namespace) -> dict[str, float]:
    native, replay = make_stack("native", args.games_per_type), make_stack("replay", args.games_per_type)
    other = make_stack("native", args.games_per_type)
    for env in (native, replay):
        env.reset(seed=0, options={"task": task})
        for action in actions[:depth]:
            env.step(action)
    native_snap, replay_snap = native.snapshot(), replay.snapshot()
    probe = actions[depth]
    native.restore(native_snap)
    replay.restore(replay_snap)
    assert transition_key(native.step(probe)) == transition_key(replay.step(probe)), (
        "native restore differs from replay"
    )
    data = native_snap.to_bytes()
    native.restore(native_snap)
    other.restore(EnvState.from_bytes(data))
    assert transition_key(other.step(probe)) == transition_key(native.step(probe)), "deserialised restore differs"
    native.restore(native_snap)
    engine = native.unwrapped._engine
    saved = engine.save()
    rounds: dict[str, list[float]] = {}
    forks: list[StateSnapshot] = []
    cpu = time.process_time
    for _ in range(args.rounds):  # interleaved rounds: the ratios share the machine's load
        round_figures = {
            "snapshot_ms": median_ms(native.snapshot, args.repeats),
            "snapshot_restore_ms": median_ms(lambda: native.restore(native.snapshot()), args.repeats),
            "snapshot_restore_cpu_ms": median_ms(lambda: native.restore(native.snapshot()), args.repeats, cpu),
            "restore_ms": median_ms(lambda: native.restore(native_snap), args.repeats),
            "fork8_ms": median_ms(lambda: fork8(native, forks), args.repeats),
            "fork8_cpu_ms": median_ms(lambda: fork8(native, forks), args.repeats, cpu),
            "fork8_and_close_ms": median_ms(lambda: [fork.close() for fork in native.fork(8)], args.repeats),
        }
        for key, value in round_figures.items():
            rounds.setdefault(key, []).append(value)
    fork8(native, forks)
    for fork in forks:
        fork.close()
    figures = {key: statistics.median(values) for key, values in rounds.items()}
    figures.update(
        {
            "replay_ms": median_ms(lambda: replay.restore(replay_snap), max(5, args.repeats // 3)),
            "engine_save_us": median_ms(engine.save, args.repeats) * 1e3,
            "engine_restore_us": median_ms(lambda: engine.restore(saved), args.repeats) * 1e3,
            "snapshot_to_bytes_ms": median_ms(lambda: native.snapshot().to_bytes(), args.repeats),
            "from_bytes_restore_ms": median_ms(lambda: other.restore(EnvState.from_bytes(data)), args.repeats),
            "serialised_kib": len(data) / 1024,
        }
    )
    figures["replay_over_snapshot_restore"] = figures["replay_ms"] / figures["snapshot_restore_ms"]
    figures["fork8_over_snapshot_restore"] = figures["fork8_ms"] / figures["snapshot_restore_ms"]
    figures["fork8_over_snapshot_restore_cpu"] = figures["fork8_cpu_ms"] / figures["snapshot_restore_cpu_ms"]
    for env in (native, replay, other):
        env.close()
    return {key: round(value, 4) for key, value in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--games-per-type", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the fork and snapshot timings")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeats, args.games_per_type, args.rounds = 3, 1, 1
    recording = _harness.start("alfworld_snapshot", args.smoke)
    tasks = list(ALFWorldEnv(num_games=args.games_per_type).task_ids)
    result: dict[str, object] = {"games": {}}
    for index, task in enumerate(tasks):
        actions = actions_for(task, 31, args.games_per_type, seed=index)
        result["games"][task] = {f"after_{depth}_steps": measure(task, depth, actions, args) for depth in (10, 30)}
        print(task, json.dumps(result["games"][task]["after_30_steps"]), flush=True)
    ratios = [game["after_30_steps"]["replay_over_snapshot_restore"] for game in result["games"].values()]
    games = list(result["games"].values())
    fork_ratios = [game[f"after_{depth}_steps"]["fork8_over_snapshot_restore"] for game in games for depth in (10, 30)]
    cpu_ratios = [
        game[f"after_{depth}_steps"]["fork8_over_snapshot_restore_cpu"] for game in games for depth in (10, 30)
    ]
    result["summary"] = {
        "median_fork8_over_snapshot_restore": statistics.median(fork_ratios),
        "max_fork8_over_snapshot_restore": max(fork_ratios),
        "median_fork8_over_snapshot_restore_cpu": statistics.median(cpu_ratios),
        "max_fork8_over_snapshot_restore_cpu": max(cpu_ratios),
        "median_fork8_ms": statistics.median(game["after_30_steps"]["fork8_ms"] for game in games),
        "target_fork8_over_snapshot_restore": 10,
        "median_snapshot_to_bytes_ms": statistics.median(
            game["after_30_steps"]["snapshot_to_bytes_ms"] for game in games
        ),
        "median_from_bytes_restore_ms": statistics.median(
            game["after_30_steps"]["from_bytes_restore_ms"] for game in games
        ),
        "median_replay30_over_snapshot_restore": statistics.median(ratios),
        "min_replay30_over_snapshot_restore": min(ratios),
        "median_snapshot_restore_ms": statistics.median(
            game["after_30_steps"]["snapshot_restore_ms"] for game in result["games"].values()
        ),
        "median_replay30_ms": statistics.median(
            game["after_30_steps"]["replay_ms"] for game in result["games"].values()
        ),
        "target_replay30_over_snapshot_restore": 100,
    }
    print(json.dumps(result["summary"], indent=2))
    recording.finish(result)


if __name__ == "__main__":
    main()
