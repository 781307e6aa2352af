"""LLM concurrency of one Pass@(K,T) worker: steps per second against a fake OpenAI-compatible server.

A fake ``/v1/chat/completions`` server runs in its own process on loopback (asyncio, HTTP/1.1
keep-alive, every answer after ``--latency`` seconds; the reply is an admissible action listed in the
prompt, picked with the request's ``seed``, so episodes are deterministic). The OpenAI agent
(``openai:bench``, admissible actions shown, as by default) plays Pass@(K,T) episodes of the main
job's env (TextWorld Coin Collector level 110) through ``run_passkt`` with **one worker** (in this
process), at each ``--concurrency``; a run at concurrency ``c`` plays ``c / 2`` tasks (at least 1)
of ``--n`` samples at budget ``--budget``, so that ``c`` episodes of many tasks are in flight at once.

Reported per concurrency: env steps per second of the whole run (steps of the logged episodes over
the wall time of ``run_passkt``, env building included), the ideal ``c / latency``, and the ratio
achieved / min(ideal, env rate), where the env rate is the worker's CPU-bound step rate measured in
the same run: the recorded episodes of the largest concurrency replayed on the same env stack (reset
with the same seed, the same actions) with no agent and no HTTP. Target: >= 70% at concurrency 64.
Also reported: the worker's CPU ms per step (all its threads) and the CPU ratio env CPU ms per step /
worker CPU ms per step, the share of the worker's CPU spent in the env: the ratio a worker with a
core of its own reaches when the env is the bound (on a shared machine the wall-clock ratio also
depends on the CPU share the worker gets). Two last rows run the largest concurrency with other
worker designs for comparison: everything inline on the event loop (no env thread: resets too), and
steps handed to the env thread as well (the design before steps moved to the loop). The records of
the tasks the runs share are checked to be identical (timing aside): concurrency changes no trajectory.

Each figure is the median of ``--rounds`` rounds (3); a round plays every row and then measures its
own env rate, so rows and env rates are interleaved against the machine's load, and every round's
ratio is printed beside the median.

The tasks are prepared (games generated) before any timing, and an untimed warm-up run at the
largest concurrency (2 turns an episode) builds the worker's pooled env stacks first: every row then
plays on the same warm worker, as the episodes of a long run do (building 64 TextWorld stacks takes
seconds, which only the first row would otherwise pay).

Results go to ``benchmarks/results/llm_concurrency.json``.

Usage::

    python benchmarks/llm_concurrency.py [--concurrency 1,8,64] [--latency 0.05] [--n 8] [--budget 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import _harness

from agentgym_budget.eval.passkt import worker as passkt_worker
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import run_passkt
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.runner.store import read_jsonl

RESULTS = Path(__file__).parent / "results"
ENV = ("TextWorld-CoinCollector-v0", "level=110")
COMPARED_DESIGNS = (
    ("env inline", "_env_threads", lambda: None),  # no env thread: resets on the event loop too
    ("steps in thread", "STEPS_IN_ENV_THREAD", True),  # steps handed to the env thread as well
)


def _reply(payload: dict[str, Any]) -> str:
    content = payload["messages"][-1]["content"]
    actions = ["look"]
    for line in content.splitlines():
        if line.startswith("Admissible actions:"):
            actions = [a.strip() for a in line.split(":", 1)[1].split("|") if a.strip()] or actions
    return "Action: " + random.Random(payload.get("seed", 0)).choice(actions)


async def _serve(latency: float, port_pipe: Any) -> None:
    counts = {"connections": 0, "requests": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        counts["connections"] += 1
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    return
                headers = {}
                while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                if request_line.startswith(b"GET /stats"):
                    data = json.dumps(counts).encode()
                else:
                    counts["requests"] += 1
                    await asyncio.sleep(latency)
                    payload = json.loads(body)
                    message = {"role": "assistant", "content": _reply(payload)}
                    answer = {
                        "object": "chat.completion",
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": len(body) // 4, "completion_tokens": 8},
                    }
                    data = json.dumps(answer).encode()
                head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                writer.write(head.encode() + data)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
    port_pipe.send(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def _server_main(latency: float, port_pipe: Any) -> None:
    asyncio.run(_serve(latency, port_pipe))


def server_stats(port: int) -> dict[str, int]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as answer:
        return json.load(answer)


def prepare(ref: EnvRef, task_ids: list[str]) -> None:
    env = ref.make({"admissible_actions"})
    try:
        for task in task_ids:
            env.reset(seed=0, options={"task": task, "max_turns": 1})
    finally:
        env.close()


def run(ref: EnvRef, port: int, concurrency: int, tasks: list[str], n: int, budget: int, out: Path) -> dict:
    agent = f"openai:bench:base_url=http://127.0.0.1:{port}/v1,concurrency={concurrency},retries=0"
    config = PassKTConfig(
        ref, [agent], ks=(1,), budgets=(budget,), samples=n, tasks=tuple(tasks), workers=1, resamples=100
    )
    began, cpu = time.perf_counter(), time.process_time()
    run_passkt(config, out, progress=False, plots=False)
    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
    records = read_jsonl(out / "episodes.jsonl")
    steps = sum(record["turns"] for record in records)
    return {
        "concurrency": concurrency,
        "tasks": len(tasks),
        "episodes": len(records),
        "steps": steps,
        "seconds": round(elapsed, 3),
        "steps_per_s": round(steps / elapsed, 1),
        "cpu_ms_per_step": round(1000 * cpu / steps, 2),
        "records": records,
    }


def env_rate(ref: EnvRef, records: list[dict]) -> tuple[float, float]:
    """Steps per second of the env stack alone replaying ``records`` (reset + recorded actions), and CPU ms per step."""
    env = ref.make({"admissible_actions"})
    try:
        prepare(ref, sorted({r["task_id"] for r in records}))
        steps, began, cpu = 0, time.perf_counter(), time.process_time()
        for record in records:
            env.reset(seed=record["seed"], options={"task": record["task_id"], "max_turns": record["budget"]})
            for action in record["actions"]:
                _, _, _terminated, _truncated, info = env.step(action)
                steps += 1
            assert bool(info["won"]) == record["won"], "a replay diverged from its record"
        return steps / (time.perf_counter() - began), 1000 * (time.process_time() - cpu) / steps
    finally:
        env.close()


def stable(records: list[dict]) -> dict:
    return {
        (r["task_id"], r["budget"], r["sample"], r["seed"]): {
            k: v for k, v in r.items() if k not in ("elapsed_s", "agent")
        }
        for r in records
    }


def play_round(ref: EnvRef, port: int, levels: list[int], all_tasks: list[str], args: Any, scratch: Path) -> list[dict]:
    """One round: every concurrency, then the compared designs at the largest; each row with the round's env rate."""
    rows = []
    largest = all_tasks[: max(1, levels[-1] // 2)]
    for level in levels:
        tasks = all_tasks[: max(1, level // 2)]
        rows.append(run(ref, port, level, tasks, args.n, args.budget, scratch / f"c{level}"))
    for label, name, value in COMPARED_DESIGNS:
        original = getattr(passkt_worker, name)
        setattr(passkt_worker, name, value)
        try:
            row = run(ref, port, levels[-1], largest, args.n, args.budget, scratch / name)
        finally:
            setattr(passkt_worker, name, original)
        row["concurrency"] = f"{levels[-1]} ({label})"
        rows.append(row)
    rate, env_cpu = env_rate(ref, rows[len(levels) - 1]["records"])
    for row in rows:
        level = int(str(row["concurrency"]).split()[0])
        bound = min(level / args.latency, rate)
        row.update(ideal=level / args.latency, env_rate=rate, bound=bound, ratio=row["steps_per_s"] / bound)
        row["cpu_ratio"] = env_cpu / row["cpu_ms_per_step"]
    return rows


def parse_args() -> argparse.Namespace:
    """The command line's arguments, with the smoke run's sizes applied under ``--smoke``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", default="1,8,64")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--n", type=int, default=8, help="samples per task")
    parser.add_argument("--budget", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="rounds (medians are reported)")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.concurrency, args.n, args.budget, args.rounds = "1,4", 2, 5, 1
    return args


def start_fake_server(latency: float) -> tuple[multiprocessing.process.BaseProcess, int]:
    """The fake OpenAI-compatible server started in its own process, and the port it listens on."""
    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe()
    server = context.Process(target=_server_main, args=(latency, there), daemon=True)
    server.start()
    return server, here.recv()


def play_rounds(ref: EnvRef, port: int, levels: list[int], all_tasks: list[str], args: Any) -> list[list[dict]]:
    """An untimed warm-up run at the largest concurrency, then the rows of every round (ratios printed)."""
    rounds = []
    with tempfile.TemporaryDirectory() as scratch:
        largest = all_tasks[: max(1, levels[-1] // 2)]
        run(ref, port, levels[-1], largest, 2, 2, Path(scratch) / "warm-up")
        for index in range(args.rounds):
            rounds.append(play_round(ref, port, levels, all_tasks, args, Path(scratch) / f"round{index}"))
            print(f"round {index + 1}/{args.rounds}: ratios " + ", ".join(f"{r['ratio']:.1%}" for r in rounds[-1]))
    return rounds


def records_identical(rounds: list[list[dict]], reference_position: int) -> bool:
    """Whether every row's records equal those of the first round's row at ``reference_position`` (shared tasks)."""
    every_row = [row for rows in rounds for row in rows]
    reference = stable(rounds[0][reference_position]["records"])
    return all(all(reference[key] == value for key, value in stable(row["records"]).items()) for row in every_row)


def table_of_medians(rounds: list[list[dict]]) -> list[dict]:
    """Each row's medians over the rounds, printed as a table under its header."""

    def median(position: int, key: str) -> float:
        return statistics.median(rows[position][key] for rows in rounds)

    print(
        f"{'concurrency':>20} {'steps/s':>9} {'ideal':>8} {'min(ideal,env)':>15} {'ratio':>7} "
        f"{'ratios of the rounds':>22} {'CPU ms/step':>12} {'CPU ratio':>10}"
    )
    table = []
    for position, row in enumerate(rounds[0]):
        entry = {
            "concurrency": row["concurrency"],
            "tasks": row["tasks"],
            "steps": row["steps"],
            **{key: round(median(position, key), 3) for key in ("steps_per_s", "ideal", "bound", "ratio")},
            "round_ratios": [round(rows[position]["ratio"], 3) for rows in rounds],
            "cpu_ms_per_step": round(median(position, "cpu_ms_per_step"), 2),
            "cpu_ratio": round(median(position, "cpu_ratio"), 3),
        }
        table.append(entry)
        print(
            f"{entry['concurrency']!s:>20} {entry['steps_per_s']:>9.1f} {entry['ideal']:>8.1f} {entry['bound']:>15.1f} "
            f"{entry['ratio']:>7.1%} {' / '.join(f'{r:.0%}' for r in entry['round_ratios']):>22} "
            f"{entry['cpu_ms_per_step']:>12.2f} {entry['cpu_ratio']:>10.1%}"
        )
    return table


def summarize(ref: EnvRef, args: Any, stats: dict[str, int], rounds: list[list[dict]], identical: bool) -> dict:
    """Print the run's conditions, the env rate and the table of medians; the summary written to the results."""
    print(
        f"\n{ref.label}, 1 worker, latency {args.latency * 1000:.0f} ms, n={args.n}, T={args.budget}, "
        f"server: {stats['requests']} requests on {stats['connections']} connections (keep-alive); "
        f"medians of {args.rounds} rounds"
    )
    rate = statistics.median(rows[0]["env_rate"] for rows in rounds)
    print(f"worker's CPU-bound env step rate (replay, same rounds): {rate:.1f} steps/s\n")
    table = table_of_medians(rounds)
    print(
        f"\nrecords identical across concurrencies and rounds (shared tasks, timing aside): {'yes' if identical else 'NO'}"
    )
    return {
        "env": ref.label,
        "latency_s": args.latency,
        "samples": args.n,
        "budget": args.budget,
        "rounds": args.rounds,
        "env_steps_per_s": round(rate, 1),
        "server": stats,
        "records_identical": identical,
        "rows": table,
    }


def main() -> None:
    args = parse_args()
    recording = _harness.start("llm_concurrency", args.smoke)
    levels = sorted(int(c) for c in args.concurrency.split(","))
    ref = EnvRef.parse(*ENV)
    all_tasks = list(ref.task_ids()[: max(1, max(levels) // 2)])
    print(f"preparing {len(all_tasks)} tasks of {ref.label} ...", flush=True)
    prepare(ref, all_tasks)

    server, port = start_fake_server(args.latency)
    try:
        rounds = play_rounds(ref, port, levels, all_tasks, args)
        stats = server_stats(port)
    finally:
        server.terminate()
        server.join()
    identical = records_identical(rounds, len(levels) - 1)
    recording.finish(summarize(ref, args, stats, rounds, identical))


if __name__ == "__main__":
    main()
