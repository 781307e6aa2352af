"""TextWorld reset time when tasks are drawn from a large pool, with the parsed-game cache bounded in MB vs 32 games.

For each game kind (Coin Collector level 30, Cooking difficulty 3), two envs run in one process
and their resets alternate so both see the same load: a **small pool** (10 random tasks) and a
**large pool** (``--tasks`` random tasks of another seed; the issue asks for 1,000; ``--cooking-tasks``
sets another size for Cooking, whose games take longer to generate). The large
pool is first visited once in random order (each reset parses a game this process has not
seen), then ``--draws`` uniform draws alternate with draws from the small pool. This runs twice,
one after the other in the same process: with the per-process cache of parsed games as it is now (bounded by
``$AGENTGYM_BUDGET_GAME_CACHE_MB``, default 128) and as it was (the last 32 games).

Games are generated before timing, in a child process (generation is not measured); the
measuring process starts with no game in memory. Reported per policy and kind: median reset wall
and thread-CPU time of each series, the ratio large / small (target: <= 1.5), resident memory
(RSS) after each phase, and the cache's games and estimated megabytes.

Usage::

    python benchmarks/textworld_reset_cache.py [--tasks 1000] [--cooking-tasks N] [--small 10] [--draws 1000] [--smoke]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _harness
import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.storage.game_cache_size import game_cache_bytes
from agentgym_budget.storage.memory_cache import MemoryCache
from agentgym_budget.tasks.textworld import engine

KINDS = {
    "CoinCollector l30": ("agentgym_budget/TextWorld-CoinCollector-v0", {"level": 30}),
    "Cooking d3": ("agentgym_budget/TextWorld-Cooking-v0", {"difficulty": 3}),
}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def pool_size(kind: str, args: argparse.Namespace) -> int:
    """Tasks in the large pool of ``kind``."""
    return args.cooking_tasks if kind.startswith("Cooking") and args.cooking_tasks else args.tasks


def pools(env: gym.Env, tasks: int, small: int) -> tuple[list[str], list[str]]:
    """The small pool (seed 1) and the large pool: the first ``tasks`` of a shuffle of the split (seed 2).

    Every large pool is a prefix of the same shuffle, so the games generated for a pool serve every smaller one.
    """
    ids = list(env.unwrapped.task_ids)
    if len(ids) < tasks:
        raise SystemExit(f"only {len(ids)} tasks in this split, --tasks {tasks} asked")
    return random.Random(1).sample(ids, small), random.Random(2).sample(ids, len(ids))[:tasks]


def timed_reset(env: gym.Env, task: str) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.thread_time()
    env.reset(seed=0, options={"task": task})
    return time.perf_counter() - start, time.thread_time() - cpu


def medians(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "n": len(samples),
        "median_ms": round(statistics.median(s[0] for s in samples) * 1e3, 3),
        "median_cpu_ms": round(statistics.median(s[1] for s in samples) * 1e3, 3),
    }


def measure(kind: str, policy: str, args: argparse.Namespace) -> dict:
    env_id, kwargs = KINDS[kind]
    engine._GAMES = (
        MemoryCache(game_cache_bytes(), weigh=lambda entry: entry[1]) if policy == "megabytes" else MemoryCache(32)
    )
    small_env, large_env = gym.make(env_id, **kwargs), gym.make(env_id, **kwargs)
    small, large = pools(small_env, pool_size(kind, args), args.small)
    rng = random.Random(3)
    first = [timed_reset(large_env, task) for task in random.Random(4).sample(large, len(large))]
    rss = {"after_first_visits": rss_mb()}
    series: dict[str, list[tuple[float, float]]] = {"small": [], "large": []}
    for _ in range(args.draws):
        series["small"].append(timed_reset(small_env, rng.choice(small)))
        series["large"].append(timed_reset(large_env, rng.choice(large)))
    rss["after_draws"] = rss_mb()
    row = {"tasks": len(large), "first_visits": medians(first)} | {
        name: medians(values) for name, values in series.items()
    }
    row["large_over_small"] = round(row["large"]["median_ms"] / row["small"]["median_ms"], 3)
    row["large_over_small_cpu"] = round(row["large"]["median_cpu_ms"] / row["small"]["median_cpu_ms"], 3)
    row["rss_mb"] = rss
    row["cache"] = {"games": len(engine._GAMES), "weight": engine._GAMES.weight, "hits": engine._GAMES.hits}
    small_env.close()
    large_env.close()
    print(
        f"{kind:18s} {policy:9s} small {row['small']['median_ms']:7.2f} ms  large {row['large']['median_ms']:7.2f} ms "
        f"(x{row['large_over_small']:.2f}, CPU x{row['large_over_small_cpu']:.2f})  RSS {rss}  cache {row['cache']}",
        flush=True,
    )
    return row


def prepare(args: argparse.Namespace) -> None:
    """Generate every game of both pools (child process: the measuring one starts with none in memory)."""
    for kind, (env_id, kwargs) in KINDS.items():
        env = gym.make(env_id, **kwargs)
        small, large = pools(env, pool_size(kind, args), args.small)
        for index, task in enumerate(small + large):
            env.reset(seed=0, options={"task": task})
            if index % 50 == 0:
                print(f"prepared {index}/{len(small) + len(large)} {kind}", flush=True)
        env.close()


def readme_rows(result: dict) -> list[list[str]]:
    """The README row of this benchmark, formatted from its ``result``."""
    cells = []
    for kind, policies in result["kinds"].items():
        new, old = policies["megabytes"], policies["32 games"]
        cells.append(
            f"{kind} ({new.get('tasks', result['tasks']):,} tasks): **{new['large_over_small_cpu']:.2f}x** in CPU time ({new['large']['median_cpu_ms']:.1f} vs "
            f"{new['small']['median_cpu_ms']:.1f} ms; wall {new['large_over_small']:.2f}x), 32 games: "
            f"{old['large_over_small_cpu']:.2f}x; RSS {new['rss_mb']['after_first_visits']:.0f} -> "
            f"{new['rss_mb']['after_draws']:.0f} MB, {new['cache']['games']} games cached"
        )
    return [
        [
            f"TextWorld reset over up to {result['tasks']:,} random tasks vs over {result['small']} (games generated "
            f"beforehand; each first loaded once, then {result['draws']:,} draws), parsed-game cache bounded in MB "
            "vs the former 32 games",
            "; ".join(cells),
            "<= 1.5x, RSS flat",
            "`python benchmarks/textworld_reset_cache.py`",
        ]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=1000, help="tasks in the large pool")
    parser.add_argument(
        "--cooking-tasks", type=int, default=None, help="tasks in Cooking's large pool (default: --tasks)"
    )
    parser.add_argument("--small", type=int, default=10, help="tasks in the small pool")
    parser.add_argument("--draws", type=int, default=1000, help="draws from each pool after the first visits")
    parser.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.cooking_tasks, args.small, args.draws = 6, None, 2, 6
    if args.prepare_only:
        prepare(args)
        return
    recording = _harness.start("textworld_reset_cache", args.smoke)
    child = [sys.executable, __file__, "--prepare-only", *sys.argv[1:]]
    subprocess.run(child, check=True)
    result: dict = {
        "tasks": args.tasks,
        "cooking_tasks": args.cooking_tasks or args.tasks,
        "small": args.small,
        "draws": args.draws,
        "kinds": {},
    }
    for kind in KINDS:
        result["kinds"][kind] = {policy: measure(kind, policy, args) for policy in ("32 games", "megabytes")}
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
