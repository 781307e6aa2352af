"""TextWorld's lean mode: no state tracking unless a requested key needs it, same game otherwise."""

from __future__ import annotations

import random
from typing import Any, ClassVar

import gymnasium as gym
import pytest

import agentgym_budget
from agentgym_budget.errors import InvalidInfoKeyError, InvalidOptionError, SnapshotMismatchError
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.testing import EnvConformance
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"
# progress="score" throughout: Coin Collector's default "plan" progress needs the state tracking lean mode skips


class TestLeanConformance(EnvConformance):
    """The whole conformance suite on a lean env (actions from the fallback list: no admissible actions)."""

    env_id: ClassVar[str] = COIN
    env_kwargs: ClassVar[dict[str, Any]] = {"level": 3, "progress": "score", "lean": True}

    @pytest.mark.slow  # gymnasium's check_env resets several tasks: a game each (as in test_conformance.py)
    def test_check_env(self) -> None:
        super().test_check_env()


class TestLeanWithAdmissibleConformance(EnvConformance):
    env_id: ClassVar[str] = "agentgym_budget/TextWorld-TreasureHunter-v0"
    env_kwargs: ClassVar[dict[str, Any]] = {"level": 3, "lean": True, "info_keys": {"admissible_actions"}}

    @pytest.mark.slow
    def test_check_env(self) -> None:
        super().test_check_env()


def _outcome(result: tuple[Any, ...]) -> tuple[Any, ...]:
    observation, *rest = result
    info = rest[-1]
    flags = tuple(rest[:-1])
    return (observation, *flags, info["won"], info["lost"], info["progress"], info["goal"], info["task_id"])


def _play_both(env_id: str, kwargs: dict[str, Any], seed: int, steps: int) -> int:
    """Play one episode on a default and a lean env with the same actions; assert equal outcomes; return steps."""
    default, lean = gym.make(env_id, **kwargs), gym.make(env_id, lean=True, **kwargs)
    rng = random.Random(seed)
    try:
        first_default, first_lean = default.reset(seed=seed), lean.reset(seed=seed)
        assert _outcome(first_default) == _outcome(first_lean)
        info = first_default[1]
        for played in range(1, steps + 1):
            options = info["admissible_actions"] + ["look, take all", "xyzzy", "restart", "go north"]
            action = rng.choice(options)
            step_default, step_lean = default.step(action), lean.step(action)
            assert _outcome(step_default) == _outcome(step_lean), f"step {played} ({action!r}) differs"
            assert "admissible_actions" not in step_lean[-1]
            info = step_default[-1]
            if step_default[2]:
                return played
        return steps
    finally:
        default.close()
        lean.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        (COIN, {"level": 5, "progress": "score"}),
        ("agentgym_budget/TextWorld-TreasureHunter-v0", {"level": 5}),
        ("agentgym_budget/TextWorld-Cooking-v0", {"difficulty": 1}),
    ],
)
def test_lean_plays_the_same_game_as_the_default_mode(env_id: str, kwargs: dict[str, Any]) -> None:
    assert sum(_play_both(env_id, kwargs, seed, 25) for seed in range(3)) > 10


def test_a_won_episode_is_won_in_lean_mode_too() -> None:
    expert = gym.make(COIN, progress="score", level=5, info_keys={"expert_plan"})
    lean = gym.make(COIN, progress="score", level=5, lean=True)
    try:
        _, info = expert.reset(seed=4)
        lean.reset(seed=4)
        for action in info["expert_plan"]:
            _, reward, terminated, _, info = lean.step(action)
        assert terminated and info["won"] and info["progress"] == 1.0 and reward == 1.0
    finally:
        expert.close()
        lean.close()


def test_lean_info_keys_are_opt_in_and_equal_to_the_default_ones() -> None:
    keys = {"admissible_actions", "moves", "expert_plan", "facts", "score"}
    default = gym.make(COIN, progress="score", level=5, info_keys=keys - {"admissible_actions"})
    lean = gym.make(COIN, progress="score", level=5, lean=True, info_keys=keys)
    bare = gym.make(COIN, progress="score", level=5, lean=True)
    try:
        assert bare.unwrapped.omitted_info_keys == {"admissible_actions"} and not bare.unwrapped.tracking
        assert lean.unwrapped.omitted_info_keys == frozenset() and lean.unwrapped.tracking
        _, want = default.reset(seed=2)
        _, got = lean.reset(seed=2)
        assert "admissible_actions" not in bare.reset(seed=2)[1]
        for action in want["expert_plan"][:4]:
            assert {k: got[k] for k in want} == want
            want, got = default.step(action)[-1], lean.step(action)[-1]
        assert got["moves"] == want["moves"] > 0 and got["admissible_actions"] == want["admissible_actions"]
    finally:
        for env in (default, lean, bare):
            env.close()


def test_moves_alone_turns_the_state_tracking_on() -> None:
    default, lean = (
        gym.make(COIN, progress="score", level=5, info_keys={"moves", "expert_plan"}),
        gym.make(COIN, progress="score", level=5, lean=True, info_keys={"moves"}),
    )
    try:
        _, info = default.reset(seed=3)
        lean.reset(seed=3)
        assert lean.unwrapped.tracking
        for action in ["go nowhere", *info["expert_plan"][:3], "look"]:
            assert lean.step(action)[-1]["moves"] == default.step(action)[-1]["moves"]
    finally:
        default.close()
        lean.close()


def test_lean_snapshots_do_not_restore_into_a_tracking_env() -> None:
    lean = StateSnapshot(TurnBudget(gym.make(COIN, progress="score", level=3, lean=True), max_turns=20))
    tracking = StateSnapshot(TurnBudget(gym.make(COIN, progress="score", level=3), max_turns=20))
    try:
        lean.reset(seed=0)
        tracking.reset(seed=0)
        lean.step("go north")
        snap = lean.snapshot()
        for target, state in (
            (tracking, snap),
            (tracking, EnvState.from_bytes(snap.to_bytes())),
            (lean, tracking.snapshot()),
        ):
            with pytest.raises(SnapshotMismatchError, match="state_tracking"):
                target.restore(state)
    finally:
        lean.close()
        tracking.close()


def test_agents_that_read_admissible_actions_get_them_from_a_lean_env() -> None:
    from agentgym_budget.agents.base import required_info_keys
    from agentgym_budget.agents.builtin import RandomAgent
    from agentgym_budget.agents.openai_chat import OpenAIChatAgent
    from agentgym_budget.runner.rollout import run_episode

    assert "admissible_actions" in required_info_keys(OpenAIChatAgent("m", base_url="http://127.0.0.1:9/v1"))
    assert not required_info_keys(OpenAIChatAgent("m", base_url="http://127.0.0.1:9/v1", show_actions=False))
    ref = EnvRef.parse(COIN, "level=5,lean=True")
    agent = RandomAgent()
    env = ref.make(required_info_keys(agent))
    try:
        result = run_episode(env, agent, task_id=ref.task_ids()[0], budget=6, seed=1)
        assert "" not in result.actions and len(set(result.actions)) > 1
    finally:
        env.close()


def test_lean_argument_errors() -> None:
    with pytest.raises(InvalidOptionError, match="lean must be True or False, got 'yes'"):
        gym.make(COIN, lean="yes")
    with pytest.raises(InvalidInfoKeyError, match="admissible_actions"):
        gym.make(COIN, info_keys={"admissible_action"}, lean=True)


@pytest.mark.parametrize("env_id", agentgym_budget.registered_ids("textworld"))
def test_every_textworld_id_takes_lean_from_the_command_line(env_id: str) -> None:
    extra = ",path=games/" if env_id.endswith("File-v0") else ""
    ref = EnvRef.parse(env_id, "lean=true" + extra)
    assert dict(ref.kwargs)["lean"] is True
