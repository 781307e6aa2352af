"""TextWorld's ``progress="plan"`` signal (Coin Collector's default): it moves before the end, as a potential."""

from __future__ import annotations

import random

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.snapshots.state import TextEnvState
from agentgym_budget.wrappers import ProcessReward, TurnBudget

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"


def _coin(level: int = 3, **kwargs):
    return gym.make(COIN, level=level, info_keys={"expert_plan"}, **kwargs)


def _task(level: int, seed: int) -> dict[str, str]:
    """Reset options for a game the suite already generates (tests/games_used.json)."""
    return {"task": f"coin-l{level}-{seed}"}


def test_progress_is_zero_at_reset_rises_along_the_route_and_is_one_exactly_on_the_win():
    env = _coin()
    _, info = env.reset(options=_task(3, 0))
    route = list(info["expert_plan"])
    assert info["progress"] == 0.0 and len(route) == 3
    seen = [info["progress"]]
    for action in route:
        _, reward, terminated, _, info = env.step(action)
        seen.append(info["progress"])
    assert terminated and info["won"] and reward == 1.0
    assert seen[-1] == 1.0
    assert seen == pytest.approx([k / len(route) for k in range(len(route) + 1)])


def test_a_detour_lowers_progress_and_walking_back_restores_it():
    env = _coin(level=110)  # distractor rooms: a wrong door is a detour
    _, info = env.reset(options=_task(110, 1))
    _, _, _, _, info = env.step(info["expert_plan"][0])
    on_route, plan = info["progress"], info["expert_plan"]
    detours = [a for a in info["admissible_actions"] if a.startswith("go ") and a != plan[0]]
    assert detours, info["admissible_actions"]
    _, _, _, _, info = env.step(detours[0])
    assert info["progress"] < on_route
    _, _, _, _, info = env.step(info["expert_plan"][0])  # back the way it came
    assert info["progress"] == pytest.approx(on_route)


def test_score_mode_keeps_the_old_signal_and_other_ids_default_to_score():
    env = _coin(progress="score")
    _, info = env.reset(options=_task(3, 0))
    progress = [info["progress"]]
    for action in list(info["expert_plan"]):
        _, _, _, _, info = env.step(action)
        progress.append(info["progress"])
    assert progress == [0.0, 0.0, 0.0, 1.0]
    assert gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=1).unwrapped.progress == "score"


def test_unknown_modes_are_refused_with_the_modes_named():
    with pytest.raises(InvalidOptionError, match=r"progress must be one of \['score', 'plan'\].*Did you mean 'plan'"):
        _coin(progress="plann")


def test_the_shaped_return_telescopes_with_plan_progress_as_the_potential():
    """``ProcessReward`` (gamma = 1, terminal potential 0): G' = G - Phi(s_0) on every episode."""
    rng = random.Random(0)
    moved = 0
    for seed in range(4):
        env = ProcessReward(TurnBudget(_coin(level=110), max_turns=12), coefficient=1.0)
        _, info = env.reset(options=_task(110, seed))
        start, shaped, original = info["progress"], [], []
        terminated = truncated = False
        while not (terminated or truncated):
            moves = [a for a in info["admissible_actions"] if a.startswith("go ")] or info["admissible_actions"]
            _, reward, terminated, truncated, info = env.step(rng.choice(moves))
            shaped.append(reward)
            original.append(info["env_reward"])
        assert sum(shaped) == pytest.approx(sum(original) - start)
        moved += sum(reward != 0 for reward in shaped)
    assert moved > 0  # the potential moved before the end: a process signal


def test_a_restored_state_reports_the_same_progress_in_a_new_env():
    env = _coin(level=110)
    _, info = env.reset(options=_task(110, 2))
    _, _, _, _, info = env.step(info["expert_plan"][0])
    state_bytes = env.unwrapped.get_state().to_bytes()
    action = info["expert_plan"][0]
    _, _, _, _, expected = env.step(action)
    fresh = _coin(level=110).unwrapped  # a new env: it learns the route's start length from the game
    fresh.set_state(TextEnvState.from_bytes(state_bytes))
    _, _, _, _, got = fresh.step(action)
    assert got["progress"] == expected["progress"] and got["expert_plan"] == expected["expert_plan"]


def test_lean_envs_track_the_plan_when_progress_needs_it():
    env = gym.make(COIN, level=3, lean=True)
    _, info = env.reset(options=_task(3, 0))
    assert "admissible_actions" not in info
    _, _, _, _, info = env.step("go west")
    assert 0.0 < info["progress"] < 1.0
