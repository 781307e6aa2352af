"""info["state_digest"] across processes: the same states give the same digests whatever the hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PLAY = """
import json, sys
import gymnasium as gym
import agentgym_budget
digests = {}
for env_id, kwargs in json.loads(sys.argv[1]):
    env = gym.make("agentgym_budget/" + env_id, info_keys={"state_digest", "expert_plan"}, **kwargs)
    _, info = env.reset(seed=3)
    found = [info["state_digest"]]
    for action in info["expert_plan"][:4]:
        found.append(env.step(action)[-1]["state_digest"])
    digests[env_id] = found
    env.close()
print(json.dumps(digests))
"""

IDS = [
    ("TextWorld-CoinCollector-v0", {"level": 5}),
    ("ALFWorld-v0", {"num_games": 1}),
    ("WebShop-1k-v0", {}),
    ("TWX-CoinCollector-v0", {"num_locations": 3}),
]


@pytest.mark.slow  # two fresh interpreters play four families
def test_digests_are_equal_in_processes_with_other_hash_seeds() -> None:
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", PLAY, json.dumps(IDS)], capture_output=True, text=True, env=env, timeout=600
        )
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    assert runs[0] == runs[1]
    for env_id, digests in runs[0].items():
        assert len(set(digests)) > 1, f"{env_id}: the expert's steps never changed the digest"  # TWX's first: look
