"""A short scripted tour: budgeted episodes, a shared snapshot, and forks acting from it.

Run it with ``python -m agentgym_budget.demo``. It plays one TextWorld Cooking game:

1. the reference solver (``expert_action``) wins within a budget of its plan's length;
2. the same game under a budget one turn shorter is truncated, never terminated;
3. from a state a few turns in, ``fork(n)`` makes ``n`` independent copies; each copy makes
   one random mistake and then either re-plans (``expert_action``) or keeps its stale plan,
   and the printout shows which copies still win within the turns they have left.

Example:
    >>> lines = run(difficulty=1, seed=0, forks=2)
    >>> any("won" in line for line in lines)
    True
"""

from __future__ import annotations

import argparse
import random

import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

__all__ = ["main", "run"]

COOKING = "agentgym_budget/TextWorld-Cooking-v0"


def _play(env: gym.Env, info: dict, policy) -> tuple[str, int]:
    turns, terminated, truncated = 0, False, False
    while not (terminated or truncated):
        _, _, terminated, truncated, info = env.step(policy(info))
        turns += 1
    return ("won" if info["won"] else "lost" if info["lost"] else "out of turns"), turns


def _follow(plan: list[str]):
    remaining = iter(plan)
    return lambda info: next(remaining, "look")


def run(difficulty: int = 3, seed: int = 7, forks: int = 6) -> list[str]:
    """Play the tour and return the lines it prints."""
    lines: list[str] = []
    base = gym.make(COOKING, difficulty=difficulty, info_keys={"expert_action", "expert_plan"})
    _, info = base.reset(seed=seed)
    plan = info["expert_plan"]
    lines.append(f"task {info['task_id']}: {info['goal']}")
    lines.append(f"expert plan ({len(plan)} turns): {' > '.join(plan)}")

    for budget in (len(plan), len(plan) - 1):
        env = TurnBudget(base, max_turns=budget)
        _, info = env.reset(seed=seed)
        outcome, turns = _play(env, info, lambda i: i["expert_action"])
        lines.append(f"expert, budget {budget}: {outcome} after {_turns(turns)}")

    env = StateSnapshot(TurnBudget(base, max_turns=len(plan) + 2, show_budget=True))
    _, info = env.reset(seed=seed)
    for action in plan[:2]:
        _, _, _, _, info = env.step(action)
    stale_plan = info["expert_plan"]
    lines.append(f"shared state after 2 turns, {info['turns_left']} left; forking {forks} copies")
    rng = random.Random(seed)
    for index, fork in enumerate(env.fork(forks)):
        mistake = rng.choice([a for a in info["admissible_actions"] if a not in stale_plan[:1]])
        _, _, terminated, truncated, after = fork.step(mistake)
        recovers = index % 2 == 0
        if terminated or truncated:
            outcome, turns = ("won" if after["won"] else "lost" if after["lost"] else "out of turns"), 0
        elif recovers:
            outcome, turns = _play(fork, after, lambda i: i["expert_action"])
        else:
            outcome, turns = _play(fork, after, _follow(stale_plan))
        kind = (
            "the mistake ended the episode"
            if terminated or truncated
            else "re-plans"
            if recovers
            else "keeps its stale plan"
        )
        lines.append(f"  fork {index}: mistake {mistake!r}, {kind}: {outcome} after {_turns(turns + 1)}")
        fork.close()
    base.close()
    return lines


def _turns(count: int) -> str:
    """``"1 turn"``, ``"2 turns"``."""
    return f"{count} turn" if count == 1 else f"{count} turns"


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: ``python -m agentgym_budget.demo``."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--difficulty", type=int, default=3, help="Cooking difficulty 1-7")
    parser.add_argument("--seed", type=int, default=7, help="picks the game")
    parser.add_argument("--forks", type=int, default=6, help="copies made from the shared state")
    args = parser.parse_args(argv)
    for line in run(args.difficulty, args.seed, args.forks):
        print(line)


if __name__ == "__main__":
    main()
