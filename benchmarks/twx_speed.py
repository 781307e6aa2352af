"""TextWorldExpress behind our contract vs the raw engine: vector throughput, step overhead, snapshots.

Every CPU figure counts the JVM too (its ``/proc`` CPU time, read with psutil, beside this process's):
the Java child does most of the work. Three measurements, side by side in one run, alternating blocks:

* **vector throughput**: ``gym.make_vec("agentgym_budget/TWX-CoinCollector-v0", num_envs=N, max_turns=100)``
  (our :class:`~agentgym_budget.vector.text_vector_env.TextVectorEnv`, default infos, next-step autoreset)
  vs ``N`` raw TextWorldExpress game objects in the same JVM driven the same way (``stepJSON`` + JSON
  parsing, a random valid action each, a new game after success, failure or 100 steps). Target:
  ours >= 0.8x the raw steps per CPU second.
* **step overhead**: one env (``gym.make``, default infos) vs TextWorldExpress's documented
  ``TextWorldExpressEnv.step`` (its own JVM) and vs the bare floor (``stepJSON`` + ``json.loads`` on a
  game object of our JVM), the same recorded actions of the same game. Target: <= 1.3x the documented env.
* **snapshots**: ``StateSnapshot.restore`` of a state ``depth`` actions deep vs ``reset`` + replaying the
  actions through the public API, and ``fork(G)`` vs ``G`` resets + replays (TextWorldExpress cannot copy a
  game: a restore is a replay in the shared JVM).

Usage::

    python benchmarks/twx_speed.py [--envs 64 256] [--rounds 200] [--episodes 20] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Callable

import _harness
import gymnasium as gym
import psutil

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.tasks.twx import gateway
from agentgym_budget.wrappers import StateSnapshot

COIN = "agentgym_budget/TWX-CoinCollector-v0"
EPISODE_CAP = 100


def cpu_now(jvm: int | None) -> tuple[float, float]:
    """CPU seconds of this process and of the JVM ``jvm`` (all their threads)."""
    times = psutil.Process(jvm).cpu_times() if jvm is not None else None
    return time.process_time(), (times.user + times.system) if times is not None else 0.0


def measure(work: Callable[[], int], jvm: int | None) -> tuple[int, float, float, float]:
    """``work()`` -> (steps it made, CPU seconds incl. the JVM, wall seconds, the JVM's share of the CPU)."""
    (python, java), wall = cpu_now(jvm), time.perf_counter()
    steps = work()
    (python_after, java_after), wall_after = cpu_now(jvm), time.perf_counter()
    java_cpu = java_after - java
    return steps, python_after - python + java_cpu, wall_after - wall, java_cpu


# ------------------------------------------------------------------ vector throughput
def ours_vector(n: int) -> Callable[[int], int]:
    envs = gym.make_vec(COIN, num_envs=n, max_turns=EPISODE_CAP)
    _, infos = envs.reset(seed=0)
    rng = random.Random(0)
    state = {"infos": infos}

    def run(rounds: int) -> int:
        infos = state["infos"]
        for _ in range(rounds):
            actions = [rng.choice(list(valid)) for valid in infos["admissible_actions"]]
            _, _, _, _, infos = envs.step(actions)
        state["infos"] = infos
        return rounds * n

    return run


def raw_vector(n: int) -> Callable[[int], int]:
    games = [gateway.new_game_interface() for _ in range(n)]
    rng, seeds = random.Random(0), iter(range(10**9))
    live: list[dict] = []
    for game in games:
        game.load("coin", "")
        live.append({"data": json.loads(game.generateNewGameJSON(next(seeds) % 1000, "train", False)), "steps": 0})

    def run(rounds: int) -> int:
        for _ in range(rounds):
            for game, slot in zip(games, live, strict=True):
                data = slot["data"]
                if data["tasksuccess"] or data["taskfailure"] or slot["steps"] >= EPISODE_CAP:  # next-step reset
                    slot["data"] = json.loads(game.generateNewGameJSON(next(seeds) % 1000, "train", False))
                    slot["steps"] = 0
                else:
                    slot["data"] = json.loads(game.stepJSON(rng.choice(data["validActions"])))
                    slot["steps"] += 1
        return rounds * n

    return run


def vector_throughput(sizes: list[int], rounds: int, blocks: int) -> dict:
    jvm = gateway.jvm_pid()
    results = {}
    for n in sizes:
        ours, raw = ours_vector(n), raw_vector(n)
        ours(max(1, rounds // 2)), raw(max(1, rounds // 2))  # JIT warm-up
        totals = {"ours": [0, 0.0, 0.0, 0.0], "raw": [0, 0.0, 0.0, 0.0]}
        pair_ratios = []
        for _ in range(blocks):
            rates = {}
            for name, run in (("raw", raw), ("ours", ours)):
                measured = measure(lambda run=run: run(rounds), jvm)
                totals[name] = [a + b for a, b in zip(totals[name], measured, strict=True)]
                rates[name] = measured[0] / measured[1]
            pair_ratios.append(rates["ours"] / rates["raw"])
        row = {
            name: {
                "steps": s,
                "cpu_s": round(c, 3),
                "jvm_cpu_s": round(j, 3),
                "wall_s": round(w, 3),
                "steps_per_cpu_s": round(s / c, 1),
                "steps_per_wall_s": round(s / w, 1),
            }
            for name, (s, c, w, j) in totals.items()
        }
        row["ratio_ours_over_raw"] = round(row["ours"]["steps_per_cpu_s"] / row["raw"]["steps_per_cpu_s"], 3)
        row["median_block_ratio"] = round(statistics.median(pair_ratios), 3)
        results[str(n)] = row
    return results


# ------------------------------------------------------------------ single-env step overhead
def record_actions(length: int) -> list[str]:
    env = gym.make(COIN)
    _, info = env.reset(seed=0)
    rng, actions = random.Random(1), []
    for _ in range(length):
        action = rng.choice([a for a in info["admissible_actions"] if a != "take coin"])
        actions.append(action)
        _, _, terminated, _, info = env.step(action)
        assert not terminated
    return actions


def step_overhead(length: int, episodes: int) -> dict:
    from textworld_express import TextWorldExpressEnv

    actions = record_actions(length)
    ours = gym.make(COIN)
    ours.reset(seed=0)
    seed = int(ours.unwrapped.task_id.rsplit("-", 1)[1])
    params = ours.unwrapped.params_string
    documented = TextWorldExpressEnv(envStepLimit=10**9)
    floor = gateway.new_game_interface()
    floor.load("coin", params)
    jvm, documented_jvm = gateway.jvm_pid(), documented._gateway.java_process.pid

    def play_ours() -> int:
        ours.reset(seed=0)
        return sum(1 for action in actions if ours.step(action))

    def play_documented() -> int:
        documented.reset(seed=seed, gameFold="train", gameName="coin", gameParams=params)
        return sum(1 for action in actions if documented.step(action))

    def play_floor() -> int:
        floor.generateNewGameJSON(seed, "train", False)
        return sum(1 for action in actions if json.loads(floor.stepJSON(action)))

    sides = {"ours": (play_ours, jvm), "documented": (play_documented, documented_jvm), "floor": (play_floor, jvm)}
    for play, _ in sides.values():
        play()  # warm-up
    totals = {name: [0, 0.0, 0.0] for name in sides}
    for _ in range(episodes):
        for name, (play, pid) in sides.items():
            steps, cpu, wall, _ = measure(play, pid)
            totals[name] = [a + b for a, b in zip(totals[name], (steps, cpu, wall), strict=True)]
    documented.close()
    out = {
        name: {"cpu_ms_per_step": round(c / s * 1e3, 4), "wall_ms_per_step": round(w / s * 1e3, 4)}
        for name, (s, c, w) in totals.items()
    }
    out["ratio_ours_over_documented"] = round(out["ours"]["cpu_ms_per_step"] / out["documented"]["cpu_ms_per_step"], 3)
    out["ratio_ours_over_floor"] = round(out["ours"]["cpu_ms_per_step"] / out["floor"]["cpu_ms_per_step"], 3)
    out["actions_per_episode"], out["episodes"] = len(actions), episodes
    return out


# ------------------------------------------------------------------ snapshots
def snapshots(depth: int, group: int, repeats: int) -> dict:
    jvm = gateway.jvm_pid()
    env = StateSnapshot(gym.make(COIN))
    _, info = env.reset(seed=0)
    rng, actions = random.Random(2), []
    for _ in range(depth):
        action = rng.choice([a for a in info["admissible_actions"] if a != "take coin"])
        actions.append(action)
        _, _, _, _, info = env.step(action)
    snap = env.snapshot()
    other = StateSnapshot(gym.make(COIN))
    other.reset(seed=1)

    def restore() -> int:
        other.restore(snap)
        return 1

    def replay() -> int:
        other.reset(seed=0)
        for action in actions:
            other.step(action)
        return 1

    def fork() -> int:
        for member in env.fork(group):
            member.close()
        return group

    def separate() -> int:
        for _ in range(group):
            member = StateSnapshot(gym.make(COIN))
            member.reset(seed=0)
            for action in actions:
                member.step(action)
            member.close()
        return group

    out = {}
    for name, work in (
        ("restore", restore),
        ("reset_and_replay", replay),
        ("fork", fork),
        ("resets_and_replays", separate),
    ):
        work()
        count, cpu, wall = 0, 0.0, 0.0
        for _ in range(repeats):
            c, u, w, _ = measure(work, jvm)
            count, cpu, wall = count + c, cpu + u, wall + w
        out[name] = {"cpu_ms": round(cpu / count * 1e3, 3), "wall_ms": round(wall / count * 1e3, 3)}
    out["depth"], out["group"] = depth, group
    return out


def readme_rows(result: dict) -> list[list[str]]:
    vector, step, snap = result["vector"], result["step"], result["snapshots"]
    load = f"load average {result['load_average'][0]:.1f} -> {result['load_average'][1]:.1f}"
    sizes = " / ".join(vector)
    return [
        [
            f"TWX Coin Collector, `gym.make_vec` of {sizes} envs (one JVM) vs the raw engine driven the same way "
            "in one JVM (CPU incl. the JVM)",
            " / ".join(
                f"**{row['ratio_ours_over_raw']:.2f}x** (median of paired blocks {row['median_block_ratio']:.2f}x; "
                f"{row['ours']['steps_per_cpu_s']:,.0f} vs "
                f"{row['raw']['steps_per_cpu_s']:,.0f} steps per CPU s)"
                for row in vector.values()
            ),
            f">= 0.8x; {load}",
            "`python benchmarks/twx_speed.py`",
        ],
        [
            "TWX step, `gym.make` (default infos) vs TextWorldExpress's `TextWorldExpressEnv.step` and the bare "
            "`stepJSON` floor, same actions (CPU incl. the JVM)",
            f"**{step['ratio_ours_over_documented']:.2f}x** documented, {step['ratio_ours_over_floor']:.2f}x floor "
            f"({step['ours']['cpu_ms_per_step']:.3f} vs {step['documented']['cpu_ms_per_step']:.3f} / "
            f"{step['floor']['cpu_ms_per_step']:.3f} ms)",
            f"<= 1.3x documented; {load}",
            "same",
        ],
        [
            f"TWX snapshot {snap['depth']} actions deep: `restore` vs `reset` + replay; `fork({snap['group']})` vs "
            f"{snap['group']} resets + replays (CPU incl. the JVM)",
            f"{snap['restore']['cpu_ms']:.2f} vs {snap['reset_and_replay']['cpu_ms']:.2f} ms; "
            f"{snap['fork']['cpu_ms']:.2f} vs {snap['resets_and_replays']['cpu_ms']:.2f} ms per member",
            f"fork < resets + replays; {load}",
            "same",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, nargs="+", default=[64, 256], help="vector sizes")
    parser.add_argument("--rounds", type=int, default=40, help="vector steps per block")
    parser.add_argument("--blocks", type=int, default=4, help="alternating blocks per side")
    parser.add_argument("--steps", type=int, default=200, help="actions per episode (step overhead)")
    parser.add_argument("--episodes", type=int, default=20, help="episodes per side (step overhead)")
    parser.add_argument("--depth", type=int, default=30, help="actions before the snapshot")
    parser.add_argument("--group", type=int, default=8, help="fork size")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.envs, args.rounds, args.blocks, args.steps, args.episodes, args.depth, args.group = [4], 3, 1, 10, 2, 5, 2
    recording = _harness.start("twx_speed", args.smoke)
    gateway.new_game_interface()  # start the JVM before timing
    result = {
        "vector": vector_throughput(args.envs, args.rounds, args.blocks),
        "step": step_overhead(args.steps, args.episodes),
        "snapshots": snapshots(args.depth, args.group, 3 if args.smoke else 20),
        "cores": os.cpu_count(),
        "load_average": [recording.load_before[0], os.getloadavg()[0]],
    }
    print(json.dumps(result, indent=2))
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
