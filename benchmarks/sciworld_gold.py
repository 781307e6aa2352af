"""ScienceWorld's gold paths and expert: wins per task, the re-plan after detours, and the candidate lists.

Three measurements on ``agentgym_budget/ScienceWorld-v0`` (no simplifications), ``--variations`` variations
of each of the 30 tasks (the first ones of the ``--split``):

* **gold path**: the expert's plan from the reset, played to the end: does it win (score 100), in how many
  actions, through how many distinct scores (the process signal), how long did generating it take;
* **re-plan**: ``--trials`` episodes per variation that follow the gold path to a random depth, take
  ``--detour`` random commands from ``admissible_actions`` that are not the next gold step, then follow
  the expert's plan (the rest of the gold path from the last gold step taken): how often it still wins;
* **candidates**: along each gold path, the size of ``admissible_actions`` (at most 64 sensible commands,
  ``agentgym_budget.tasks.sciworld.candidates``), of the sensible list before the cap, and of the engine's
  whole list (``valid_actions``), and
  how often the next gold command is in each (the gold path spells objects in its own way, so it is often in
  neither: the engine's list names each object once).

Usage::

    python benchmarks/sciworld_gold.py [--variations 2] [--trials 3] [--detour 1 3] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time

import _harness
import gymnasium as gym
import psutil

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.tasks.sciworld import engine
from agentgym_budget.tasks.sciworld.candidates import bounded
from agentgym_budget.tasks.sciworld.catalog import TASKS

SCIWORLD = "agentgym_budget/ScienceWorld-v0"
KEYS = {"expert_plan", "admissible_actions", "valid_actions", "score"}


def jvm_cpu() -> float:
    total = 0.0
    for pid in (engine.JVM.pid(), engine.GOLD_JVM.pid()):
        if pid is not None and psutil.pid_exists(pid):
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
    return total


def gold_run(env: gym.Env, task_id: str) -> dict:
    began, cpu = time.perf_counter(), time.process_time() + jvm_cpu()
    _, info = env.reset(options={"task": task_id})
    generated = {
        "gold_s": round(time.perf_counter() - began, 3),
        "gold_cpu_s": round(time.process_time() + jvm_cpu() - cpu, 3),
    }
    plan, sizes, valid_sizes, sensible, in_candidates, in_valid = list(info["expert_plan"]), [], [], [], 0, 0
    played, scores = 0, [info["score"]]
    for action in plan:
        played += 1
        sizes.append(len(info["admissible_actions"]))
        sensible.append(len(bounded(env.unwrapped._live_world().valid_actions(), limit=10**6)))  # before the cap
        valid_sizes.append(len(info["valid_actions"]))
        in_candidates += action in info["admissible_actions"]
        in_valid += action in info["valid_actions"]
        _, _, terminated, _, info = env.step(action)
        scores.append(info["score"])
        if terminated:
            break
    return {
        "task_id": task_id, "length": len(plan), "played": played, "won": bool(info["won"]), "scores": scores, "score": info["score"], **generated,
        "candidates": sizes, "sensible": sensible, "valid": valid_sizes, "gold_in_candidates": in_candidates, "gold_in_valid": in_valid,
    }  # fmt: skip


def replan_trial(env: gym.Env, task_id: str, plan: list[str], detour: int, rng: random.Random) -> dict:
    """``plan``: the gold path up to its win (some gold paths go on after it)."""
    depth = rng.randrange(len(plan))
    _, info = env.reset(options={"task": task_id})
    for action in plan[:depth]:
        _, _, _, _, info = env.step(action)
    taken, terminated = [], False
    for _ in range(detour):
        admissible = bounded(env.unwrapped._live_world().valid_actions(), limit=64)  # only where a detour is drawn
        options = [a for a in admissible if a != plan[depth]] or ["look around"]
        taken.append(rng.choice(options))
        _, _, terminated, _, info = env.step(taken[-1])
        if terminated:
            break
    lost_in_detour = bool(terminated and info["lost"])  # a wrong ``focus on``: no plan can help
    turns = 0
    while not terminated and info["expert_plan"] and turns < 2 * len(plan):
        _, _, terminated, _, info = env.step(info["expert_plan"][0])
        turns += 1
    return {
        "task_id": task_id, "depth": depth, "detour_asked": detour, "detour": taken, "won": bool(info["won"]),
        "lost": bool(info["lost"]), "lost_in_detour": lost_in_detour,
    }  # fmt: skip


def summary(golds: list[dict], trials: list[dict]) -> dict:
    sizes = [size for gold in golds for size in gold["candidates"]]
    valid = [size for gold in golds for size in gold["valid"]]
    sensible = [size for gold in golds for size in gold["sensible"]]
    steps = sum(len(gold["candidates"]) for gold in golds)
    by_task: dict[str, list[dict]] = {}
    for gold in golds:
        by_task.setdefault(gold["task_id"].rsplit("-", 1)[0], []).append(gold)
    replan = {}
    for detour in sorted({t["detour_asked"] for t in trials}):
        chosen = [t for t in trials if t["detour_asked"] == detour]
        survived = [t for t in chosen if not t["lost_in_detour"]]
        replan[str(detour)] = {
            "trials": len(chosen),
            "won": sum(t["won"] for t in chosen),
            "win_rate": round(sum(t["won"] for t in chosen) / len(chosen), 3),
            "lost_during_detour": len(chosen) - len(survived),
            "won_after_surviving_detours": sum(t["won"] for t in survived),
            "win_rate_after_surviving_detours": round(sum(t["won"] for t in survived) / max(1, len(survived)), 3),
        }
    return {
        "tasks_won_on_every_variation": sum(all(g["won"] for g in runs) for runs in by_task.values()),
        "tasks": len(by_task),
        "variations_won": sum(g["won"] for g in golds),
        "variations": len(golds),
        "lengths": {task: [g["played"] for g in runs] for task, runs in by_task.items()},
        "gold_seconds": {task: [g["gold_s"] for g in runs] for task, runs in by_task.items()},
        "candidates": _distribution(sizes),
        "sensible": _distribution(sensible),
        "valid": _distribution(valid),
        "distinct_scores": _distribution([len(set(g["scores"])) for g in golds]),
        "score_rises": _distribution(
            [sum(b > a for a, b in zip(g["scores"], g["scores"][1:], strict=False)) for g in golds]
        ),
        "gold_in_candidates": round(sum(g["gold_in_candidates"] for g in golds) / max(1, steps), 3),
        "gold_in_valid": round(sum(g["gold_in_valid"] for g in golds) / max(1, steps), 3),
        "states": steps,
        "replan": replan,
    }


def _distribution(values: list[int]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p10": ordered[len(ordered) // 10],
        "p90": ordered[(9 * len(ordered)) // 10],
        "min": ordered[0],
        "max": ordered[-1],
        "mean": round(statistics.fmean(ordered), 1),
    }


def readme_rows(result: dict) -> list[list[str]]:
    s = result["summary"]
    replan = "; ".join(
        f"{detour} random command{'s' if detour != '1' else ''}: **{row['win_rate']:.2f}** ({row['won']}/"
        f"{row['trials']}; {row['lost_during_detour']} lost in the detour, {row['win_rate_after_surviving_detours']:.2f} "
        "of the others)"
        for detour, row in s["replan"].items()
    )
    c, f, v = s["candidates"], s["sensible"], s["valid"]
    lengths = sorted(n for runs in s["lengths"].values() for n in runs)
    scores, rises = s["distinct_scores"], s["score_rises"]
    return [
        [
            f"ScienceWorld gold paths, {s['variations'] // max(1, s['tasks'])} {result['split']} variations of each "
            "task, played from the reset",
            f"**{s['variations_won']}/{s['variations']}** won (score 100), {s['tasks_won_on_every_variation']}/"
            f"{s['tasks']} tasks on every variation; {lengths[0]} to {lengths[-1]} actions "
            f"(median {statistics.median(lengths):g})",
            "every task on >= 2 variations",
            "`python benchmarks/sciworld_gold.py`",
        ],
        [
            "ScienceWorld process signal: distinct scores along each gold path (the reset's included)",
            f"median **{scores['median']:g}** (min {scores['min']}, max {scores['max']}); the score rises "
            f"{rises['median']:g} times per path (median; min {rises['min']}, max {rises['max']}), "
            f"{s['variations']} paths",
            "",
            "same",
        ],
        [
            "ScienceWorld expert after random detours (the rest of the gold path from the last gold step taken)",
            replan,
            "measured (the engine has no planner)",
            "same",
        ],
        [
            f"ScienceWorld `admissible_actions` (bounded, at most 64) vs the engine's whole list, on {s['states']} "
            "gold-path states",
            f"the engine's list: median **{v['median']:g}** (p10 {v['p10']}, p90 {v['p90']}, max {v['max']}); "
            f"bounded: median {c['median']:g} (p10 {c['p10']}), before the cap {f['median']:g} (p90 {f['p90']}); "
            f"the next gold command in the bounded list {s['gold_in_candidates']:.2f}, in the engine's "
            f"{s['gold_in_valid']:.2f}",
            "<= 64",
            "same",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variations", type=int, default=2, help="variations per task")
    parser.add_argument("--split", default="train", choices=("train", "dev", "test"))
    parser.add_argument("--trials", type=int, default=3, help="detour episodes per variation and detour length")
    parser.add_argument("--detour", type=int, nargs="+", default=[1, 3], help="detour lengths")
    parser.add_argument("--tasks", nargs="*", default=None, help="tasks (default: all 30)")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.variations, args.trials, args.detour, args.tasks = 1, 1, [1], ["find-animal"]
    recording = _harness.start("sciworld_gold", args.smoke)
    rng = random.Random(0)
    golds, trials = [], []
    for name in args.tasks or list(TASKS):
        env = gym.make(SCIWORLD, task=name, split=args.split, info_keys=KEYS)
        player = gym.make(SCIWORLD, task=name, split=args.split, info_keys={"expert_plan"})
        for task_id in env.unwrapped.task_ids[: args.variations]:
            gold = gold_run(env, task_id)
            golds.append(gold)
            plan = list(env.unwrapped.gold_path)[: gold["played"]]
            for detour in args.detour:
                trials += [replan_trial(player, task_id, plan, detour, rng) for _ in range(args.trials)]
            print(json.dumps({k: gold[k] for k in ("task_id", "length", "won", "gold_s")}), flush=True)
        env.close()
        player.close()
    result = {
        "split": args.split,
        "summary": summary(golds, trials),
        "golds": golds,
        "trials": trials,
        "cores": os.cpu_count(),
    }
    print(json.dumps(result["summary"], indent=2))
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
