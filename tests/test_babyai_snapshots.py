"""BabyAI snapshots: plain data, exact against minigrid's own copy of a level, cheap, and refused when forged."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

from agentgym_budget.errors import SnapshotMismatchError
from agentgym_budget.snapshots.state import EnvState, TextEnvState
from agentgym_budget.tasks.babyai.describe import describe
from agentgym_budget.tasks.babyai.state import COMMANDS, BabyAIState
from agentgym_budget.wrappers import StateSnapshot, TurnBudget
from tests.hostile_helpers import forge_babyai

pytest.importorskip("minigrid")

from minigrid.minigrid_env import MiniGridEnv


def _babyai(level: str, **kwargs) -> gym.Env:
    return gym.make(f"agentgym_budget/BabyAI-{level}-v0", progress="sparse", **kwargs)


def _minigrid_step(level, action: int) -> tuple:
    """minigrid's ``RoomGridLevel.step`` on a copy of the level, without its ``max_steps`` truncation."""
    observation = MiniGridEnv.step(level, action)[0]
    if action == 4:
        level.update_objs_poss()
    verdict = level.instrs.verify(action) or "continue"
    carried = None if level.carrying is None else (level.carrying.color, level.carrying.type)
    return describe(observation["image"], carried), verdict, tuple(int(v) for v in level.agent_pos), carried


def _ours(env: gym.Env, action: int) -> tuple:
    obs, _, terminated, _, info = env.step(COMMANDS[action])
    level = env.unwrapped.engine.env
    verdict = "success" if info["won"] else "continue"
    carried = None if level.carrying is None else (level.carrying.color, level.carrying.type)
    return (obs.splitlines(), verdict, tuple(level.agent_pos), carried), terminated


def _continuations(level_name: str, count: int, seed: int) -> int:
    """Restore ``count`` serialised states into a new env and continue each as minigrid's deepcopy does."""
    rng = np.random.default_rng(seed)
    source, target = _babyai(level_name), _babyai(level_name)
    target.reset(seed=0)
    compared = 0
    for case in range(count):
        if case % 10 == 0:
            source.reset(options={"task": int(rng.integers(50))})
        if source.step(COMMANDS[int(rng.integers(6))])[2]:
            source.reset(options={"task": int(rng.integers(50))})
        data = source.unwrapped.get_state().to_bytes()
        reference = copy.deepcopy(source.unwrapped.engine.env)  # minigrid's exact, independent copy
        target.unwrapped.set_state(TextEnvState.from_bytes(data))
        for action in rng.integers(6, size=8):
            expected, (ours, over) = _minigrid_step(reference, int(action)), _ours(target, int(action))
            assert ours == expected, f"{level_name} case {case}: {ours} != {expected}"
            compared += 1
            if over:  # won, or lost: a box the mission needs was opened (minigrid plays on, unwinnable)
                break
    return compared


@pytest.mark.parametrize("level", ["PutNextLocal", "UnlockLocal"])
def test_restored_states_continue_as_minigrids_own_copy(level):
    assert _continuations(level, 25, seed=1) > 100


@pytest.mark.slow
def test_a_thousand_restored_continuations_equal_minigrids_own_copy():
    compared = sum(
        _continuations(level, 250, seed=2) for level in ("GoToLocal", "PutNextLocal", "UnlockLocal", "MixedTrainLocal")
    )
    assert compared > 5_000


def test_states_are_plain_data_and_never_pickles():
    env = StateSnapshot(TurnBudget(_babyai("PutNextLocal", info_keys={"expert_plan"}), max_turns=50))
    _, info = env.reset(seed=3)
    for command in info["expert_plan"][:4]:
        env.step(command)
    snap = env.snapshot()
    data = snap.to_bytes()
    assert not data.startswith(b"\x80") and b"minigrid" in data and b"BabyAIState/1" in data
    engine = snap.parts[-1].engine
    assert isinstance(engine, BabyAIState) and engine.plan == tuple(info["expert_plan"][4:])
    assert pickle.loads(pickle.dumps(snap)) == snap == EnvState.from_bytes(data)  # pickling goes through the bytes


def test_a_door_cannot_move_open_and_locked_at_once_or_be_carried():
    env = StateSnapshot(_babyai("UnlockLocal"))
    env.reset(seed=1)
    data = env.snapshot().to_bytes()
    engine = EnvState.from_bytes(data).parts[-1].engine
    door = next(i for i, kind in enumerate(engine.kinds) if kind[0] == 4)
    objects = list(engine.objects)
    x, y = objects[door][:2]
    for entry in ((x, y, 0, 3), (x + 1, y, 0, 1), (-1, -1, 1, 0), (x, y, 2, 0)):
        forged = tuple(entry if i == door else o for i, o in enumerate(objects))
        with pytest.raises(SnapshotMismatchError):
            env.restore(forge_babyai(data, objects=forged))


def test_a_state_restores_into_an_env_on_another_task_and_snapshots_are_cheap():
    first, second = _babyai("GoToLocal"), _babyai("GoToLocal")
    first.reset(options={"task": 3})
    first.step("turn left")
    state = first.unwrapped.get_state()
    second.reset(options={"task": 9})
    second.unwrapped.set_state(TextEnvState.from_bytes(state.to_bytes()))
    assert second.step("go forward")[0] == first.step("go forward")[0]
    assert len(state.to_bytes()) < 4_000
