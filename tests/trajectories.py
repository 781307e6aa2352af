"""Recorded trajectories: what envs returned on fixed episodes, stored small to compare after a change.

Each case plays a few episodes with actions drawn by a seeded generator from the admissible actions
(sometimes an inadmissible one) and records, per step, a short digest of the observation, the reward,
``terminated`` and every ``info`` value. ``tests/data/trajectories.json`` holds the digests recorded
on the code before infos became lazy; :func:`play_case` replays a case and the test compares them.

Regenerate (only when a change of outputs is intended)::

    python -m tests.trajectories
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)

DATA = Path(__file__).parent / "data" / "trajectories.json"

_TW_KEYS = ["expert_action", "expert_plan", "score", "max_score", "moves", "inventory", "description", "facts"]
CASES: dict[str, dict[str, Any]] = {
    # recorded when Coin Collector's progress was the score (its default is now "plan": test_textworld_progress.py)
    "coin-default": {"id": "agentgym_budget/TextWorld-CoinCollector-v0", "kwargs": {"level": 5, "progress": "score"}},
    "coin-all": {
        "id": "agentgym_budget/TextWorld-CoinCollector-v0",
        "kwargs": {"level": 5, "info_keys": _TW_KEYS, "progress": "score"},
    },
    "coin-lean": {
        "id": "agentgym_budget/TextWorld-CoinCollector-v0",
        "kwargs": {"level": 5, "lean": True, "progress": "score"},
    },
    "cooking-default": {"id": "agentgym_budget/TextWorld-Cooking-v0", "kwargs": {"difficulty": 3}},
    "cooking-all": {"id": "agentgym_budget/TextWorld-Cooking-v0", "kwargs": {"difficulty": 3, "info_keys": _TW_KEYS}},
    "cooking-lean-moves": {
        "id": "agentgym_budget/TextWorld-Cooking-v0",
        "kwargs": {"difficulty": 3, "lean": True, "info_keys": ["moves", "score"]},
    },
    "alfworld-default": {"id": "agentgym_budget/ALFWorld-v0", "kwargs": {"num_games": 6}},
    "alfworld-all": {
        "id": "agentgym_budget/ALFWorld-v0",
        "kwargs": {"num_games": 6, "info_keys": ["expert_action", "expert_plan", "facts", "task_type"]},
    },
}
EPISODES = 3
STEPS = 12


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _record(observation: str, reward: float, terminated: bool, info: dict[str, Any]) -> dict[str, str]:
    record = {"obs": _digest(observation), "reward": _digest(reward), "terminated": _digest(terminated)}
    record |= {f"info.{key}": _digest(info[key]) for key in sorted(info)}
    return record


def _choose(info: dict[str, Any], rng: random.Random) -> str:
    admissible = info.get("admissible_actions") or ["look", "inventory", "go north", "go east", "take coin"]
    if rng.random() < 0.1:
        return rng.choice(["dance", "look", "go to the moon", "take"])
    return rng.choice(sorted(admissible))


def play_case(name: str) -> list[list[dict[str, str]]]:
    """The digests of :data:`EPISODES` episodes of case ``name`` (reset record first, then one per step)."""
    case = CASES[name]
    env = gym.make(case["id"], **case["kwargs"])
    episodes = []
    try:
        for episode in range(EPISODES):
            rng = random.Random(1000 + episode)
            observation, info = env.reset(seed=episode)
            records = [_record(observation, 0.0, False, info)]
            for _ in range(STEPS):
                observation, reward, terminated, _, info = env.step(_choose(info, rng))
                records.append(_record(observation, reward, terminated, info))
                if terminated:
                    break
            episodes.append(records)
    finally:
        env.close()
    return episodes


def main() -> None:
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps({name: play_case(name) for name in CASES}, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"wrote {DATA} ({DATA.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
