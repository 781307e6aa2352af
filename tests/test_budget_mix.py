"""BudgetMix: per-episode budgets drawn reproducibly from a distribution."""

from __future__ import annotations

import collections

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401
from agentgym_budget.errors import InvalidBudgetError, WrapperOrderError
from agentgym_budget.wrappers import BudgetMix, StateSnapshot, TurnBudget

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"
ONE_TASK = {"task": 0}


@pytest.fixture
def base():
    env = gym.make(COIN)
    yield env
    env.close()


def test_needs_a_turn_budget_below(base):
    with pytest.raises(WrapperOrderError, match="TurnBudget"):
        BudgetMix(base, budgets=[5, 10])


def test_draws_are_reproducible_from_the_reset_seed(base):
    env = BudgetMix(TurnBudget(base, max_turns=99), budgets=[3, 6, 9])
    first = [env.reset(seed=s, options=ONE_TASK)[1]["max_turns"] for s in range(20)]
    assert first == [env.reset(seed=s, options=ONE_TASK)[1]["max_turns"] for s in range(20)]
    assert set(first) == {3, 6, 9}
    env.reset(seed=5, options=ONE_TASK)
    stream = [env.reset(options=ONE_TASK)[1]["sampled_budget"] for _ in range(10)]
    env.reset(seed=5, options=ONE_TASK)
    assert stream == [env.reset(options=ONE_TASK)[1]["sampled_budget"] for _ in range(10)]


def test_weights_shape_the_distribution(base):
    env = BudgetMix(TurnBudget(base, max_turns=99), budgets=[2, 4], weights=[9, 1])
    env.reset(seed=0)
    counts = collections.Counter(env.get_wrapper_attr("_draw")() for _ in range(2000))
    assert 0.85 < counts[2] / 2000 < 0.95


def test_callable_sampler_and_validation(base):
    env = BudgetMix(TurnBudget(base, max_turns=99), budgets=lambda rng: int(rng.integers(5, 8)))
    budgets = {env.reset(seed=s, options=ONE_TASK)[1]["max_turns"] for s in range(30)}
    assert budgets <= {5, 6, 7} and len(budgets) > 1
    bad = BudgetMix(TurnBudget(base, max_turns=99), budgets=lambda rng: 0)
    with pytest.raises(InvalidBudgetError, match="sampler"):
        bad.reset(seed=0)


@pytest.mark.parametrize(
    ("budgets", "weights"),
    [([], None), ([5, 0], None), ([5, 10], [1]), ([5, 10], [0, 0]), ([5, 10], [-1, 2]), ([5, 10], [1, float("nan")])],
)
def test_bad_distributions_are_rejected(base, budgets, weights):
    with pytest.raises(InvalidBudgetError):
        BudgetMix(TurnBudget(base, max_turns=99), budgets=budgets, weights=weights)


def test_explicit_max_turns_overrides_the_draw(base):
    env = BudgetMix(TurnBudget(base, max_turns=99), budgets=[3])
    _, info = env.reset(seed=0, options={"max_turns": 7})
    assert (info["max_turns"], info["sampled_budget"]) == (7, None)


def test_truncates_at_the_drawn_budget(base):
    env = BudgetMix(TurnBudget(base, max_turns=99), budgets=[2])
    env.reset(seed=1)
    assert [env.step("look")[3] for _ in range(2)] == [False, True]


def test_snapshot_restores_the_budget_stream(base):
    env = StateSnapshot(BudgetMix(TurnBudget(base, max_turns=99), budgets=[2, 3, 4, 5, 6]))
    env.reset(seed=3, options=ONE_TASK)
    snap = env.snapshot()
    following = [env.reset(options=ONE_TASK)[1]["max_turns"] for _ in range(5)]
    env.restore(snap)
    assert [env.reset(options=ONE_TASK)[1]["max_turns"] for _ in range(5)] == following
