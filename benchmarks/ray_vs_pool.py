"""Pass@(K,T) throughput on Ray actors vs the local process pool: the same grid, side by side in one run.

The grid is the main job's environment and agents (TextWorld Coin Collector level 110, the
recovering and the non-recovering noisy expert) over ``--tasks`` tasks, T in ``--budgets``, ``--n``
samples, played with ``--workers`` workers on each backend:

* **local**: ``run_passkt(config)``: ``workers`` spawned processes (their start included);
* **ray**: ``run_passkt(config, backend=RayBackend())`` on a local cluster of ``workers`` CPUs started
  once before the rounds (its start is reported apart: a command started with ``--backend ray``
  pays it once per run); ``workers`` actors (their start included).

A second measure isolates the executors' own cost: jobs that only emit small records (``--records``
records of about 1 KB in 20 jobs, no env), delivered to the driver by each backend.

Rounds alternate local, ray, local, ray, ... so that a change of load on a shared machine hits both;
each run writes a fresh directory and plays the whole grid. Reported: episodes per second of each run,
the median of each backend, their ratio (ray / local), the ratio including the cluster's start, and a
check that both backends wrote the same records (timing fields aside). Ray runs its workers at
niceness 15 by default (``RAY_worker_niceness``), so on a machine shared with other jobs its
workers yield the CPU to them; ``--worker-niceness 0`` runs them at the pool's priority.

Results go to ``benchmarks/results/ray_vs_pool.json``.

Usage::

    python benchmarks/ray_vs_pool.py [--tasks 20] [--n 4] [--budgets 10,20,30,40] [--workers 2] [--rounds 2]
                                     [--worker-niceness N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import _harness

from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import episode_key, run_passkt
from agentgym_budget.runner.ray_executor import RayBackend
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.runner.store import read_jsonl

RESULTS = Path(__file__).parent / "results"
ENV = EnvRef.parse("TextWorld-CoinCollector-v0", "level=110")
AGENTS = ("noisy-expert-recover", "noisy-expert-norecover")


def _emit_records(job: int, emit) -> None:
    for sample in range(job):
        emit({"sample": sample, "actions": ["go east"] * 40, "rewards": [0.0] * 40, "agent_stats": {}})


def _records_per_second(count: int, workers: int, backend: RayBackend | None) -> float:
    from agentgym_budget.runner.pool import run_jobs

    received = []
    began = time.perf_counter()
    run_jobs(_emit_records, [count // 20] * 20, workers=workers, on_result=received.append, backend=backend)
    seconds = time.perf_counter() - began
    assert len(received) == count // 20 * 20
    return len(received) / seconds


def _stable(directory: Path) -> list[str]:
    records = [{k: v for k, v in r.items() if k != "elapsed_s"} for r in read_jsonl(directory / "episodes.jsonl")]
    return [json.dumps(r, sort_keys=True) for r in sorted(records, key=lambda r: repr(episode_key(r)))]


def parse_args() -> argparse.Namespace:
    """The command line's arguments, with the smoke run's sizes applied under ``--smoke``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--budgets", default="10,20,30,40")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--records", type=int, default=20000, help="records of the executor-only measure")
    parser.add_argument("--worker-niceness", type=int, default=None, help="RAY_worker_niceness (Ray's default: 15)")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.n, args.budgets, args.workers, args.rounds, args.records = 2, 1, "5", 1, 1, 200
    return args


def start_ray_cluster(workers: int) -> float:
    """Start a local Ray cluster of ``workers`` CPUs, print and return the seconds its start took."""
    import ray

    began = time.perf_counter()
    ray.init(
        address="local",
        num_cpus=workers,
        include_dashboard=False,
        logging_level="WARNING",
        _temp_dir=tempfile.mkdtemp(prefix="ray-"),  # its own: /tmp/ray may belong to another user
    )
    cluster_start = time.perf_counter() - began
    print(f"local Ray cluster ({workers} CPUs) started in {cluster_start:.1f} s")
    return cluster_start


def measure_delivery(records: int, workers: int, rounds: int) -> dict[str, list[float]]:
    """Records per second each executor delivers to the driver, per round; the medians printed."""
    delivery: dict[str, list[float]] = {"local": [], "ray": []}
    for _ in range(rounds):
        for name, backend in (("local", None), ("ray", RayBackend())):
            delivery[name].append(_records_per_second(records, workers, backend))
    print(
        "executors alone (records of ~1 KB delivered to the driver, jobs that do nothing else): "
        + ", ".join(f"{name} {statistics.median(values):,.0f} records/s" for name, values in delivery.items())
    )
    return delivery


def play_rounds(config: PassKTConfig, episodes: int, rounds: int, root: Path) -> dict[str, list[float]]:
    """Seconds of each backend's run of the whole grid, rounds alternating local and ray."""
    runs: dict[str, list[float]] = {"local": [], "ray": []}
    for round_ in range(rounds):
        for name, backend in (("local", None), ("ray", RayBackend())):
            out = root / f"{name}-{round_}"
            began = time.perf_counter()
            result = run_passkt(config, out, progress=False, plots=False, backend=backend)
            seconds = time.perf_counter() - began
            assert result.played == episodes, (result.played, episodes)
            runs[name].append(seconds)
            print(f"round {round_ + 1} {name:5s}: {seconds:6.1f} s, {episodes / seconds:6.1f} episodes/s")
    return runs


def summarize(
    args: argparse.Namespace,
    budgets: tuple[int, ...],
    episodes: int,
    cluster_start: float,
    runs: dict[str, list[float]],
    delivery: dict[str, list[float]],
    identical: bool,
) -> dict:
    """Print the medians and ratios of both backends; the report written to the results."""
    local, on_ray = statistics.median(runs["local"]), statistics.median(runs["ray"])
    ratio = local / on_ray
    ratio_with_start = local / (on_ray + cluster_start)
    load = os.getloadavg()[0]
    print(
        f"\nmedian: local {episodes / local:.1f} episodes/s, ray {episodes / on_ray:.1f} episodes/s; "
        f"throughput ratio ray/local {ratio:.2f} ({ratio_with_start:.2f} counting the cluster's start); "
        f"same records: {identical}; load average {load:.1f}"
    )
    return {
        "grid": {"env": ENV.label, "agents": list(AGENTS), "tasks": args.tasks, "budgets": list(budgets), "n": args.n},
        "episodes": episodes,
        "workers": args.workers,
        "worker_niceness": args.worker_niceness,
        "cluster_start_s": round(cluster_start, 2),
        "seconds": {name: [round(s, 2) for s in values] for name, values in runs.items()},
        "episodes_per_s": {"local": round(episodes / local, 2), "ray": round(episodes / on_ray, 2)},
        "ratio_ray_over_local": round(ratio, 3),
        "ratio_with_cluster_start": round(ratio_with_start, 3),
        "identical_records": identical,
        "executor_records_per_s": {name: round(statistics.median(values)) for name, values in delivery.items()},
        "load_average": round(load, 2),
    }


def main() -> None:
    args = parse_args()
    recording = _harness.start("ray_vs_pool", args.smoke)
    if args.worker_niceness is not None:
        os.environ["RAY_worker_niceness"] = str(args.worker_niceness)  # noqa: SIM112  (Ray reads this exact name)
    budgets = tuple(int(b) for b in args.budgets.split(","))
    config = PassKTConfig(
        ENV, AGENTS, ks=(1,), budgets=budgets, samples=args.n, tasks=args.tasks, workers=args.workers, seed=0
    )
    episodes = len(config.resolve_tasks()) * len(AGENTS) * len(budgets) * args.n
    print(
        f"grid: {ENV.label}, {len(AGENTS)} agents, {args.tasks} tasks, T={list(budgets)}, n={args.n}: {episodes} episodes"
    )
    warm = PassKTConfig(ENV, AGENTS[:1], ks=(1,), budgets=(1,), samples=1, tasks=args.tasks, workers=1)

    import ray

    root = Path(tempfile.mkdtemp(prefix="ray_vs_pool-"))
    run_passkt(warm, root / "warm", progress=False, plots=False)  # games generated and cached before timing
    cluster_start = start_ray_cluster(args.workers)
    try:
        delivery = measure_delivery(args.records, args.workers, args.rounds)
        runs = play_rounds(config, episodes, args.rounds, root)
    finally:
        ray.shutdown()
    identical = all(_stable(root / f"ray-{r}") == _stable(root / "local-0") for r in range(args.rounds))
    recording.finish(summarize(args, budgets, episodes, cluster_start, runs, delivery, identical))


if __name__ == "__main__":
    main()
