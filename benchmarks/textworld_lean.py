"""TextWorld step cost: lean mode vs raw jericho vs the default stack, side by side on the same game and actions.

For each game, one recorded action sequence (random admissible actions, seeded) is played by:

* ``raw``: jericho's ``FrotzEnv.step`` on the ``.z8`` file, nothing else (the floor);
* ``textworld``: ``textworld.start`` with no infos requested (what ``textworld.gym`` runs without infos);
* ``lean``: the full user stack ``gym.make(ID, lean=True)`` + ``TurnBudget`` + ``StateSnapshot``;
* ``default``: the same stack without ``lean`` (admissible actions, i.e. TextWorld's state tracking).

Blocks of episodes alternate between the four so machine noise hits all alike; the figures are
median step times, in CPU time (the ratio the target is read from: a loaded machine inflates wall
time) and wall time, with the load average before and after. Games: Coin Collector, Cooking, a
custom world (``TextWorld-Custom-v0``, a ``.z8`` made by TextWorld's generic generator) and
Treasure Hunter. Target: lean / raw <= 1.2 in CPU time on each game. The lean and default stacks
are also checked to return the same observations, rewards and ``won`` / ``progress`` on every step.

Usage::

    python benchmarks/textworld_lean.py [--episodes 30] [--steps 40]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import warnings
from collections.abc import Callable
from pathlib import Path

import _harness
import gymnasium as gym
import jericho
import textworld
from textworld_overhead import (  # the same random admissible actions as the overhead benchmark
    record_actions,
    time_steps,
)

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

RESULTS = Path(__file__).parent / "results"
GAMES = (
    ("agentgym_budget/TextWorld-Cooking-v0", {"difficulty": 3}),
    ("agentgym_budget/TextWorld-CoinCollector-v0", {"level": 110, "progress": "score"}),  # "plan" tracks the state
    ("agentgym_budget/TextWorld-Custom-v0", {}),
    ("agentgym_budget/TextWorld-TreasureHunter-v0", {"level": 10}),
)


def stack(env_id: str, kwargs: dict, lean: bool) -> gym.Env:
    return StateSnapshot(TurnBudget(gym.make(env_id, lean=lean, **kwargs), max_turns=10_000))


def timed(
    reset: Callable[[], None], step: Callable[[str], object], actions: list[str]
) -> tuple[list[float], list[float]]:
    reset()
    return time_steps(step, actions)


def outcomes(env: gym.Env, seed: int, actions: list[str]) -> list[tuple]:
    env.reset(seed=seed)
    rows = []
    for action in actions:
        observation, reward, terminated, _, info = env.step(action)
        rows.append((observation, reward, terminated, info["won"], info["lost"], info["progress"]))
    return rows


def measure(env_id: str, kwargs: dict, episodes: int, steps: int) -> dict:
    default, lean = stack(env_id, kwargs, False), stack(env_id, kwargs, True)
    seed = 0
    actions = record_actions(default, seed, steps)
    base = default.unwrapped
    path, engine_seed = base._engine.game_path, base._engine_seed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frotz = jericho.FrotzEnv(path, engine_seed)
    bare = textworld.start(path, request_infos=textworld.EnvInfos())

    def frotz_reset() -> None:
        frotz.seed(engine_seed)
        frotz.reset()

    def bare_reset() -> None:
        bare.seed(engine_seed)
        bare.reset()

    runners = {
        "raw": (frotz_reset, frotz.step),
        "textworld": (bare_reset, bare.step),
        "lean": (lambda: lean.reset(seed=seed), lean.step),
        "default": (lambda: default.reset(seed=seed), default.step),
    }
    times: dict[str, list[float]] = {name: [] for name in runners}
    cpu_times: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(episodes):
        for name, (reset, step) in runners.items():
            walls, cpus = timed(reset, step, actions)
            times[name] += walls
            cpu_times[name] += cpus
    medians = {name: statistics.median(values) * 1e3 for name, values in times.items()}
    cpu = {name: statistics.median(values) * 1e3 for name, values in cpu_times.items()}
    same = outcomes(lean, seed, actions) == outcomes(default, seed, actions)
    for env in (default, lean, bare):
        env.close()
    frotz.close()
    return {
        "env": env_id.split("/", 1)[1],
        "kwargs": kwargs,
        "actions": len(actions),
        "median_step_ms": {name: round(value, 4) for name, value in medians.items()},
        "median_step_cpu_ms": {name: round(value, 4) for name, value in cpu.items()},
        "lean_over_raw_cpu": round(cpu["lean"] / cpu["raw"], 3),
        "default_over_raw_cpu": round(cpu["default"] / cpu["raw"], 3),
        "textworld_over_raw_cpu": round(cpu["textworld"] / cpu["raw"], 3),
        "lean_over_raw": round(medians["lean"] / medians["raw"], 3),
        "textworld_over_raw": round(medians["textworld"] / medians["raw"], 3),
        "default_over_raw": round(medians["default"] / medians["raw"], 3),
        "default_over_lean": round(medians["default"] / medians["lean"], 3),
        "lean_steps_per_s": round(1e3 / medians["lean"]),
        "default_steps_per_s": round(1e3 / medians["default"]),
        "same_outcomes": same,
    }


def readme_rows(result: dict) -> list[list[str]]:
    """The README row of this benchmark, formatted from its ``result``."""
    games = result["games"]

    def each(pick: Callable[[dict], float]) -> str:
        return " / ".join(f"{pick(row):.2f}" for row in games)

    labels = " / ".join(f"{row['env'].split('-')[1]} {next(iter(row['kwargs'].values()), '')}".strip() for row in games)
    same = all(row["same_outcomes"] for row in games)
    load = result["load_average"]
    figure = (
        f"lean / raw **{each(lambda row: row['lean_over_raw_cpu'])}** in CPU time, "
        f"{each(lambda row: row['lean_over_raw'])} in wall time (raw "
        f"{each(lambda row: row['median_step_cpu_ms']['raw'])} ms CPU median; TextWorld without infos / raw "
        f"{each(lambda row: row['textworld_over_raw_cpu'])}; default stack "
        f"{each(lambda row: row['median_step_cpu_ms']['default'])} ms CPU); load average {load[0]:.1f} -> "
        f"{load[1]:.1f}; {'identical outcomes on every step' if same else 'outcomes DIFFER'}"
    )
    return [
        [
            "TextWorld step, lean mode (`lean=True`, full stack `gym.make` + `TurnBudget` + `StateSnapshot`) vs raw "
            f"jericho `FrotzEnv.step` vs the default stack, same game and actions ({labels})",
            figure,
            f"<= {result['target_lean_over_raw_cpu']} (CPU)",
            "`python benchmarks/textworld_lean.py`",
        ]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=30, help="episodes per runner (alternating blocks)")
    parser.add_argument("--steps", type=int, default=40, help="actions per episode")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.steps = 2, 5
    recording = _harness.start("textworld_lean", args.smoke)
    rows = [measure(env_id, kwargs, args.episodes, args.steps) for env_id, kwargs in GAMES]
    print(f"CPU ms per step\n{'game':<34} {'raw':>7} {'tw':>7} {'lean':>7} {'default':>8}  lean/raw  default/raw  same")
    for row in rows:
        ms = row["median_step_cpu_ms"]
        label = f"{row['env']}{row['kwargs']}"
        print(
            f"{label:<34} {ms['raw']:7.3f} {ms['textworld']:7.3f} {ms['lean']:7.3f} {ms['default']:8.3f}"
            f"  {row['lean_over_raw_cpu']:8.3f}  {row['default_over_raw_cpu']:11.3f}  {row['same_outcomes']}"
        )
    result = {
        "target_lean_over_raw_cpu": 1.2,
        "games": rows,
        "load_average": [recording.load_before[0], os.getloadavg()[0]],
    }
    print(json.dumps(result, indent=2))
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
