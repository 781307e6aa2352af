"""ScienceWorld behind our contract vs the ``scienceworld`` package, side by side on the same actions.

Every CPU figure counts the JVMs too (their ``/proc`` CPU time, read with psutil, beside this process's):
the simulator runs in Java. Measured in one run, in alternating blocks, on ``boil`` variation 0 (a kitchen,
the largest action lists) with the first actions of its gold path:

* **step**: ``gym.make("agentgym_budget/ScienceWorld-v0", task="boil")`` (default infos) vs the package's
  ``ScienceWorldEnv.step`` (its own JVM; it lists every valid action at every step) vs the bare
  ``server.step`` floor (a simulation of our JVM). Target: ours <= 0.25x the package's ``step``.
* **reset**: ``reset`` on another variation vs the package's ``load`` + ``reset``; and ``reset`` of the same
  variation after an episode vs the package's ``reset``.
* **admissible listing**: our ``admissible_actions`` (the engine's list in one call, filtered and capped at
  64) vs the package's ``get_valid_action_object_combinations()`` (one py4j call per command), same state.
* **restore by replay**: ``StateSnapshot.restore`` of a state ``depth`` actions deep, then one step (a
  restore is immediate, the engine catches up at the next step) vs the package's ``load`` + ``reset`` +
  replaying the actions + the step; and the same restore after an unknown command (nothing to replay).
* **memory** (each in a fresh process): the JVM's and this process's resident memory with 1 / 8 / 64 envs
  (every env reset on another task) vs 1 / 8 of the package's envs (one JVM each; 64 would take ~12 GB).
  Target: ours <= 2 GiB for 64 envs.

Usage::

    python benchmarks/sciworld_speed.py [--blocks 5] [--steps 30] [--depths 10 30] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import _harness
import gymnasium as gym
import psutil

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.tasks.sciworld import candidates, engine
from agentgym_budget.wrappers import StateSnapshot

SCIWORLD = "agentgym_budget/ScienceWorld-v0"
TASK, VARIATION, OTHER = "boil", 0, 1
MIB = 2**20


def cpu_now(pids: list[int]) -> float:
    """CPU seconds of this process plus those of the JVMs ``pids``."""
    total = time.process_time()
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def measure(work: Callable[[], int], pids: list[int]) -> tuple[int, float, float]:
    """``work()`` -> (operations it made, CPU seconds incl. the JVMs, wall seconds)."""
    cpu, wall = cpu_now(pids), time.perf_counter()
    count = work()
    return count, cpu_now(pids) - cpu, time.perf_counter() - wall


Side = tuple[Callable[[], object], Callable[[], int], list[int]]
"""A measured side: what prepares each round (untimed), the timed work (it returns its operation count), the JVMs."""


def alternate(sides: dict[str, Side], blocks: int) -> dict:
    """Run every side once to warm up, then ``blocks`` alternating rounds; per-operation CPU and wall ms."""
    for prepare, work, _ in sides.values():
        prepare()
        work()
    totals = {name: [0, 0.0, 0.0] for name in sides}
    for _ in range(blocks):
        for name, (prepare, work, pids) in sides.items():
            prepare()
            totals[name] = [a + b for a, b in zip(totals[name], measure(work, pids), strict=True)]
    return {
        name: {"cpu_ms": round(c / n * 1e3, 3), "wall_ms": round(w / n * 1e3, 3), "count": n}
        for name, (n, c, w) in totals.items()
    }


def _nothing() -> None:
    return None


def package_env() -> object:
    from scienceworld import ScienceWorldEnv

    env = ScienceWorldEnv("", envStepLimit=10**9)
    env.load(TASK, VARIATION, "")
    env.reset()
    return env


def speed(actions: list[str], blocks: int, depths: list[int]) -> dict:
    ours = gym.make(SCIWORLD, task=TASK)
    listing = gym.make(SCIWORLD, task=TASK, info_keys={"admissible_actions"})
    theirs = package_env()
    floor = engine.World()
    jvm, their_jvm = engine.JVM.pid(), theirs._gateway.java_process.pid
    task_id, other_id = f"{TASK}-{VARIATION}", f"{TASK}-{OTHER}"

    def played(env: object) -> Callable[[], int]:
        return lambda: sum(1 for action in actions if env.step(action))

    result: dict = {"actions": len(actions)}
    result["step"] = alternate(
        {
            "ours": (lambda: ours.reset(options={"task": task_id}), played(ours), [jvm]),
            "ours_with_admissible": (lambda: listing.reset(options={"task": task_id}), played(listing), [jvm]),
            "package": (theirs.reset, played(theirs), [their_jvm]),
            "floor": (lambda: floor.load(TASK, VARIATION, ""), lambda: sum(1 for a in actions if floor.interface.step(a)),
                      [jvm]),
        },
        blocks,
    )  # fmt: skip
    first = "wait1"  # always changes the world (time passes): a reset of the same variation must reload it
    result["reset"] = alternate(
        {
            "ours_other_variation": (lambda: ours.reset(options={"task": task_id}),
                                     lambda: bool(ours.reset(options={"task": other_id})), [jvm]),
            "package_load_and_reset": (lambda: theirs.load(TASK, VARIATION, ""),
                                       lambda: _their_load(theirs, OTHER), [their_jvm]),
            "ours_same_variation": (lambda: _after(ours, other_id, first),
                                    lambda: bool(ours.reset(options={"task": other_id})), [jvm]),
            "package_reset": (lambda: theirs.step(first), lambda: bool(theirs.reset()), [their_jvm]),
        },
        blocks,
    )  # fmt: skip
    result["ratio_step_ours_over_package"] = round(
        result["step"]["ours"]["cpu_ms"] / result["step"]["package"]["cpu_ms"], 3
    )
    result["listing"] = listing_costs(actions, theirs, blocks)
    result["restore"] = {str(depth): restore_costs(actions[:depth], theirs, blocks) for depth in depths}
    theirs.close()
    return result


def _after(env: gym.Env, task_id: str, action: str) -> None:
    env.reset(options={"task": task_id})
    env.step(action)


def _their_load(env: object, variation: int) -> int:
    env.load(TASK, variation, "")
    env.reset()
    return 1


def listing_costs(actions: list[str], theirs: object, blocks: int) -> dict:
    world = engine.World()
    world.load(TASK, VARIATION, "")
    world.replay(actions[:10])
    theirs.reset()
    for action in actions[:10]:
        theirs.step(action)
    jvm, their_jvm = engine.JVM.pid(), theirs._gateway.java_process.pid
    sizes = {
        "package": len(theirs.get_valid_action_object_combinations()),
        "bounded": len(candidates.bounded(world.valid_actions(), limit=64)),
    }
    timings = alternate(
        {
            "ours_bounded": (_nothing, lambda: bool(candidates.bounded(world.valid_actions(), limit=64)), [jvm]),
            "ours_whole_list": (_nothing, lambda: bool(world.valid_actions()), [jvm]),
            "package": (_nothing, lambda: bool(theirs.get_valid_action_object_combinations()), [their_jvm]),
        },
        blocks,
    )
    world.close()
    return {"sizes": sizes, **timings}


def _at(env: StateSnapshot, snap: object, action: str) -> None:
    env.restore(snap)
    env.step(action)


def restore_costs(prefix: list[str], theirs: object, blocks: int) -> dict:
    env = StateSnapshot(gym.make(SCIWORLD, task=TASK))
    env.reset(options={"task": f"{TASK}-{VARIATION}"})
    for action in prefix:
        env.step(action)
    snap = env.snapshot()
    other = StateSnapshot(gym.make(SCIWORLD, task=TASK))
    other.reset(options={"task": f"{TASK}-{OTHER}"})
    jvm, their_jvm = engine.JVM.pid(), theirs._gateway.java_process.pid

    def restore() -> int:  # prepared by a step that changed the world: the restore must reload and replay
        other.restore(snap)
        other.step("look around")  # the first step after a restore replays what the engine lacks
        return 1

    def restore_after_unknown() -> int:  # prepared by a command that changed nothing: nothing to replay
        other.restore(snap)
        other.step("look around")
        return 1

    def replay_package() -> int:
        theirs.load(TASK, VARIATION, "")
        theirs.reset()
        for action in prefix:
            theirs.step(action)
        theirs.step("look around")
        return 1

    out = alternate(
        {
            "ours_restore_then_step": (lambda: other.step(prefix[0]), restore, [jvm]),
            "ours_restore_after_unknown_command": (lambda: _at(other, snap, "zzqx"), restore_after_unknown, [jvm]),
            "package_load_reset_replay": (_nothing, replay_package, [their_jvm]),
        },
        blocks,
    )
    out["ratio_ours_over_package"] = round(
        out["ours_restore_then_step"]["cpu_ms"] / out["package_load_reset_replay"]["cpu_ms"], 3
    )
    return out


MEMORY_CODE = """
import json, sys, time, gymnasium as gym, psutil, agentgym_budget
from agentgym_budget.tasks.sciworld.catalog import TASKS
side, count = sys.argv[1], int(sys.argv[2])
names = list(TASKS)
envs = []
for i in range(count):
    if side == "ours":
        env = gym.make("agentgym_budget/ScienceWorld-v0", task=names[i % 30])
        env.reset(options={"task": env.unwrapped.task_ids[i // 30]})
        env.step("look around")
    else:
        from scienceworld import ScienceWorldEnv
        env = ScienceWorldEnv("", envStepLimit=10**9)
        env.load(names[i % 30], i // 30, "")
        env.reset()
    envs.append(env)
time.sleep(1)
me = psutil.Process()
java = [p for p in me.children(recursive=True) if "java" in p.name()]
print(json.dumps({"python_mib": me.memory_info().rss / 2**20, "jvms": len(java),
                  "jvm_mib": sum(p.memory_info().rss for p in java) / 2**20}))
"""


def memory(counts: list[int], package_counts: list[int]) -> dict:
    out: dict = {"ours": {}, "package": {}}
    root = Path(__file__).resolve().parents[1]
    for side, sizes in (("ours", counts), ("package", package_counts)):
        for count in sizes:
            done = subprocess.run(
                [sys.executable, "-c", MEMORY_CODE, side, str(count)], capture_output=True, text=True, check=True,
                env={**os.environ, "PYTHONPATH": str(root)}, timeout=3600,
            )  # fmt: skip
            row = json.loads(done.stdout.strip().splitlines()[-1])
            total = row["python_mib"] + row["jvm_mib"]
            out[side][str(count)] = {**{k: round(v, 1) for k, v in row.items()}, "total_mib": round(total, 1),
                                     "per_env_mib": round(total / count, 1)}  # fmt: skip
    return out


def readme_rows(result: dict) -> list[list[str]]:
    speed_, memory_ = result["speed"], result["memory"]
    step, reset, listing = speed_["step"], speed_["reset"], speed_["listing"]
    restore = " / ".join(
        f"{row['ours_restore_then_step']['cpu_ms']:.0f} vs {row['package_load_reset_replay']['cpu_ms']:.0f} ms "
        f"(**{row['ratio_ours_over_package']:.2f}x**; {row['ours_restore_after_unknown_command']['cpu_ms']:.1f} ms "
        "after an unknown command)"
        for row in speed_["restore"].values()
    )
    ours_memory = " / ".join(f"{row['total_mib']:,.0f}" for row in memory_["ours"].values())
    their_memory = " / ".join(f"{row['total_mib']:,.0f}" for row in memory_["package"].values())
    return [
        [
            "ScienceWorld step, `gym.make` (default infos) vs the package's `ScienceWorldEnv.step` and the bare "
            "`server.step` floor, same actions (CPU incl. the JVMs)",
            f"**{speed_['ratio_step_ours_over_package']:.2f}x** ({step['ours']['cpu_ms']:.2f} vs "
            f"{step['package']['cpu_ms']:.2f} ms; floor {step['floor']['cpu_ms']:.2f} ms; with "
            f"`admissible_actions` {step['ours_with_admissible']['cpu_ms']:.1f} ms)",
            "<= 0.25x",
            "`python benchmarks/sciworld_speed.py`",
        ],
        [
            "ScienceWorld reset on another variation / the same one after a step vs the package's `load` + `reset` "
            "/ `reset`; listing (bounded `admissible_actions` vs `get_valid_action_object_combinations()`)",
            f"{reset['ours_other_variation']['cpu_ms']:.0f} / {reset['ours_same_variation']['cpu_ms']:.0f} vs "
            f"{reset['package_load_and_reset']['cpu_ms']:.0f} / {reset['package_reset']['cpu_ms']:.0f} ms; "
            f"{listing['ours_bounded']['cpu_ms']:.0f} vs {listing['package']['cpu_ms']:.0f} ms "
            f"({listing['sizes']['bounded']} vs {listing['sizes']['package']} commands)",
            "",
            "same",
        ],
        [
            f"ScienceWorld restore by replay at depth {' / '.join(speed_['restore'])} then a step vs the "
            "package's `load` + `reset` + replay + step",
            restore,
            "",
            "same",
        ],
        [
            f"ScienceWorld memory (MiB, JVMs + Python) for {' / '.join(memory_['ours'])} envs vs the package's "
            f"{' / '.join(memory_['package'])}",
            f"**{ours_memory}** vs {their_memory} (one JVM vs one per env)",
            "<= 2,048 MiB for 64",
            "same",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=5, help="alternating rounds per measurement")
    parser.add_argument("--steps", type=int, default=30, help="gold-path actions per episode")
    parser.add_argument("--depths", type=int, nargs="+", default=[10, 30], help="snapshot depths")
    parser.add_argument("--memory", type=int, nargs="+", default=[1, 8, 64], help="env counts (ours)")
    parser.add_argument("--package-memory", type=int, nargs="+", default=[1, 8], help="env counts (package)")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.blocks, args.steps, args.depths, args.memory, args.package_memory = 1, 4, [2], [1], [1]
    recording = _harness.start("sciworld_speed", args.smoke)
    actions = list(engine.gold_path(TASK, VARIATION, ""))[: max(args.steps, *args.depths)]
    result = {
        "task": f"{TASK}-{VARIATION}",
        "speed": speed(actions, args.blocks, args.depths),
        "memory": memory(args.memory, args.package_memory),
        "cores": os.cpu_count(),
        "load_average": [recording.load_before[0], os.getloadavg()[0]],
    }
    print(json.dumps(result, indent=2))
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
