"""Speed and memory of the WebShop family on a large generated catalog (default 100k products).

Measures, in one process:

* catalog generation time (cold, into a fresh cache folder), warm load time and the
  resident memory the loaded catalog adds;
* cold BM25 index build time (into a fresh cache folder), its size on disk, and the warm
  load time from the cache;
* search latency (``SearchIndex.search``) over the test instructions and product titles;
* env step latency: episodes mixing the expert's actions with random admissible clicks and
  searches, reported for all steps, clicks only and searches only.

Goals: step median < 1 ms, search median < 5 ms. Prints the figures and writes
``benchmarks/results/webshop_speed.json`` (git-ignored).

Usage::

    python benchmarks/webshop_speed.py [--num-products 100000] [--episodes 300]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import _harness

from agentgym_budget.tasks.webshop.catalog import Catalog
from agentgym_budget.tasks.webshop.env import WebShopEnvBase
from agentgym_budget.tasks.webshop.expert import strip_price
from agentgym_budget.tasks.webshop.generator import cached_catalog
from agentgym_budget.tasks.webshop.search import SearchIndex
from agentgym_budget.tasks.webshop.session import SEARCH_TEMPLATE

RESULTS = Path(__file__).parent / "results"


def rss_mb() -> float:
    """Current resident set size of this process, in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "count": len(ordered),
        "median_ms": statistics.median(ordered) * 1e3,
        "p90_ms": ordered[int(0.9 * (len(ordered) - 1))] * 1e3,
        "max_ms": ordered[-1] * 1e3,
    }


def play(timed: WebShopEnvBase, guide: WebShopEnvBase, episodes: int, seed: int) -> dict[str, list[float]]:
    """Time ``timed.step`` on episodes mixing the expert's actions (from ``guide``, which has the
    ``expert_plan`` key and follows the same actions) with random admissible actions and searches."""
    rng = random.Random(seed)
    times: dict[str, list[float]] = {"all": [], "click": [], "search": []}
    for episode in range(episodes):
        _, info = guide.reset(seed=seed + episode)
        if timed is not guide:
            timed.reset(seed=seed + episode)
        for _ in range(40):
            plan = info["expert_plan"]
            if plan and rng.random() < 0.6:
                action = plan[0]
            else:
                action = rng.choice(info["admissible_actions"] or [SEARCH_TEMPLATE])
                if action == SEARCH_TEMPLATE:
                    words = strip_price(info["goal"]).split()
                    action = f"search[{' '.join(rng.sample(words, min(4, len(words))))}]"
            start = time.perf_counter()
            _, _, terminated, _, step_info = timed.step(action)
            elapsed = time.perf_counter() - start
            info = step_info if timed is guide else guide.step(action)[-1]
            times["all"].append(elapsed)
            times["search" if action.startswith("search[") else "click"].append(elapsed)
            if terminated:
                break
    return times


def parse_args() -> argparse.Namespace:
    """The command line's arguments, with the smoke run's sizes applied under ``--smoke``."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-products", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0, help="catalog seed")
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--queries", type=int, default=500, help="search queries timed")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.num_products, args.episodes, args.queries = 2_000, 20, 20
    return args


def load_catalog_and_index(args: argparse.Namespace, scratch: Path) -> tuple[Catalog, SearchIndex, dict[str, float]]:
    """The catalog and its search index built in ``scratch``; their times to build and load, and memory added."""
    start = time.perf_counter()
    cached_catalog(args.num_products, args.seed, root=scratch)
    generate_s = time.perf_counter() - start
    rss_start = rss_mb()
    start = time.perf_counter()
    catalog = cached_catalog(args.num_products, args.seed, root=scratch)
    catalog_load_s = time.perf_counter() - start
    rss_catalog = rss_mb()
    start = time.perf_counter()
    index = SearchIndex.build(catalog, root=scratch)
    build_s = time.perf_counter() - start
    index_bytes = sum(p.stat().st_size for p in index.folder.iterdir())
    start = time.perf_counter()
    index = SearchIndex(index.folder)
    load_s = time.perf_counter() - start
    rss_index = rss_mb()
    figures = {
        "catalog_generation_s": generate_s,
        "catalog_load_warm_s": catalog_load_s,
        "catalog_rss_mb": rss_catalog - rss_start,
        "index_build_cold_s": build_s,
        "index_load_warm_s": load_s,
        "index_disk_mb": index_bytes / 2**20,
        "index_rss_mb": rss_index - rss_catalog,
    }
    return catalog, index, figures


def time_searches(catalog: Catalog, index: SearchIndex, count: int) -> list[float]:
    """Seconds of ``count`` searches: test instructions (price stripped), then product titles."""
    queries = [strip_price(g.instruction) for g in catalog.goals[: count // 2]]
    queries += [catalog.products[i].title for i in range(0, len(catalog), max(1, len(catalog) // (count // 2)))]
    search_times = []
    for query in queries[:count]:
        start = time.perf_counter()
        index.search(query)
        search_times.append(time.perf_counter() - start)
    return search_times


def print_report(report: dict) -> None:
    """Print the figures of ``report`` against the goals."""
    print(f"WebShop speed, {report['num_products']:,} products ({report['num_goals']:,} instructions)")
    print(f"  catalog generation   {report['catalog_generation_s']:7.2f} s   (first time on a machine, then cached)")
    print(f"  catalog load (warm)  {report['catalog_load_warm_s']:7.2f} s   +{report['catalog_rss_mb']:.0f} MiB RSS")
    print(
        f"  index build (cold)   {report['index_build_cold_s']:7.2f} s   "
        f"{report['index_disk_mb']:.0f} MiB on disk (memory-mapped)"
    )
    print(
        f"  index load (warm)    {report['index_load_warm_s'] * 1e3:7.1f} ms  "
        f"(RSS +{report['index_rss_mb']:.0f} MiB over build + load)"
    )
    print(f"  peak RSS             {report['peak_rss_mb']:7.0f} MiB")
    s = report["search"]
    print(f"  search               median {s['median_ms']:.2f} ms  p90 {s['p90_ms']:.2f} ms  (goal < 5 ms)")
    for kind, row in report["step"].items():
        print(
            f"  step ({kind:6})        median {row['median_ms']:.3f} ms  p90 {row['p90_ms']:.3f} ms  n={row['count']}"
        )
    row = report["step_with_expert_info"]["all"]
    print(
        f"  step with expert     median {row['median_ms']:.3f} ms  p90 {row['p90_ms']:.3f} ms  (goal for 'all': < 1 ms)"
    )


def main() -> None:
    args = parse_args()
    recording = _harness.start("webshop_speed", args.smoke)

    scratch = Path(tempfile.mkdtemp(prefix="webshop-bench-"))
    try:
        catalog, index, loading = load_catalog_and_index(args, scratch)
        search_times = time_searches(catalog, index, args.queries)
        guide = WebShopEnvBase(catalog, index, split="test", info_keys={"expert_plan"})
        plain = play(WebShopEnvBase(catalog, index, split="test"), guide, args.episodes, args.seed)
        steps = play(guide, guide, args.episodes // 3, args.seed)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    report = {
        "num_products": args.num_products,
        "num_goals": len(catalog.goals),
        **loading,
        "rss_mb": rss_mb(),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "search": summary(search_times),
        "step_with_expert_info": {kind: summary(times) for kind, times in steps.items() if times},
        "step": {kind: summary(times) for kind, times in plain.items() if times},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    print_report(report)
    recording.finish(report)


if __name__ == "__main__":
    main()
