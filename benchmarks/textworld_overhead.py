"""Step latency of the fully wrapped TextWorld env vs the bare TextWorld env, side by side.

Both play the same game with the same TextWorld infos and the same recorded action
sequence; blocks of episodes alternate between the two so machine noise hits both
alike. The wrapped stack is what users run: ``gym.make`` (Gymnasium's checkers) +
``TurnBudget`` + ``StateSnapshot``, with its default infos (admissible actions, ...); the bare env
gets the same TextWorld infos. Target: median step ratio <= 1.10 in CPU time (the figure the
target is read from; wall time and the load average before and after are recorded beside it).

Usage::

    python benchmarks/textworld_overhead.py [--episodes 40] [--difficulty 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import _harness
import gymnasium as gym
import textworld

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

RESULTS = Path(__file__).parent / "results"


def record_actions(env: gym.Env, seed: int, length: int) -> list[str]:
    rng = random.Random(seed)
    _, info = env.reset(seed=seed)
    actions = []
    for _ in range(length):
        action = rng.choice([a for a in info["admissible_actions"] if not a.startswith("eat")] or ["look"])
        actions.append(action)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return actions


def time_steps(step: Callable[[str], object], actions: list[str]) -> tuple[list[float], list[float]]:
    """Wall and thread-CPU seconds of each ``step(action)``."""
    walls, cpus = [], []
    for action in actions:
        start, cpu = time.perf_counter(), time.thread_time()
        step(action)
        cpus.append(time.thread_time() - cpu)
        walls.append(time.perf_counter() - start)
    return walls, cpus


def time_wrapped(env: gym.Env, seed: int, actions: list[str]) -> tuple[list[float], list[float]]:
    env.reset(seed=seed)
    return time_steps(env.step, actions)


def time_bare(env: textworld.Environment, engine_seed: int, actions: list[str]) -> tuple[list[float], list[float]]:
    env.seed(engine_seed)
    env.reset()
    return time_steps(env.step, actions)


def readme_rows(result: dict) -> list[list[str]]:
    """The README row of this benchmark, formatted from its ``result``."""
    return [
        [
            "TextWorld step, full stack (`gym.make` + `TurnBudget` + `StateSnapshot`) vs bare TextWorld env, "
            "same game and actions",
            f"CPU time ratio **{result['ratio_cpu_wrapped_over_bare']:.3f}** ({result['wrapped_step_median_cpu_ms']:.2f} "
            f"vs {result['bare_step_median_cpu_ms']:.2f} ms median); wall time {result['ratio_wrapped_over_bare']:.3f} "
            f"({result['wrapped_step_median_ms']:.2f} vs {result['bare_step_median_ms']:.2f} ms)",
            f"<= {result['target_ratio']} (CPU); load average {result['load_average'][0]:.1f} -> "
            f"{result['load_average'][1]:.1f}",
            "`python benchmarks/textworld_overhead.py`",
        ]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=40, help="episodes per env (alternating)")
    parser.add_argument("--difficulty", type=int, default=3, help="Cooking difficulty")
    parser.add_argument("--steps", type=int, default=30, help="actions per episode")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.steps = 2, 5
    recording = _harness.start("textworld_overhead", args.smoke)

    wrapped = StateSnapshot(
        TurnBudget(gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=args.difficulty), max_turns=1000)
    )
    seed = 0
    actions = record_actions(wrapped, seed, args.steps)
    base = wrapped.unwrapped
    game_path = base._engine.game_path
    bare = textworld.start(game_path, request_infos=base._engine.request_infos)
    engine_seed = base._engine_seed

    wrapped_times: list[float] = []
    bare_times: list[float] = []
    wrapped_cpu: list[float] = []
    bare_cpu: list[float] = []
    for _ in range(args.episodes):
        walls, cpus = time_bare(bare, engine_seed, actions)
        bare_times += walls
        bare_cpu += cpus
        walls, cpus = time_wrapped(wrapped, seed, actions)
        wrapped_times += walls
        wrapped_cpu += cpus

    wrapped_ms = statistics.median(wrapped_times) * 1e3
    bare_ms = statistics.median(bare_times) * 1e3
    wrapped_cpu_ms = statistics.median(wrapped_cpu) * 1e3
    bare_cpu_ms = statistics.median(bare_cpu) * 1e3
    result = {
        "game": Path(game_path).parent.name,
        "task_id": base.task_id,
        "actions_per_episode": len(actions),
        "episodes": args.episodes,
        "bare_step_median_ms": round(bare_ms, 4),
        "wrapped_step_median_ms": round(wrapped_ms, 4),
        "ratio_wrapped_over_bare": round(wrapped_ms / bare_ms, 4),
        "bare_step_median_cpu_ms": round(bare_cpu_ms, 4),
        "wrapped_step_median_cpu_ms": round(wrapped_cpu_ms, 4),
        "ratio_cpu_wrapped_over_bare": round(wrapped_cpu_ms / bare_cpu_ms, 4),
        "target_ratio": 1.10,
        "load_average": [recording.load_before[0], os.getloadavg()[0]],
    }
    print(json.dumps(result, indent=2))
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
