"""1,000 ALFWorld create/close cycles: memory, planner libraries, open files, processes.

Each cycle makes ``gym.make("agentgym_budget/ALFWorld-v0", num_games=1)`` with the planner
expert requested, resets it (cycling through the six games), takes the expert's action,
takes a snapshot and closes the env. Reported: resident memory after warm-up and every 100
cycles, planner libraries loaded in total, open file descriptors and child processes at
the end, and ``ResourceWarning`` s for unclosed files. For contrast, a few cycles of ALFWorld's stock engine
(``textworld.start(..., wrappers=[AlfredDemangler(), AlfredInfos])`` + ``close()``) are
measured the same way: each loads a private copy of the planner library that is never
unloaded, and leaves the game file to the garbage collector (``json.load(open(path))``: CPython
closes it when the object dies, with a ``ResourceWarning``; counted here).

Results go to ``benchmarks/results/alfworld_resources.json``.

Usage::

    python benchmarks/alfworld_resources.py [--cycles 1000] [--stock-cycles 10]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time
import warnings
from pathlib import Path

import _harness
import gymnasium as gym
import textworld
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
from agentgym_budget.tasks.alfworld.planner import LIBRARIES

RESULTS = Path(__file__).parent / "results"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def open_files() -> list[str]:
    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            names.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    return names


def planner_mappings() -> int:
    """Distinct copies of Fast Downward's library mapped into this process (by inode: copies are deleted files)."""
    with open("/proc/self/maps") as maps:
        return len({(line.split()[3], line.split()[4]) for line in maps if "libdownward" in line})


def children() -> int:
    me, count = str(os.getpid()), 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        count += fields[1] == me
    return count


def snapshot_of_resources() -> dict[str, object]:
    files = open_files()
    return {
        "rss_mb": rss_mb(),
        "planner_libraries_loaded": LIBRARIES.loaded,
        "planner_library_copies_mapped": planner_mappings(),
        "open_fds": len(files),
        "open_game_files": sum(name.endswith(".tw-pddl") for name in files),
        "child_processes": children(),
    }


def resource_warnings(function, *args) -> int:
    """Run ``function``; return how many ``ResourceWarning`` (unclosed files) it caused."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        function(*args)
        gc.collect()
    return sum(issubclass(w.category, ResourceWarning) for w in caught)


def our_cycle(index: int, tasks: list[str]) -> None:
    env = gym.make("agentgym_budget/ALFWorld-v0", num_games=1, info_keys={"expert_action"})
    _, info = env.reset(seed=index, options={"task": tasks[index % len(tasks)]})
    env.step(info["expert_action"])
    env.unwrapped.get_state()
    env.close()


def stock_cycle(path: str) -> None:
    infos = textworld.EnvInfos(admissible_commands=True, won=True, extras=["gamefile"])
    env = textworld.start(path, infos, wrappers=[AlfredDemangler(), AlfredInfos])
    state = env.reset()
    env.step(state["admissible_commands"][0])
    env.close()


def measure_ours(tasks: list[str], cycles: int) -> dict:
    """Resources through ``cycles`` create/close cycles of the env after a warm-up on every game."""
    start = snapshot_of_resources()
    for index in range(len(tasks)):  # warm-up: every game's caches (grammar, translation, plans)
        our_cycle(index, tasks)
    warm = snapshot_of_resources()
    samples, began, unclosed = [], time.perf_counter(), 0
    for index in range(cycles):
        unclosed += resource_warnings(our_cycle, index, tasks)
        if (index + 1) % 100 == 0:
            samples.append({"cycle": index + 1, **snapshot_of_resources()})
            print(json.dumps(samples[-1]), flush=True)
    seconds = time.perf_counter() - began
    end = snapshot_of_resources()
    return {
        "cycles": cycles,
        "seconds_per_cycle": round(seconds / cycles, 4),
        "at_start": start,
        "after_warmup": warm,
        "every_100_cycles": samples,
        "at_end": end,
        "rss_growth_after_warmup_mb": round(end["rss_mb"] - warm["rss_mb"], 1),
        "unclosed_file_warnings": unclosed,
        "max_rss_mb": max(sample["rss_mb"] for sample in samples) if samples else end["rss_mb"],
    }


def measure_stock(paths: list[str], cycles: int) -> dict:
    """Resources added by ``cycles`` load/close cycles of the stock engine on ``paths`` in turn."""
    before = snapshot_of_resources()
    began, unclosed = time.perf_counter(), 0
    for index in range(cycles):
        unclosed += resource_warnings(stock_cycle, paths[index % len(paths)])
    after = snapshot_of_resources()
    return {
        "cycles": cycles,
        "seconds_per_cycle": round((time.perf_counter() - began) / max(1, cycles), 3),
        "before": before,
        "after": after,
        "rss_growth_mb": round(after["rss_mb"] - before["rss_mb"], 1),
        "rss_growth_per_cycle_mb": round((after["rss_mb"] - before["rss_mb"]) / max(1, cycles), 2),
        "planner_copies_added": after["planner_library_copies_mapped"] - before["planner_library_copies_mapped"],
        "game_files_left_open": after["open_game_files"] - before["open_game_files"],
        "unclosed_file_warnings": unclosed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--stock-cycles", type=int, default=10)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.cycles, args.stock_cycles = 20, 2
    recording = _harness.start("alfworld_resources", args.smoke)
    env = ALFWorldEnv(num_games=1)
    tasks = list(env.task_ids)
    paths = [env._game_path(task) for task in tasks]
    env.close()

    ours = measure_ours(tasks, args.cycles)
    stock = measure_stock(paths, args.stock_cycles)
    result = {"ours": ours, "stock": stock}
    print(json.dumps({"ours": {k: v for k, v in ours.items() if k != "every_100_cycles"}, "stock": stock}, indent=2))
    recording.finish(result)


if __name__ == "__main__":
    main()
