"""The native vector env (``TextVectorEnv``): memory of 1,024 TextWorld envs, step cost vs separate envs, threads.

Three measurements, each side by side in one run:

* **memory**: resident memory (RSS) of one process holding ``--envs`` (1,024) TextWorld Coin
  Collector (level 30) envs, reset and stepped twice, as one ``TextVectorEnv`` and as ``--envs``
  separate ``gym.make`` envs (each layout in a fresh child process). Two task layouts: every sub-env
  on its own game where possible (the train split's prepared games, up to 1,000, in turn) and GRPO
  groups (64 games x 16 sub-envs). Target: <= 2.5 GiB.
* **step cost**: CPU time per step of a ``TextVectorEnv`` of ``--compare-envs`` sub-envs vs the same
  number of separate envs stepped in a Python loop, in alternating rounds in this process (same
  games, same actions). Target: steps per CPU-second within 10% of the separate envs.
* **threads**: wall and CPU time of ``threads=1`` vs ``threads=2`` for each engine family
  (TextWorld, ALFWorld, WebShop), alternating rounds, same seeds and actions; the batches of both
  runs must be equal (checked). A wall speedup above 1 means the engine releases the GIL for part of a step.

Games are generated before timing (in a child process). Usage::

    python benchmarks/vector_env.py [--envs 1024] [--compare-envs 64] [--rounds 6] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import _harness
import gymnasium as gym

import agentgym_budget
from agentgym_budget.vector.text_vector_env import TextVectorEnv

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"
MOVES = ("go north", "go east", "go south", "go west", "look")
FAMILIES = {
    "TextWorld (Coin Collector l30)": (COIN, {"level": 30}),
    "ALFWorld": ("agentgym_budget/ALFWorld-v0", {"num_games": 2}),
    "WebShop (1k products)": ("agentgym_budget/WebShop-1k-v0", {}),
}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def coin_tasks(level: int, count: int) -> list[str]:
    """Prepared Coin Collector train tasks (no generation), at most ``count``."""
    env = gym.make(COIN, level=level).unwrapped
    return [task for task in env.task_ids if env.task_prepared(task)][:count]


def layout_tasks(layout: str, envs: int, level: int) -> list[str]:
    games = coin_tasks(level, max(1, envs // 16)) if layout == "groups" else coin_tasks(level, 1000)
    return [games[index % len(games)] for index in range(envs)]


# ------------------------------------------------------------------ memory (child process)
def memory_child(kind: str, layout: str, envs: int, level: int) -> dict:
    tasks = layout_tasks(layout, envs, level)
    base = rss_mb()
    began = _harness.Clock.now()
    if kind == "native":
        vector = TextVectorEnv(COIN, envs, level=level)
        vector.reset(seed=0, options={"task": tasks})
        for step in range(2):
            vector.step([MOVES[(index + step) % len(MOVES)] for index in range(envs)])
    else:
        singles = [gym.make(COIN, level=level) for _ in range(envs)]
        for index, env in enumerate(singles):
            env.reset(seed=index, options={"task": tasks[index]})
        for step in range(2):
            for index, env in enumerate(singles):
                env.step(MOVES[(index + step) % len(MOVES)])
    rss = rss_mb()
    return {
        "envs": envs,
        "games": len(set(tasks)),
        "rss_mb": rss,
        "rss_before_mb": base,
        "per_env_mb": round((rss - base) / envs, 3),
        **began.__class__.now().since(began),
    }


def memory(args: argparse.Namespace) -> dict:
    rows: dict = {}
    for layout in ("distinct", "groups"):
        for kind in ("native", "separate"):
            command = [sys.executable, __file__, "--memory-child", kind, layout, str(args.envs), str(args.level)]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            rows.setdefault(layout, {})[kind] = json.loads(out.strip().splitlines()[-1])
            print(f"memory {layout:8s} {kind:8s} {rows[layout][kind]}", flush=True)
    return rows


# ------------------------------------------------------------------ step cost: native vs separate
def step_cost(args: argparse.Namespace) -> dict:
    n = args.compare_envs
    tasks = layout_tasks("distinct", n, args.level)
    vector = TextVectorEnv(COIN, n, level=args.level)
    vector.reset(seed=0, options={"task": tasks})
    singles = [gym.make(COIN, level=args.level) for _ in range(n)]
    for index, env in enumerate(singles):
        env.reset(seed=index, options={"task": tasks[index]})
    totals = {"native": [0.0, 0.0, 0], "separate": [0.0, 0.0, 0]}

    def play(kind: str, step: int) -> None:
        actions = [MOVES[(index + step) % len(MOVES)] for index in range(n)]
        wall, cpu = time.perf_counter(), time.process_time()
        if kind == "native":
            vector.step(actions)
        else:
            for env, action in zip(singles, actions, strict=True):
                env.step(action)
        totals[kind][0] += time.process_time() - cpu
        totals[kind][1] += time.perf_counter() - wall
        totals[kind][2] += n

    step = 0
    for block in range(args.rounds):
        order = ("native", "separate") if block % 2 == 0 else ("separate", "native")
        for kind in order:
            for _ in range(args.steps_per_round):
                play(kind, step)
                step += 1
    vector.close()
    for env in singles:
        env.close()
    result = {
        kind: {
            "steps": steps,
            "cpu_s": round(cpu, 3),
            "wall_s": round(wall, 3),
            "steps_per_cpu_s": round(steps / cpu, 1),
            "steps_per_wall_s": round(steps / wall, 1),
        }
        for kind, (cpu, wall, steps) in totals.items()
    }
    result["native_over_separate_cpu"] = round(
        result["native"]["steps_per_cpu_s"] / result["separate"]["steps_per_cpu_s"], 3
    )
    result["envs"] = n
    print(f"step cost {result}", flush=True)
    return result


# ------------------------------------------------------------------ threads per family
def _actions(infos: dict, n: int, step: int) -> list[str]:
    admissible = infos.get("admissible_actions")
    actions = []
    for index in range(n):
        options = list(admissible[index]) if admissible is not None and admissible[index] else list(MOVES)
        actions.append(options[(index * 7 + step * 3) % len(options)])
    return actions


def _play(envs: TextVectorEnv, steps: int) -> tuple[list, dict[str, float]]:
    began = _harness.Clock.now()
    observations, infos = envs.reset(seed=0)
    trace = [observations]
    for step in range(steps):
        observations, rewards, terminated, truncated, infos = envs.step(_actions(infos, envs.num_envs, step))
        trace.append((observations, rewards.tolist(), terminated.tolist(), truncated.tolist()))
    return trace, began.__class__.now().since(began)


def threads(args: argparse.Namespace) -> dict:
    rows = {}
    for family, (env_id, kwargs) in FAMILIES.items():
        try:
            pools = {k: TextVectorEnv(env_id, args.thread_envs, threads=k, max_turns=15, **kwargs) for k in (1, 2)}
        except agentgym_budget.errors.MissingDependencyError as err:
            rows[family] = {"skipped": str(err)[:200]}
            continue
        for k in pools:  # warm-up: a whole round each, so that the tasks autoresets draw are generated and loaded
            _play(pools[k], args.thread_steps)
        sums = {k: {"wall_s": 0.0, "process_cpu_s": 0.0} for k in pools}
        traces = {}
        for block in range(args.rounds):
            for k in (1, 2) if block % 2 == 0 else (2, 1):
                traces[k], timing = _play(pools[k], args.thread_steps)
                for key in sums[k]:
                    sums[k][key] += timing[key]
        for env in pools.values():
            env.close()
        row = {
            "envs": args.thread_envs,
            "steps": args.rounds * args.thread_steps,
            "threads_1": {key: round(value, 3) for key, value in sums[1].items()},
            "threads_2": {key: round(value, 3) for key, value in sums[2].items()},
            "wall_speedup": round(sums[1]["wall_s"] / sums[2]["wall_s"], 3),
            "same_results": traces[1] == traces[2],
        }
        rows[family] = row
        print(f"threads {family}: {row}", flush=True)
    return rows


def prepare(args: argparse.Namespace) -> None:
    """Generate what the runs play (child process, not timed)."""
    env = gym.make(COIN, level=args.level).unwrapped
    needed = max(args.compare_envs, args.envs // 16, 1) - len(coin_tasks(args.level, 1000))
    for task in [task for task in env.task_ids if not env.task_prepared(task)][: max(needed, 0)]:
        env.prepare_task(task)
    for env_id, kwargs in FAMILIES.values():
        try:
            envs = TextVectorEnv(env_id, args.thread_envs, max_turns=15, **kwargs)
        except agentgym_budget.errors.MissingDependencyError:
            continue
        _play(envs, args.thread_steps)  # the tasks a round's autoresets draw too
        envs.close()


def readme_rows(result: dict) -> list[list[str]]:
    """The rows of the docs table, formatted from ``result``."""
    mem, cost = result["memory"], result["step_cost"]
    memory_cells = []
    for layout, label in (("distinct", "own game each"), ("groups", "groups of 16")):
        row = mem[layout]
        memory_cells.append(
            f"{label} ({row['native']['games']} games): **{row['native']['rss_mb'] / 1024:.2f} GiB** "
            f"(separate envs {row['separate']['rss_mb'] / 1024:.2f} GiB)"
        )
    thread_cells = [
        f"{family.split(' ')[0]} x{row['wall_speedup']:.2f} (CPU "
        f"x{row['threads_2']['process_cpu_s'] / row['threads_1']['process_cpu_s']:.2f}"
        f"{'' if row['same_results'] else ', RESULTS DIFFER'})"
        for family, row in result["threads"].items()
        if "wall_speedup" in row
    ]
    return [
        [
            f"Native vector env: RSS of {result['envs']:,} TextWorld Coin Collector (l30) envs in one process",
            "; ".join(memory_cells),
            "<= 2.5 GiB",
            "`python benchmarks/vector_env.py`",
        ],
        [
            f"Native vector env: steps per CPU-second vs {cost['envs']} separate envs (same games and actions)",
            f"**{cost['native_over_separate_cpu']:.2f}x** ({cost['native']['steps_per_cpu_s']:.0f} vs "
            f"{cost['separate']['steps_per_cpu_s']:.0f} steps/CPU-s)",
            ">= 0.9x",
            "`python benchmarks/vector_env.py`",
        ],
        [
            f"Native vector env: wall speedup of `threads=2` over 1 ({result['threads_envs']} sub-envs; CPU time "
            "ratio in brackets; results checked equal)",
            ", ".join(thread_cells),
            "measure which engines release the GIL",
            "`python benchmarks/vector_env.py`",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=1024, help="envs in the memory measurement")
    parser.add_argument("--compare-envs", type=int, default=64, help="envs in the step-cost comparison")
    parser.add_argument("--level", type=int, default=30, help="Coin Collector level")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds of each comparison")
    parser.add_argument("--steps-per-round", type=int, default=10, help="vector steps per round (step cost)")
    parser.add_argument("--thread-envs", type=int, default=8, help="sub-envs in the thread comparison")
    parser.add_argument("--thread-steps", type=int, default=20, help="vector steps per round (threads)")
    parser.add_argument("--memory-child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.memory_child:
        kind, layout, envs, level = args.memory_child
        print(json.dumps(memory_child(kind, layout, int(envs), int(level))))
        return
    if args.smoke:
        args.envs, args.compare_envs, args.level, args.rounds = 4, 4, 5, 2
        args.steps_per_round, args.thread_envs, args.thread_steps = 2, 2, 2
    if args.prepare_only:
        prepare(args)
        return
    recording = _harness.start("vector_env", args.smoke)
    subprocess.run([sys.executable, __file__, "--prepare-only", *sys.argv[1:]], check=True)
    result = {"envs": args.envs, "level": args.level, "load_now": list(os.getloadavg())}
    result["memory"] = memory(args)
    result["step_cost"] = step_cost(args)
    result["threads"] = threads(args)
    result["threads_envs"] = args.thread_envs
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
