"""The sentences of docs/trust.md on snapshots with and without a key, and on story and cache files, one test each.

Sentences tested elsewhere: the digest catches truncation (``test_snapshot_codec``), sealing and refusing
(``test_snapshot_keys``), the checks of each wrapper, of the episode, of WebShop sessions, the replay of
unsealed TextWorld states, the budget a snapshot keeps, the empty key, FIFOs and devices as stories and in
cache entries, ``game.json`` fields and long actions (``test_hostile_parts``), Z-machine states against
their story (``test_hostile_snapshots``), ALFWorld operators (``test_alfworld_engine``), the replay cap of
``StateSnapshot(mode="replay")`` (``test_state_snapshot``).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_budget
from agentgym_budget.core.env import TextEnv
from agentgym_budget.core.turn import Turn
from agentgym_budget.errors import DataError, SnapshotMismatchError
from agentgym_budget.snapshots import keys
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.tasks.textworld import games, verify
from agentgym_budget.wrappers import StateSnapshot
from tests.hostile_parts import coin_stack, forge_part


@pytest.fixture(scope="module")
def played():
    env = coin_stack(max_turns=50)
    env.reset(seed=1)
    for action in ("look", "inventory"):
        env.step(action)
    return env, env.snapshot().to_bytes()


def test_state_snapshot_part_is_checked(played):
    """`StateSnapshot` [checks] its seed, options and action log."""
    env, _ = played
    inner = StateSnapshot(env)
    inner.reset(seed=1)
    genuine = agentgym_budget.get_state(inner)
    for part in ((-1, (), ()), (1, (("task", 0, 1),), ()), (1, ((3, 0),), ()), (1, (), "look")):
        forged = dataclasses.replace(genuine, parts=(part, *genuine.parts[1:]))
        with pytest.raises(SnapshotMismatchError, match="StateSnapshot"):
            agentgym_budget.set_state(inner, EnvState.from_bytes(forged.to_bytes()))


def test_other_wrappers_get_back_fields_of_the_kind_they_hold():
    """Other wrappers get back exactly the fields they hold, each of the kind it holds (a queue of the same length)."""
    base = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3)
    env = StateSnapshot(gym.wrappers.RecordEpisodeStatistics(base, buffer_length=5))
    env.reset(seed=1)
    genuine = env.snapshot().to_bytes()
    edits = {
        "queue of another length": lambda part: {**part, "return_queue": deque([1.0], maxlen=500)},
        "counter below 0": lambda part: {**part, "episode_count": -1},
        "flag for a number": lambda part: {**part, "episode_returns": "x"},
    }
    for edit in edits.values():
        with pytest.raises(SnapshotMismatchError, match="RecordEpisodeStatistics"):
            env.restore(forge_part(genuine, 0, edit))
    env.restore(EnvState.from_bytes(genuine))


def test_unsealed_textworld_state_of_too_many_actions_is_refused(played):
    """A state of more than 1,000 actions is refused."""
    env, genuine = played
    long = forge_part(
        genuine, -1, lambda b: dataclasses.replace(b, actions=("look",) * (verify.MAX_REPLAYED_ACTIONS + 1))
    )
    with pytest.raises(SnapshotMismatchError, match="at most 1000"):
        env.restore(long)


class _Counter(TextEnv):
    """A tiny env without engine state: restoring replays its actions."""

    def _list_tasks(self) -> Sequence[str]:
        return ["count"]

    def _begin(self, task_id: str, engine_seed: int) -> Turn:
        self.total = 0
        return Turn("0", 0.0, False, False, 0.0, ("add",), "Add.")

    def _act(self, command: str) -> Turn:
        self.total += 1
        return Turn(str(self.total), 0.0, False, False, 0.0, ("add",), "Add.")


def test_custom_env_restoring_by_replay_accepts_at_most_max_replay_actions():
    """A custom `TextEnv` that restores by replay accepts at most `max_replay_actions` (1,000) actions."""
    env = _Counter()
    env.reset(seed=0)
    for _ in range(3):
        env.step("add")
    state = env.get_state()
    assert TextEnv.max_replay_actions == 1000
    env.set_state(dataclasses.replace(state, actions=("add",) * 1000))
    assert env.total == 1000
    with pytest.raises(SnapshotMismatchError, match="at most 1000 actions"):
        env.set_state(dataclasses.replace(state, actions=("add",) * 1001))


def test_sealed_and_in_process_states_are_restored_without_the_replay(played, monkeypatch):
    """Sealed snapshots get the same checks, without the TextWorld replay; states that never left the process too."""
    env, _ = played

    def refuse(*args, **kwargs):
        raise AssertionError("replayed")

    monkeypatch.setattr("agentgym_budget.tasks.textworld.env.verify_by_replay", refuse)
    env.restore(env.snapshot())  # in process
    env.fork(1)
    keys.use_key(b"trust test")
    try:
        sealed = env.snapshot().to_bytes()
        env.restore(EnvState.from_bytes(sealed))
        with pytest.raises(SnapshotMismatchError, match="TurnBudget"):
            env.restore(forge_part(sealed, 0, lambda part: (0, *part[1:])))
    finally:
        keys.use_key(None)


def test_story_file_over_the_z_machine_maximum_is_a_data_error(tmp_path: Path):
    """TextWorld story files (`.z8`, at most 512 KiB, the Z-machine's largest story) are read the same way."""
    source = Path(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    (tmp_path / "game.json").write_bytes(source.with_suffix(".json").read_bytes())
    (tmp_path / "game.z8").write_bytes(source.read_bytes() + b"\0" * (512 * 2**10))
    env = gym.make("agentgym_budget/TextWorld-File-v0", path=str(tmp_path))
    with pytest.raises(DataError, match="at most 524,288"):
        env.reset(seed=0)
