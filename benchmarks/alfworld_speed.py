"""ALFWorld step speed: ALFWorld's stock engine vs ours, side by side in one run, outputs checked equal.

For generated games of every task type (ALFRED scenes: typically 20-35 receptacles and
30-70 objects, the size of ALFWorld's own games), both engines load the same game and
receive the same seeded command sequence (the planner's plan, then random admissible
commands biased towards object interactions, some not admissible). Each step is timed on
both and their observations, admissible commands, rewards and infos are compared (the run
aborts on the first difference).

* stock: ``textworld.start(game, infos, wrappers=[AlfredDemangler(), AlfredInfos])``, as
  ALFWorld's ``AlfredTWEnv`` builds it;
* ours: :class:`agentgym_budget.tasks.alfworld.engine.AlfworldEngine` (same wrappers on the
  cached/compiled PDDL backend);
* env: the ``ALFWorld-v0`` env with its default infos (admissible actions, progress, won, ...), on
  the same commands (its admissible actions are checked equal too), stepped right after ``ours`` on
  the same game, so both read the game's shared caches of static text (the ``ours`` figure is the
  conservative one); the ``gym.make`` stack is timed separately.

Goal: the env's default step >= 80x faster than the stock engine in CPU time (the machine may be
loaded: CPU time is what the ratio is read from; wall time and the load average are recorded
beside it). Results go to ``benchmarks/results/alfworld_speed.json``.

Usage::

    python benchmarks/alfworld_speed.py [--games-per-type 2] [--steps 40]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import time
from pathlib import Path

import _harness
import gymnasium as gym
import textworld
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.tasks.alfworld.engine import AlfworldEngine
from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES

RESULTS = Path(__file__).parent / "results"
INTERESTING = ("take", "move", "heat", "cool", "clean", "use", "open", "close", "examine", "inventory")
KEYS = ("feedback", "admissible_commands", "won", "lost", "score", "done", "moves", "extra.gamefile")


def choose(state, rng: random.Random) -> str:
    draw = rng.random()
    if draw < 0.05:
        return rng.choice(["dance", "take", "go to the moon"])
    interesting = [c for c in state["admissible_commands"] if c.startswith(INTERESTING)]
    if interesting and draw < 0.6:
        return rng.choice(interesting)
    return rng.choice(state["admissible_commands"])


def game_size(path: str) -> dict[str, int]:
    problem = json.loads(Path(path).read_text())["pddl_problem"]
    return {
        kind: len(re.findall(rf"^\s*\S+ - {kind}$", problem, re.M)) for kind in ("receptacle", "object", "location")
    }


def timed(function, *args):
    """The result of ``function(*args)``, its wall and thread-CPU milliseconds."""
    start, cpu = time.perf_counter(), time.thread_time()
    result = function(*args)
    return result, (time.perf_counter() - start) * 1e3, (time.thread_time() - cpu) * 1e3


def measure_game(path: str, steps: int, seed: int, env: ALFWorldEnv, task: str) -> dict:
    infos = textworld.EnvInfos(admissible_commands=True, won=True, lost=True, moves=True, extras=["gamefile"])
    stock, stock_load, _ = timed(textworld.start, path, infos, [AlfredDemangler(), AlfredInfos])
    ours = AlfworldEngine()
    _, ours_load, _ = timed(ours.load, path)
    expected, stock_reset, _ = timed(stock.reset)
    got, ours_reset, _ = timed(ours.reset, seed)
    plan = ours.plan()
    env.reset(seed=seed, options={"task": task})
    rng = random.Random(seed)
    stock_steps, our_steps, stock_cpu, our_cpu, env_steps, env_cpu = [], [], [], [], [], []
    for index in range(steps):
        if expected.get("done"):
            break
        assert all(expected.get(k) == got.get(k) for k in KEYS), f"{path}: states differ before step {index}"
        command = plan[index] if index < len(plan) // 2 else choose(expected, rng)
        (expected, *_), stock_ms, stock_cpu_ms = timed(stock.step, command)
        got, ours_ms, ours_cpu_ms = timed(ours.step, command)
        (*_, info), env_ms, env_cpu_ms = timed(env.step, command)
        assert info["admissible_actions"] == expected["admissible_commands"], f"{path}: env differs at {index}"
        env_steps.append(env_ms)
        env_cpu.append(env_cpu_ms)
        stock_steps.append(stock_ms)
        our_steps.append(ours_ms)
        stock_cpu.append(stock_cpu_ms)
        our_cpu.append(ours_cpu_ms)
    assert all(expected.get(k) == got.get(k) for k in KEYS), f"{path}: final states differ"
    ours.close()
    return {
        "game": path,
        "size": game_size(path),
        "steps": len(our_steps),
        "stock_step_ms": statistics.median(stock_steps),
        "ours_step_ms": statistics.median(our_steps),
        "stock_load_ms": stock_load,
        "ours_load_ms": ours_load,
        "stock_reset_ms": stock_reset,
        "ours_reset_ms": ours_reset,
        "all_stock_steps_ms": stock_steps,
        "all_our_steps_ms": our_steps,
        "all_stock_steps_cpu_ms": stock_cpu,
        "all_our_steps_cpu_ms": our_cpu,
        "all_env_steps_ms": env_steps,
        "all_env_steps_cpu_ms": env_cpu,
    }


def measure_gym_stack(task_ids: list[str], steps: int) -> float:
    env = gym.make("agentgym_budget/ALFWorld-v0", num_games=2)
    times = []
    for index, task in enumerate(task_ids):
        _, info = env.reset(seed=index, options={"task": task})
        rng = random.Random(index)
        for _ in range(steps):
            command = choose({"admissible_commands": info["admissible_actions"]}, rng)
            (_, _, terminated, _, info), ms, _ = timed(env.step, command)
            times.append(ms)
            if terminated:
                break
    env.close()
    return statistics.median(times)


def readme_rows(summary: dict) -> list[list[str]]:
    """The README row of this benchmark, formatted from its ``summary``."""
    return [
        [
            f"ALFWorld step, ours vs the stock engine ({summary['games']} games, {summary['steps_compared_identical']} "
            "steps, identical outputs)",
            f"CPU time {summary['median_step_cpu_ms_ours']:.2f} vs {summary['median_step_cpu_ms_stock']:.1f} ms median "
            f"(**{summary['median_step_ratio_cpu']:.1f}x**); wall time {summary['median_step_ms_ours']:.2f} vs "
            f"{summary['median_step_ms_stock']:.1f} ms ({summary['median_step_ratio']:.1f}x; per game: median "
            f"{summary['median_per_game_ratio']:.0f}x, lowest {summary['min_per_game_ratio']:.0f}x); reset {summary['median_reset_ms_ours']:.1f} vs "
            f"{summary['median_reset_ms_stock']:.0f} ms; full gym stack step {summary['median_gym_stack_step_ms']:.2f} ms",
            f">= {summary['target_ratio']}x (engine)",
            "`python benchmarks/alfworld_speed.py`",
        ],
        [
            "ALFWorld step of the env with its default infos (admissible actions, progress, ...) vs the stock engine, "
            "same commands, side by side",
            f"CPU time {summary['median_env_step_cpu_ms']:.2f} vs {summary['median_step_cpu_ms_stock']:.1f} ms median "
            f"(**{summary['env_step_ratio_cpu']:.1f}x**); wall time {summary['median_env_step_ms']:.2f} vs "
            f"{summary['median_step_ms_stock']:.1f} ms ({summary['env_step_ratio']:.1f}x); load average "
            f"{summary['load_average'][0]:.1f} -> {summary['load_average'][1]:.1f} on {summary['cores']} cores",
            f">= {summary['target_env_ratio_cpu']}x (CPU)",
            "`python benchmarks/alfworld_speed.py`",
        ],
    ]


def parse_args() -> argparse.Namespace:
    """The command line's arguments, with the smoke run's sizes applied under ``--smoke``."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games-per-type", type=int, default=2)
    parser.add_argument("--steps", type=int, default=40)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.games_per_type, args.steps = 1, 3
    return args


def measure_games(task_ids: list[str], paths: list[str], args: argparse.Namespace) -> list[dict]:
    """:func:`measure_game` on every game, beside one ``ALFWorld-v0`` env with its default infos; printed."""
    games = []
    default_env = ALFWorldEnv(num_games=args.games_per_type)
    for index, (task, path) in enumerate(zip(task_ids, paths, strict=True)):
        game = measure_game(path, args.steps, seed=index, env=default_env, task=task)
        game["task_id"] = task
        games.append(game)
        print(
            f"{task:40s} {game['size']['receptacle']:3d} receptacles {game['size']['object']:3d} objects  "
            f"stock {game['stock_step_ms']:7.2f} ms  ours {game['ours_step_ms']:6.2f} ms  "
            f"x{game['stock_step_ms'] / game['ours_step_ms']:.0f}",
            flush=True,
        )
    default_env.close()
    return games


def summarize(games: list[dict], task_ids: list[str], steps: int, load_before: float) -> dict:
    """Medians and ratios over the steps of every game, and the ``gym.make`` stack's median step (measured here)."""
    stock_all = [ms for game in games for ms in game["all_stock_steps_ms"]]
    ours_all = [ms for game in games for ms in game["all_our_steps_ms"]]
    stock_cpu_all = [ms for game in games for ms in game["all_stock_steps_cpu_ms"]]
    ours_cpu_all = [ms for game in games for ms in game["all_our_steps_cpu_ms"]]
    env_all = [ms for game in games for ms in game["all_env_steps_ms"]]
    env_cpu_all = [ms for game in games for ms in game["all_env_steps_cpu_ms"]]
    return {
        "games": len(games),
        "steps_compared_identical": len(ours_all),
        "median_step_ms_stock": statistics.median(stock_all),
        "median_step_ms_ours": statistics.median(ours_all),
        "median_step_ratio": statistics.median(stock_all) / statistics.median(ours_all),
        "median_step_cpu_ms_stock": statistics.median(stock_cpu_all),
        "median_step_cpu_ms_ours": statistics.median(ours_cpu_all),
        "median_step_ratio_cpu": statistics.median(stock_cpu_all) / statistics.median(ours_cpu_all),
        "median_env_step_ms": statistics.median(env_all),
        "median_env_step_cpu_ms": statistics.median(env_cpu_all),
        "env_step_ratio": statistics.median(stock_all) / statistics.median(env_all),
        "env_step_ratio_cpu": statistics.median(stock_cpu_all) / statistics.median(env_cpu_all),
        "target_env_ratio_cpu": 80,
        "load_average": [load_before, os.getloadavg()[0]],
        "cores": os.cpu_count(),
        "median_per_game_ratio": statistics.median(g["stock_step_ms"] / g["ours_step_ms"] for g in games),
        "min_per_game_ratio": min(g["stock_step_ms"] / g["ours_step_ms"] for g in games),
        "median_reset_ms_stock": statistics.median(g["stock_reset_ms"] for g in games),
        "median_reset_ms_ours": statistics.median(g["ours_reset_ms"] for g in games),
        "median_gym_stack_step_ms": measure_gym_stack(task_ids, steps),
        "median_game_size": {
            kind: statistics.median(g["size"][kind] for g in games) for kind in ("receptacle", "object", "location")
        },
        "target_ratio": 5,
        "task_types": list(TASK_TYPES),
    }


def main() -> None:
    args = parse_args()
    recording = _harness.start("alfworld_speed", args.smoke)
    env = ALFWorldEnv(num_games=args.games_per_type)
    task_ids = list(env.task_ids)
    paths = [env._game_path(task) for task in task_ids]
    env.close()
    games = measure_games(task_ids, paths, args)
    summary = summarize(games, task_ids, args.steps, recording.load_before[0])
    for game in games:
        for key in [key for key in game if key.startswith("all_")]:
            del game[key]
    result = {"summary": summary, "games": games}
    print(json.dumps(summary, indent=2))
    recording.finish(result, readme_rows(summary))


if __name__ == "__main__":
    main()
