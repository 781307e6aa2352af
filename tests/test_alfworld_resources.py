"""Creating and closing ALFWorld envs does not leak planner libraries, memory, files or processes.

The stock engine loads a private copy of Fast Downward's library per env and never unloads
it, and leaves the game file open. Here a modest number of cycles runs in CI;
``benchmarks/alfworld_resources.py`` runs 1,000 and reports the figures.
"""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("alfworld")

from agentgym_budget.tasks.alfworld.planner import LIBRARIES
from tests.alfworld_support import game_paths

CYCLES = 25


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def open_files() -> list[str]:
    files = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            files.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    return files


def children() -> list[int]:
    me, found = os.getpid(), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.append(int(pid))
    return found


def cycle(index: int, task: str | None = None) -> None:
    env = gym.make("agentgym_budget/ALFWorld-v0", num_games=1, info_keys={"expert_action"})
    _, info = env.reset(seed=index, options={"task": task} if task is not None else None)
    env.step(info["expert_action"])
    env.unwrapped.get_state()
    env.close()


@pytest.mark.slow
def test_create_close_cycles_leak_nothing():
    for task_type in game_paths():  # warm the per-process caches (games, grammars, translations)
        cycle(0, f"{task_type}-0")
    loaded, memory, files, kids = LIBRARIES.loaded, rss_mb(), sorted(open_files()), children()
    for index in range(CYCLES):
        cycle(index)
    assert LIBRARIES.loaded == loaded, "a closed env's planner library was not reused"
    assert LIBRARIES.idle >= 2
    assert rss_mb() - memory < 40, f"memory grew by {rss_mb() - memory:.1f} MB over {CYCLES} cycles"
    assert sorted(open_files()) == files, "files left open"
    assert not any(name.endswith((".tw-pddl", ".json")) for name in open_files())
    assert children() == kids, "processes left behind"


def test_closing_twice_and_resetting_after_close():
    game_paths()
    env = gym.make("agentgym_budget/ALFWorld-PickAndPlace-v0", num_games=1)
    env.reset(seed=0)
    env.close()
    env.close()
    obs, _ = env.reset(seed=0)
    assert obs.startswith("-= Welcome")
    env.close()
