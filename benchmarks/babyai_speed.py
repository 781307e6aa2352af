"""BabyAI behind our contract vs raw minigrid, side by side in one run: step, reset, snapshots, expert, vector envs.

Every comparison alternates the sides block by block on the same actions and reports thread CPU time (wall
beside it): on a busy machine the ratios measured together are what count.

* **step**: ``gym.make("agentgym_budget/BabyAI-GoToLocal-v0")`` (the full stack, GLAM text every step) vs
  minigrid's own level object (``gym.make("BabyAI-GoToLocal-v0").unwrapped.step``), the same random commands
  from the same seeds. With ``progress="sparse"`` (no planner)
  and with the default ``progress="plan"`` (the bot plans again after every action that changes the level
  off its plan: random actions are the worst case). Target: step with text <= 1.5x raw minigrid's step.
* **reset**: the same two (and the default with its first plan) over the same seeds.
* **snapshot + restore**: ``StateSnapshot.snapshot()`` + ``restore()`` in one process, and through bytes
  (``to_bytes`` + ``EnvState.from_bytes`` + ``restore`` into another stack), on GoToLocal (8x8) and OpenDoor
  (22x22), vs ``copy.deepcopy`` of minigrid's level (its exact copy). Target: <= 1 ms on 8x8.
* **expert_action**: planning from random mid-episode states (the bot played to the mission's end, what an
  action off the plan costs), vs minigrid's bot on a deepcopy of the level (one decision; and played to the end).
* **vector env**: ``gym.make_vec`` of 64 and 256 envs (``progress="sparse"``) vs as many raw minigrid levels
  stepped in a loop with the same actions: steps per CPU second.

Usage::

    python benchmarks/babyai_speed.py [--steps 2000] [--blocks 6] [--envs 64 256] [--smoke]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import statistics
import time
from collections.abc import Callable
from functools import partial

import _harness
import gymnasium as gym
import minigrid  # noqa: F401  (registers minigrid's own ids)
import numpy as np
from minigrid.utils.baby_ai_bot import BabyAIBot

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.tasks.babyai.state import COMMANDS
from agentgym_budget.wrappers import StateSnapshot

LEVEL = "GoToLocal"


def ours(level: str = LEVEL, **kwargs) -> gym.Env:
    return gym.make(f"agentgym_budget/BabyAI-{level}-v0", **kwargs)


def raw(level: str = LEVEL):
    return gym.make(f"BabyAI-{level}-v0").unwrapped


def quiet_reset(level_env, seed: int) -> None:
    with contextlib.redirect_stdout(io.StringIO()):  # minigrid prints while rejecting layouts
        level_env.reset(seed=seed)


def clocked(work: Callable[[], object]) -> tuple[float, float]:
    """Thread CPU and wall seconds of ``work()``."""
    cpu, wall = time.thread_time(), time.perf_counter()
    work()
    return time.thread_time() - cpu, time.perf_counter() - wall


# ------------------------------------------------------------------ step and reset
def _play_block(env: gym.Env | None, level_env, actions: np.ndarray, seed: int) -> tuple[float, float, int]:
    """Play ``actions`` from ``seed`` on ours (``env``) or on raw minigrid (``level_env``); CPU, wall, steps timed.

    Ours starts the next seed when an episode ends (won, or lost: a needed box opened); minigrid's level plays on.
    """
    cpu = wall = 0.0
    if env is not None:
        env.reset(options={"task": seed})
    else:
        quiet_reset(level_env, seed)
    for action in actions:
        if env is not None:
            c, w = clocked(lambda a=int(action): env.step(COMMANDS[a]))
            if env.unwrapped._episode_over:
                env.reset(options={"task": seed + 1})
        else:
            c, w = clocked(lambda a=int(action): level_env.step(a))
        cpu, wall = cpu + c, wall + w
    return cpu, wall, len(actions)


def step_comparison(steps: int, blocks: int) -> dict:
    rng = np.random.default_rng(0)
    sides = {"raw": (None, raw()), "sparse": (ours(progress="sparse"), None), "plan": (ours(), None)}
    totals = {name: [0.0, 0.0, 0] for name in sides}
    pair = {"sparse": [], "plan": []}
    for block in range(blocks):
        actions = rng.integers(0, 6, size=steps)
        order = list(sides) if block % 2 == 0 else list(reversed(sides))
        per_step = {}
        for name in order:
            env, level_env = sides[name]
            cpu, wall, count = _play_block(env, level_env, actions, seed=block * 7)
            totals[name] = [totals[name][0] + cpu, totals[name][1] + wall, totals[name][2] + count]
            per_step[name] = cpu / count
        for name in pair:
            pair[name].append(per_step[name] / per_step["raw"])
    out = {
        name: {"cpu_us_per_step": round(c / n * 1e6, 2), "wall_us_per_step": round(w / n * 1e6, 2), "steps": n}
        for name, (c, w, n) in totals.items()
    }
    for name in pair:
        out[f"ratio_{name}_over_raw"] = round(out[name]["cpu_us_per_step"] / out["raw"]["cpu_us_per_step"], 3)
        out[f"median_block_ratio_{name}"] = round(statistics.median(pair[name]), 3)
    return out


def reset_comparison(resets: int) -> dict:
    sparse, plan, level_env = ours(progress="sparse"), ours(), raw()
    sides = {
        "raw": lambda seed: quiet_reset(level_env, seed),
        "sparse": lambda seed: sparse.reset(options={"task": seed}),
        "plan": lambda seed: plan.reset(options={"task": seed}),
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for seed in range(resets):
        for name, reset in sides.items():
            times[name].append(clocked(lambda reset=reset, seed=seed: reset(seed)))
    return {
        name: {
            "cpu_ms": round(statistics.median(c for c, _ in values) * 1e3, 4),
            "wall_ms": round(statistics.median(w for _, w in values) * 1e3, 4),
        }
        for name, values in times.items()
    }


# ------------------------------------------------------------------ snapshots
def snapshot_comparison(level: str, states: int) -> dict:
    rng = np.random.default_rng(1)
    env, other = StateSnapshot(ours(level, progress="sparse")), StateSnapshot(ours(level, progress="sparse"))
    other.reset(seed=0)
    samples: dict[str, list[tuple[float, float]]] = {"memory": [], "bytes": [], "deepcopy": [], "size": []}
    env.reset(seed=0)
    for case in range(states):
        if env.step(COMMANDS[int(rng.integers(6))])[2] or case % 20 == 0:
            env.reset(seed=case)
        samples["memory"].append(clocked(lambda: env.restore(env.snapshot())))
        sizes: list[int] = []
        samples["bytes"].append(clocked(lambda sizes=sizes: _through_bytes(env, other, sizes)))
        samples["size"].append((sizes[0], 0))
        level_env = env.unwrapped.engine.env
        samples["deepcopy"].append(clocked(lambda level_env=level_env: copy.deepcopy(level_env)))
    out = {
        name: {
            "cpu_ms": round(statistics.median(c for c, _ in values) * 1e3, 4),
            "wall_ms": round(statistics.median(w for _, w in values) * 1e3, 4),
        }
        for name, values in samples.items()
        if name != "size"
    }
    out["bytes_size"] = int(statistics.median(size for size, _ in samples["size"]))
    out["grid"] = "x".join(map(str, env.unwrapped.engine.env.grid.encode().shape[:2]))
    return out


def _through_bytes(env: StateSnapshot, other: StateSnapshot, sizes: list[int]) -> None:
    data = env.snapshot().to_bytes()
    other.restore(EnvState.from_bytes(data))
    sizes.append(len(data))


# ------------------------------------------------------------------ expert
def expert_comparison(level: str, states: int) -> dict:
    rng = np.random.default_rng(2)
    env = ours(level, progress="sparse")
    samples: dict[str, list[tuple[float, float]]] = {"ours_plan": [], "minigrid_decision": [], "minigrid_plan": []}
    lengths = []
    for case in range(states):
        env.reset(options={"task": case})
        for _ in range(int(rng.integers(1, 10))):
            if env.step(COMMANDS[int(rng.integers(6))])[2]:
                env.reset(options={"task": case})
        engine = env.unwrapped.engine
        samples["ours_plan"].append(clocked(lambda engine=engine: lengths.append(len(engine.plan() or ()))))
        samples["minigrid_decision"].append(
            clocked(lambda engine=engine: BabyAIBot(copy.deepcopy(engine.env)).replan())
        )
        samples["minigrid_plan"].append(clocked(lambda engine=engine: _minigrid_plan(copy.deepcopy(engine.env))))
    out = {
        name: {
            "cpu_ms": round(statistics.median(c for c, _ in values) * 1e3, 4),
            "wall_ms": round(statistics.median(w for _, w in values) * 1e3, 4),
        }
        for name, values in samples.items()
    }
    out["median_plan_length"] = statistics.median(lengths)
    return out


def _minigrid_plan(level_env) -> int:
    """minigrid's bot fed its own actions until the mission ends (or it fails); the actions it took."""
    try:
        bot, count = BabyAIBot(level_env), 0
        action = bot.replan()
        while count < level_env.max_steps:
            count += 1
            if level_env.step(action)[2]:
                break
            action = bot.replan()
        return count
    except Exception:  # a fresh bot fails in some carrying states
        return 0


# ------------------------------------------------------------------ vector envs
def vector_comparison(sizes: list[int], rounds: int, blocks: int) -> dict:
    out = {}
    for n in sizes:
        envs = gym.make_vec(f"agentgym_budget/BabyAI-{LEVEL}-v0", num_envs=n, progress="sparse")
        envs.reset(seed=0)
        levels = [raw() for _ in range(n)]
        for index, level_env in enumerate(levels):
            quiet_reset(level_env, index)
        rng = np.random.default_rng(3)
        totals = {"ours": [0.0, 0.0], "raw": [0.0, 0.0]}
        ratios = []
        for block in range(blocks):
            actions = rng.integers(0, 6, size=(rounds, n))

            sides = {
                "ours": partial(_vector_ours, envs, actions),
                "raw": partial(_vector_raw, levels, actions, rng),
            }
            timed = {}
            for name in ("raw", "ours") if block % 2 else ("ours", "raw"):
                play = sides[name]
                cpu, wall = clocked(play)
                totals[name] = [totals[name][0] + cpu, totals[name][1] + wall]
                timed[name] = cpu
            ratios.append(timed["raw"] / timed["ours"])
        envs.close()
        steps = rounds * n * blocks
        out[str(n)] = {
            name: {"steps_per_cpu_s": round(steps / cpu, 1), "steps_per_wall_s": round(steps / wall, 1)}
            for name, (cpu, wall) in totals.items()
        }
        out[str(n)]["ratio_ours_over_raw"] = round(
            out[str(n)]["ours"]["steps_per_cpu_s"] / out[str(n)]["raw"]["steps_per_cpu_s"], 3
        )
        out[str(n)]["median_block_ratio"] = round(statistics.median(ratios), 3)
    return out


def _vector_ours(envs, actions: np.ndarray) -> None:
    for row in actions:
        envs.step([COMMANDS[int(a)] for a in row])


def _vector_raw(levels: list, actions: np.ndarray, rng: np.random.Generator) -> None:
    for row in actions:
        for level_env, action in zip(levels, row, strict=True):
            if level_env.step(int(action))[2]:
                quiet_reset(level_env, int(rng.integers(10_000)))


def readme_rows(result: dict) -> list[list[str]]:
    step, reset, expert, vector = result["step"], result["reset"], result["expert"], result["vector"]
    small, large = result["snapshots"][LEVEL], result["snapshots"]["OpenDoor"]
    load = f"load average {result['load_average'][0]:.1f} -> {result['load_average'][1]:.1f}"
    return [
        [
            'BabyAI step with GLAM text, `gym.make` (GoToLocal, `progress="sparse"`) vs minigrid\'s own level `step`, '
            "same random commands from the same seeds",
            f"CPU time ratio **{step['ratio_sparse_over_raw']:.2f}** (median of paired blocks "
            f"{step['median_block_ratio_sparse']:.2f}; {step['sparse']['cpu_us_per_step']:.0f} vs "
            f"{step['raw']['cpu_us_per_step']:.0f} us per step)",
            f"<= 1.5; {load}",
            "`python benchmarks/babyai_speed.py`",
        ],
        [
            'BabyAI step with the default `progress="plan"`, random commands (each one that changes the level off '
            "the bot's plan plans again: the worst case; following the plan, or a command that changes nothing, "
            "costs nothing more)",
            f"{step['ratio_plan_over_raw']:.1f}x raw ({step['plan']['cpu_us_per_step']:.0f} us per step)",
            "",
            "same",
        ],
        [
            "BabyAI reset (GoToLocal): ours sparse / ours with its first plan / minigrid's `reset`",
            f"{reset['sparse']['cpu_ms']:.2f} / {reset['plan']['cpu_ms']:.2f} / {reset['raw']['cpu_ms']:.2f} ms CPU median",
            "",
            "same",
        ],
        [
            "BabyAI snapshot + restore, in memory / through bytes (`to_bytes` + `from_bytes` + restore elsewhere) "
            "vs minigrid's `copy.deepcopy` of the level: GoToLocal 8x8 / OpenDoor 22x22",
            f"**{small['memory']['cpu_ms']:.3f}** / {small['bytes']['cpu_ms']:.3f} ms vs {small['deepcopy']['cpu_ms']:.3f} ms; "
            f"{large['memory']['cpu_ms']:.3f} / {large['bytes']['cpu_ms']:.3f} ms vs {large['deepcopy']['cpu_ms']:.3f} ms "
            f"({small['bytes_size']:,} / {large['bytes_size']:,} bytes)",
            "<= 1 ms on 8x8",
            "same",
        ],
        [
            "BabyAI `expert_action` from a random mid-episode state (PutNextLocal): our bot planned to the mission's end "
            "vs minigrid's bot on a deepcopy, one decision / played to the end",
            f"{expert['ours_plan']['cpu_ms']:.2f} ms vs {expert['minigrid_decision']['cpu_ms']:.2f} / "
            f"{expert['minigrid_plan']['cpu_ms']:.2f} ms CPU median (median plan {expert['median_plan_length']:.0f} actions)",
            "",
            "same",
        ],
        [
            f'BabyAI `gym.make_vec` of {" / ".join(vector)} envs (GoToLocal, `progress="sparse"`) vs as many raw '
            "minigrid levels stepped in a loop, same actions",
            " / ".join(
                f"**{row['ratio_ours_over_raw']:.2f}x** (median of paired blocks {row['median_block_ratio']:.2f}x; "
                f"{row['ours']['steps_per_cpu_s']:,.0f} vs {row['raw']['steps_per_cpu_s']:,.0f} steps per CPU s)"
                for row in vector.values()
            ),
            "",
            "same",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="commands per block (step comparison)")
    parser.add_argument("--blocks", type=int, default=6, help="alternating blocks per side")
    parser.add_argument("--resets", type=int, default=300, help="seeds (reset comparison)")
    parser.add_argument("--states", type=int, default=400, help="states (snapshots, expert)")
    parser.add_argument("--envs", type=int, nargs="+", default=[64, 256], help="vector sizes")
    parser.add_argument("--rounds", type=int, default=20, help="vector steps per block")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.steps, args.blocks, args.resets, args.states, args.envs, args.rounds = 30, 2, 5, 5, [4], 2
    recording = _harness.start("babyai_speed", args.smoke)
    result = {
        "step": step_comparison(args.steps, args.blocks),
        "reset": reset_comparison(args.resets),
        "snapshots": {level: snapshot_comparison(level, args.states) for level in (LEVEL, "OpenDoor")},
        "expert": expert_comparison("PutNextLocal", max(2, args.states // 4)),
        "vector": vector_comparison(args.envs, args.rounds, max(2, args.blocks // 2)),
        "cores": os.cpu_count(),
        "load_average": [recording.load_before[0], os.getloadavg()[0]],
    }
    print(json.dumps(result, indent=2))
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
