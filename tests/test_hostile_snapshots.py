"""Crafted z-machine snapshots (valid digest, one field edited) are refused before they reach the interpreter.

Each scenario runs in a child process, so an interpreter crash (SIGSEGV) fails the test instead of pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agentgym_budget.errors import SnapshotMismatchError
from agentgym_budget.tasks.textworld import games
from agentgym_budget.tasks.textworld.interpreter import InterpreterLease
from agentgym_budget.tasks.textworld.zstate import StoryLayout, check_zstate
from tests.hostile_helpers import ZSTATE_EDITS, babyai_edits, forge_babyai

ROOT = Path(__file__).resolve().parents[1]


def _child(scenario: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "tests.hostile_helpers", scenario],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert result.returncode == 0, f"child exited with {result.returncode}: {result.stderr[-2000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_every_crafted_zstate_is_refused_and_the_env_stays_usable():
    result = _child("zstate")
    assert result["refused"] == list(ZSTATE_EDITS)
    assert result["same"], "a genuine snapshot no longer replays the same game after the refusals"


@pytest.fixture(scope="module")
def lease():
    path = str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    lease = InterpreterLease.start(path, seed=1)
    lease.reset()
    yield lease
    lease.close()


def test_genuine_states_pass_along_a_playthrough(lease):
    layout = lease._frotz_shared().layout
    lease.reset()
    for action in ["go north", "go south", "take coin", "look", "inventory", "go east", "go west"] * 3:
        check_zstate(lease.get_state(), layout)
        lease.step(action)


def test_refusal_names_the_field_and_the_expected_range(lease):
    state = lease.get_state()
    with pytest.raises(
        SnapshotMismatchError, match=r"frame pointer 1000000 is out of range \(expected 0 <= fp < 1025\)"
    ):
        lease.set_state((*state[:4], 10**6, *state[5:]))
    with pytest.raises(SnapshotMismatchError, match="the stack holds 8 bytes where the story's interpreter has 2048"):
        lease.set_state((state[0], np.zeros(8, dtype=np.uint8), *state[2:]))
    lease.set_state(state)  # still usable


def test_object_relations_must_name_objects(lease):
    state = lease.get_state()
    layout: StoryLayout = lease._frotz_shared().layout
    ram = np.array(state[0])
    ram[layout.relation_offsets[:2]] = 0xFF  # object 1's parent: 65535
    with pytest.raises(SnapshotMismatchError, match="parent, sibling or child is object 65535"):
        check_zstate((ram, *state[1:]), layout)
    assert layout.objects > 10


def test_a_looping_child_list_is_refused(lease):
    state = lease.get_state()
    layout: StoryLayout = lease._frotz_shared().layout
    ram = np.array(state[0])
    offsets = layout.relation_offsets  # 6 bytes per object: parent, sibling, child (big-endian words)
    ram[offsets[4:6]] = (0, 2)  # object 1's first child: object 2
    ram[offsets[6 + 2 : 6 + 4]] = (0, 2)  # object 2's next sibling: object 2 itself
    with pytest.raises(SnapshotMismatchError, match="appears twice in the object tree's child lists"):
        check_zstate((ram, *state[1:]), layout)


@pytest.mark.parametrize("level", ["PutNextLocal", "UnlockLocal"])
def test_every_crafted_babyai_state_is_refused_and_the_env_stays_usable(level):
    """Wrong sizes, out-of-grid positions, unknown object codes, ...: each refused by name, nothing applied."""
    pytest.importorskip("minigrid")
    import gymnasium as gym

    from agentgym_budget.snapshots.state import EnvState
    from agentgym_budget.wrappers import StateSnapshot, TurnBudget

    env = StateSnapshot(TurnBudget(gym.make(f"agentgym_budget/BabyAI-{level}-v0", progress="sparse"), max_turns=50))
    env.reset(seed=5)
    env.step("turn left")
    data = env.snapshot().to_bytes()
    expected = [env.step(command)[0] for command in ("go forward", "pick up", "turn right")]
    edits = babyai_edits(EnvState.from_bytes(data).parts[-1].engine)
    for name, changes in edits.items():
        with pytest.raises(SnapshotMismatchError, match="Malformed snapshot"):
            env.restore(forge_babyai(data, **changes))
            pytest.fail(f"the forged state {name!r} was restored")
    assert len(edits) == 24
    env.restore(EnvState.from_bytes(data))
    assert [env.step(command)[0] for command in ("go forward", "pick up", "turn right")] == expected
