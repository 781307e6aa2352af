"""info["state_digest"] across processes: the same states give the same digests whatever the hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)

ROOT = Path(__file__).resolve().parent.parent

IDS = [
    ("TextWorld-CoinCollector-v0", {"level": 5}),
    ("ALFWorld-v0", {"num_games": 1}),
    ("WebShop-1k-v0", {}),
    ("TWX-CoinCollector-v0", {"num_locations": 3}),
    ("BabyAI-MixedTrainLocal-v0", {}),
]


def expert_digests() -> dict[str, list[str]]:
    """The digests of the first states of the expert's episode on each id (seed 3)."""
    digests = {}
    for env_id, kwargs in IDS:
        env = gym.make("agentgym_budget/" + env_id, info_keys={"state_digest", "expert_plan"}, **kwargs)
        _, info = env.reset(seed=3)
        digests[env_id] = [info["state_digest"]]
        for action in info["expert_plan"][:4]:
            digests[env_id].append(env.step(action)[-1]["state_digest"])
        env.close()
    return digests


@pytest.mark.slow  # a fresh interpreter plays five families
def test_digests_are_equal_in_a_process_with_another_hash_seed() -> None:
    here = expert_digests()
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    code = "import json, tests.test_state_digest as t; print(json.dumps(t.expert_digests()))"
    environ = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == here
    for env_id, digests in here.items():
        assert len(set(digests)) > 1, f"{env_id}: the expert's steps never changed the digest"  # TWX's first: look
