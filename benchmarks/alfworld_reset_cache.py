"""ALFWorld reset time when tasks are drawn from a large pool (the train split has 30,000 tasks).

Two envs of ``ALFWorld-v0`` (train split) run side by side in one process, their resets
interleaved so both see the same machine load:

* **small pool**: each reset draws one of 10 random train tasks (every game stays in memory);
* **large pool**: 1,000 random train tasks (another seed), first each once in random order
  (*first visits*: every reset loads a game this process has not seen, from the parsed form
  stored on disk), then 1,000 uniform draws (*steady state*: with the per-process game cache
  bounded by memory, most draws still load from disk).

Generating the games is not measured: missing games are generated before timing starts, in a
child process (with a progress bar; the first run takes about 2 s a game on 2 cores), which also
stores their parsed form; the measuring process starts with no game in memory. For contrast, the
work the per-process cache used to redo on a miss (TextWorld's ``GameLogic`` parse of the
grammar + Fast Downward's two translations, as in ``PddlEnv.load``) is timed on a few of the games.

Reported: median / p90 / max reset per series, the ratios to the small pool (target: large-pool
median within 3x), resident memory (RSS) through the run and the game cache's size and estimated
weight. Results go to ``benchmarks/results/alfworld_reset_cache.json`` and ``.png`` (distributions).

Usage::

    python benchmarks/alfworld_reset_cache.py [--tasks 1000] [--small 10] [--draws 1000] [--cache-mb 128]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _harness
from tqdm import tqdm

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.tasks.alfworld import pddl_env
from agentgym_budget.tasks.alfworld.env import ALFWorldEnv

RESULTS = Path(__file__).parent / "results"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "n": len(ordered),
        "median_ms": round(statistics.median(ordered) * 1e3, 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1e3, 2),
        "max_ms": round(ordered[-1] * 1e3, 2),
    }


def timed_reset(env: ALFWorldEnv, task: str, seed: int) -> float:
    start = time.perf_counter()
    env.reset(seed=seed, options={"task": task})
    return time.perf_counter() - start


def old_miss(paths: list[str]) -> list[float]:
    """What a per-process cache miss used to cost: parse the grammar with TatSu and translate twice."""
    from textworld.envs.pddl import logic as pddl_logic

    from agentgym_budget.tasks.alfworld.planner import translate

    times = []
    for path in paths:
        data = json.loads(Path(path).read_text())
        start = time.perf_counter()
        pddl_logic.GameLogic(domain=data["pddl_domain"], grammar=data["grammar"])
        translate(data["pddl_domain"], data["pddl_problem"])
        times.append(time.perf_counter() - start)
    return times


def plot(series: dict[str, list[float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, times in series.items():
        ordered = sorted(t * 1e3 for t in times)
        ax.plot(ordered, [(i + 1) / len(ordered) for i in range(len(ordered))], label=name)
    ax.set_xscale("log")
    ax.set_xlabel("reset time (ms, log scale)")
    ax.set_ylabel("fraction of resets")
    ax.set_title("ALFWorld reset: small vs large task pool")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_args() -> argparse.Namespace:
    """The command line's arguments, with the smoke run's sizes applied under ``--smoke``."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=1000, help="tasks in the large pool")
    parser.add_argument("--small", type=int, default=10, help="tasks in the small pool")
    parser.add_argument("--draws", type=int, default=1000, help="steady-state resets on the large pool")
    parser.add_argument("--cache-mb", type=float, default=None, help="game cache bound (default: the library's)")
    parser.add_argument("--old-misses", type=int, default=5, help="games timed with the old miss path")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.small, args.draws, args.old_misses = 12, 4, 24, 1
    return args


def store_games(env: ALFWorldEnv, tasks: list[str]) -> None:
    """Make sure every task's game and its parsed form exist on disk (missing ones are generated)."""
    for task in tqdm(tasks, desc="games on disk (missing ones are generated, not timed)"):
        pddl_env.load_game(env._game_path(task))
        pddl_env.GAME_CACHE.clear()


def prepare_in_child() -> float:
    """Run this script with ``--prepare-only`` in a child process; the seconds it took."""
    start = time.perf_counter()
    subprocess.run([sys.executable, __file__, *sys.argv[1:], "--prepare-only"], check=True)
    return time.perf_counter() - start


def time_resets(
    small_env: ALFWorldEnv,
    large_env: ALFWorldEnv,
    small: list[str],
    large: list[str],
    rng: random.Random,
    draws: int,
    rss: dict[str, float],
) -> tuple[list[float], list[float], list[float], list[str]]:
    """Small-pool, large-pool first-visit and steady-state reset times, interleaved, and the order of first visits.

    The resident memory every 250 resets of the large pool is added to ``rss``.
    """
    small_times, first_times, steady_times = [], [], []
    order = list(large)
    rng.shuffle(order)
    for index, task in enumerate(tqdm(order, desc="first visits")):
        first_times.append(timed_reset(large_env, task, index))
        small_times.append(timed_reset(small_env, rng.choice(small), index))
        if (index + 1) % 250 == 0:
            rss[f"after_{index + 1}_first_visits"] = rss_mb()
    for index in tqdm(range(draws), desc="steady state"):
        steady_times.append(timed_reset(large_env, rng.choice(large), index))
        small_times.append(timed_reset(small_env, rng.choice(small), index))
        if (index + 1) % 250 == 0:
            rss[f"after_{index + 1}_steady_draws"] = rss_mb()
    return small_times, first_times, steady_times, order


def summarize(
    args: argparse.Namespace,
    small_times: list[float],
    first_times: list[float],
    steady_times: list[float],
    old: list[float],
    rss: dict[str, float],
    prepare_s: float,
) -> dict:
    """The result written to the results: reset summaries, ratios, memory and the game cache."""
    base = statistics.median(small_times)
    return {
        "tasks": {"small": args.small, "large": args.tasks, "steady_draws": args.draws},
        "small_pool": summary(small_times),
        "large_pool_first_visits": summary(first_times),
        "large_pool_steady_state": summary(steady_times),
        "ratio_first_visits_median": round(statistics.median(first_times) / base, 2),
        "ratio_steady_state_median": round(statistics.median(steady_times) / base, 2),
        "old_miss_parse_and_translate": summary(old),
        "ratio_old_miss_to_first_visit": round(statistics.median(old) / statistics.median(first_times), 1),
        "target": "large-pool reset median <= 3x the small-pool median",
        "rss_mb": rss,
        "game_cache": {
            "capacity_mb": round(pddl_env.GAME_CACHE.capacity / 2**20, 1),
            "games_held": len(pddl_env.GAME_CACHE),
            "estimated_mb": round(pddl_env.GAME_CACHE.weight / 2**20, 1),
        },
        "prepare_s_not_timed": round(prepare_s, 1),
    }


def main() -> None:
    args = parse_args()
    recording = _harness.start("alfworld_reset_cache", args.smoke)
    if args.cache_mb is not None:
        pddl_env.GAME_CACHE.capacity = int(args.cache_mb * 2**20)

    small_env, large_env = ALFWorldEnv(split="train"), ALFWorldEnv(split="train")
    large = random.Random(args.seed).sample(large_env.task_ids, args.tasks)
    small = random.Random(args.seed + 1).sample(small_env.task_ids, args.small)
    rng = random.Random(args.seed + 2)
    if args.prepare_only:
        store_games(small_env, small + large)
        return
    prepare_s = prepare_in_child()
    rss = {"start": rss_mb()}

    for index, task in enumerate(small):  # warm-up: the small pool in memory
        small_env.reset(seed=index, options={"task": task})
    rss["after_small_warmup"] = rss_mb()

    small_times, first_times, steady_times, order = time_resets(
        small_env, large_env, small, large, rng, args.draws, rss
    )
    old = old_miss([large_env._game_path(task) for task in order[: args.old_misses]])

    result = summarize(args, small_times, first_times, steady_times, old, rss, prepare_s)
    print(json.dumps(result, indent=2))
    recording.finish(result)
    series = {
        f"small pool ({args.small} tasks)": small_times,
        f"large pool ({args.tasks}), first visits": first_times,
        f"large pool ({args.tasks}), steady state": steady_times,
    }
    plot(series, _harness.results_dir(args.smoke) / "alfworld_reset_cache.png")
    small_env.close()
    large_env.close()


if __name__ == "__main__":
    main()
