"""How often the BabyAI expert (minigrid's bot, started from any state) wins: from reset and from random states.

For every BabyAI id, on the first ``--seeds`` tasks of the test split:

* **from reset**: the env's ``expert_action`` every turn, up to the level's own ``max_steps`` turns; on
  minigrid's own levels the plan is also compared with minigrid's bot played on minigrid's level of the
  same seed (the same actions expected);
* **from a random mid-episode state**: ``k`` random commands first (``k`` uniform in 1-20, the six
  commands uniformly; an episode that ends during them is not counted, and one lost there is counted as
  unwinnable), then ``expert_action`` every turn up to ``max_steps`` turns. States where the agent carries
  something are counted apart: there minigrid's own bot, started fresh, asserts and fails; ours drops first.

Targets: >= 98% from reset on every level, >= 99% from random states.

Usage::

    python benchmarks/babyai_expert.py [--seeds 200] [--smoke]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os

import _harness
import gymnasium as gym
import minigrid  # noqa: F401  (registers minigrid's own ids)
import numpy as np
from minigrid.utils.baby_ai_bot import BabyAIBot

import agentgym_budget
from agentgym_budget.tasks.babyai.levels import LEVELS, task_seed
from agentgym_budget.tasks.babyai.state import COMMANDS


def play_expert(env: gym.Env, info: dict, turns: int) -> tuple[bool, int]:
    """The expert's ``expert_action`` every turn, at most ``turns``; whether it won, and the turns it took."""
    for turn in range(1, turns + 1):
        action = info["expert_action"]
        if action is None:
            return False, turn - 1
        _, _, terminated, _, info = env.step(action)
        if terminated:
            return bool(info["won"]), turn
    return False, turns


def minigrid_bot_plan(level_id: str, seed: int) -> list[str]:
    """minigrid's own bot on minigrid's own level (``gym.make(level_id)``), fed its actions to the end."""
    level = gym.make(level_id).unwrapped
    with contextlib.redirect_stdout(io.StringIO()):  # minigrid prints while rejecting layouts
        level.reset(seed=seed)
    bot, actions = BabyAIBot(level), []
    action = bot.replan()
    for _ in range(level.max_steps):
        actions.append(COMMANDS[int(action)])
        if level.step(action)[2]:
            break
        action = bot.replan()
    return actions


def from_reset(env_id: str, seeds: int) -> dict:
    env = gym.make(env_id, split="test", progress="sparse", info_keys={"expert_action", "expert_plan"})
    level = LEVELS[env_id.split("/")[1].removeprefix("BabyAI-").removesuffix("-v0")]
    wins, turns, same = 0, [], 0
    for task in range(seeds):
        _, info = env.reset(options={"task": task})
        if level.minigrid_id is not None:
            same += info["expert_plan"] == minigrid_bot_plan(level.minigrid_id, task_seed(info["task_id"]))
        won, used = play_expert(env, info, env.unwrapped.engine.env.max_steps)
        wins += won
        turns.append(used)
    result = {"seeds": seeds, "won": wins, "mean_turns": round(float(np.mean(turns)), 2), "max_turns": max(turns)}
    return result | ({"same_plan_as_minigrids_bot": same} if level.minigrid_id is not None else {})


def from_random_states(env_id: str, seeds: int) -> dict:
    env = gym.make(env_id, split="test", progress="sparse", info_keys={"expert_action"})
    rng = np.random.default_rng(11)
    counts = {"states": 0, "won": 0, "carrying": 0, "carrying_won": 0, "ended_before": 0, "unwinnable": 0}
    failures = []
    for task in range(seeds):
        _, info = env.reset(options={"task": task})
        ended = False
        for _ in range(int(rng.integers(1, 21))):
            _, _, ended, _, info = env.step(COMMANDS[int(rng.integers(len(COMMANDS)))])
            if ended:
                counts["unwinnable" if info["lost"] else "ended_before"] += 1
                break
        if ended:
            continue
        carrying = env.unwrapped.engine.env.carrying is not None
        won, _ = play_expert(env, info, env.unwrapped.engine.env.max_steps)
        counts["states"] += 1
        counts["won"] += won
        counts["carrying"] += carrying
        counts["carrying_won"] += carrying and won
        if not won:
            failures.append(task)
    return counts | {"failed_tasks": failures[:10]}


def readme_rows(result: dict) -> list[list[str]]:
    reset, mid = result["from_reset"], result["from_random_states"]
    worst = min(reset, key=lambda name: reset[name]["won"] / reset[name]["seeds"])
    total = {key: sum(row[key] for row in mid.values()) for key in ("states", "won", "carrying", "carrying_won")}
    lost = sum(row["unwinnable"] for row in mid.values())
    seeds = next(iter(reset.values()))["seeds"]
    own = [row for row in reset.values() if "same_plan_as_minigrids_bot" in row]
    same = sum(row["same_plan_as_minigrids_bot"] for row in own)
    return [
        [
            f"BabyAI expert (minigrid's bot from any state) from reset, {seeds} test tasks of each of the {len(reset)} ids",
            f"won **{sum(r['won'] for r in reset.values()):,} of {sum(r['seeds'] for r in reset.values()):,}**; "
            + (
                f"every id {seeds}/{seeds}"
                if all(r["won"] == r["seeds"] for r in reset.values())
                else f"lowest {worst.split('/')[1]} {reset[worst]['won']}/{reset[worst]['seeds']}"
            )
            + f"; the same plan as minigrid's bot on minigrid's level: {same:,} of {seeds * len(own):,} "
            f"({len(own)} levels)",
            ">= 98% on every id",
            "`python benchmarks/babyai_expert.py`",
        ],
        [
            "BabyAI expert from a random mid-episode state (1-20 random commands first), same tasks",
            f"won **{total['won']:,} of {total['states']:,}** ({total['won'] / max(1, total['states']):.1%}); "
            f"carrying something: {total['carrying_won']} of {total['carrying']}; {lost} more states unwinnable "
            "(a box the mission needs opened: `lost`)",
            ">= 99%",
            "same",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=200, help="test tasks per id")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    ids = agentgym_budget.registered_ids("babyai")
    if args.smoke:
        args.seeds, ids = 3, ids[:2]
    recording = _harness.start("babyai_expert", args.smoke)
    result = {
        "from_reset": {env_id: from_reset(env_id, args.seeds) for env_id in ids},
        "from_random_states": {env_id: from_random_states(env_id, args.seeds) for env_id in ids},
        "cores": os.cpu_count(),
        "load_average": [recording.load_before[0], os.getloadavg()[0]],
    }
    print(json.dumps(result, indent=2))
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
