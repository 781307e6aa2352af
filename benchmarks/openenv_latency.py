"""OpenEnv step latency vs in-process, and sessions per server process, side by side in one run.

An ``agentgym-budget serve`` server runs in its own process (as users run it); the same
``EpisodeSession`` configuration runs in this process. Both play the same episodes with the same
replies (the expert's commands written as ``Action: <command>`` replies, parsed by the server), in
alternating blocks so machine noise hits both alike. Target: median WebSocket step <= 2x the
in-process step. Then ``k`` client sessions (threads, one connection each) play at once for ``k`` in
``--sessions``: aggregate steps/s, median step latency and the server's memory.

Usage::

    python benchmarks/openenv_latency.py [--env TextWorld-CoinCollector-v0] [--env-args level=10]
        [--episodes 30] [--sessions 1,2,4,8,16]
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import _harness

from agentgym_budget.integrations.openenv import RemoteSession
from agentgym_budget.integrations.session import EpisodeSession
from agentgym_budget.integrations.session_config import SessionConfig

RESULTS = Path(__file__).parent / "results"


def start_server(args: argparse.Namespace, max_sessions: int) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "agentgym_budget.cli", "serve", args.env, "--port", "0", "--budget", "100"]
    command += ["--max-sessions", str(max_sessions)]
    if args.env_args:
        command += ["--env-args", args.env_args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    while True:
        line = lines.get(timeout=300)
        if "listening on " in line:
            return process, line.rsplit("listening on ", 1)[1].strip()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def expert_plans(config: SessionConfig, seeds: range) -> dict[int, list[str]]:
    """The expert's plan of every seed's episode (computed once, outside the timing)."""
    planner = EpisodeSession(SessionConfig(config.env_id, env_kwargs=config.env_kwargs, info_keys=("expert_plan",)))
    try:
        return {seed: list(planner.reset(seed=seed).info["expert_plan"]) for seed in seeds}
    finally:
        planner.close()


def play(env: object, seed: int, plans: dict[int, list[str]]) -> list[float]:
    """One expert episode (replies ``Action: <command>``); the time of every step."""
    env.reset(seed=seed)
    times = []
    for command in plans[seed]:
        start = time.perf_counter()
        env.step(f"Action: {command}")
        times.append(time.perf_counter() - start)
    return times


def parse_args() -> argparse.Namespace:
    """The command line's arguments, with the smoke run's sizes applied under ``--smoke``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--env", default="TextWorld-CoinCollector-v0")
    parser.add_argument("--env-args", default="level=10")
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--sessions", default="1,2,4,8,16")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.sessions = 2, "1,2"
    return args


def compare_steps(
    args: argparse.Namespace, local: EpisodeSession, url: str, seeds: range, plans: dict[int, list[str]]
) -> tuple[float, float]:
    """Median step in-process and over the server's WebSocket, episodes alternating between them; printed."""
    remote = RemoteSession(url)
    for seed in seeds:  # warm both: engines loaded
        play(local, seed, plans), play(remote, seed, plans)
    local_times: list[float] = []
    remote_times: list[float] = []
    for episode in range(args.episodes):
        first, second = (local_times, local), (remote_times, remote)
        for times, env in (first, second) if episode % 2 == 0 else (second, first):
            times += play(env, seeds[episode % len(seeds)], plans)
    remote.close()
    local_median, remote_median = statistics.median(local_times), statistics.median(remote_times)
    print(f"{args.env}({args.env_args}): {len(local_times)} steps each, median step")
    print(f"  in-process {local_median * 1e3:.2f} ms   OpenEnv WebSocket {remote_median * 1e3:.2f} ms")
    print(f"  ratio {remote_median / local_median:.2f} (target <= 2)")
    return local_median, remote_median


def measure_sessions(url: str, k: int, seeds: range, plans: dict[int, list[str]], server_pid: int) -> dict:
    """``k`` client sessions playing at once: steps/s, median step and the server's memory; printed."""
    barrier = threading.Barrier(k)
    per_session: list[list[float]] = [[] for _ in range(k)]
    spans: list[tuple[float, float]] = []

    def client(index: int) -> None:
        with RemoteSession(url) as env:
            play(env, seeds[index % len(seeds)], plans)
            barrier.wait()
            began = time.perf_counter()
            for episode in range(4):
                per_session[index] += play(env, seeds[(index + episode) % len(seeds)], plans)
            spans.append((began, time.perf_counter()))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(k)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = max(end for _, end in spans) - min(begin for begin, _ in spans)
    steps = [t for times in per_session for t in times]
    row = {
        "sessions": k,
        "steps_per_s": len(steps) / wall,
        "median_step_ms": statistics.median(steps) * 1e3,
        "server_rss_mb": rss_mb(server_pid),
    }
    print(
        f"  {k:2d} sessions: {row['steps_per_s']:7.1f} steps/s, median step {row['median_step_ms']:.2f} ms, "
        f"server RSS {row['server_rss_mb']:.0f} MB"
    )
    return row


def main() -> None:
    args = parse_args()
    recording = _harness.start("openenv_latency", args.smoke)
    counts = [int(k) for k in args.sessions.split(",")]
    config = SessionConfig(args.env, env_kwargs=args.env_args, max_turns=100)
    seeds = range(2 if args.smoke else 8)  # every game generated before any timing
    plans = expert_plans(config, seeds)
    local = EpisodeSession(config)
    process, url = start_server(args, max(counts))
    try:
        local_median, remote_median = compare_steps(args, local, url, seeds, plans)
        concurrency = [measure_sessions(url, k, seeds, plans, process.pid) for k in counts]
    finally:
        process.terminate()
        process.wait(timeout=60)
        local.close()
    recording.finish(
        {
            "env": args.env,
            "env_args": args.env_args,
            "local_median_ms": local_median * 1e3,
            "openenv_median_ms": remote_median * 1e3,
            "ratio": remote_median / local_median,
            "concurrency": concurrency,
            "cpus": os.cpu_count(),
        }
    )


if __name__ == "__main__":
    main()
