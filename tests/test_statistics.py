"""Coverage of the study's intervals by seeded simulation, at the study's sizes (8-56 tasks x 16 episodes;
``--preset tiny`` evaluates on 56 test tasks)."""

from __future__ import annotations

import numpy as np
import pytest

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.stats.hierarchical import contrast_interval, interaction_weights
from agentgym_budget.stats.intervals import (
    Interval,
    bca_interval,
    equivalence_verdict,
    holm_adjust,
    paired_difference,
    task_rate_interval,
    wilson_interval,
)

EPISODES = 16
RATES = (0.03, 0.5, 0.97)


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("tasks", [8, 16, 56])
def test_task_rate_interval_covers(rate: float, tasks: int) -> None:
    rng = np.random.default_rng(11)
    runs = 1000
    hits = sum(
        task_rate_interval(rng.binomial(EPISODES, rate, size=tasks), [EPISODES] * tasks).contains(rate)
        for _ in range(runs)
    )
    assert hits / runs >= 0.93


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("tasks", [8, 56])
def test_expanded_bca_covers_mean_over_tasks(rate: float, tasks: int) -> None:
    rng = np.random.default_rng(12)
    runs = 600
    hits = sum(
        bca_interval(rng.binomial(EPISODES, rate, size=tasks) / EPISODES, resamples=400, seed=run).contains(rate)
        for run in range(runs)
    )
    assert hits / runs >= 0.93


def test_paired_difference_covers_shift_on_heterogeneous_tasks() -> None:
    rng = np.random.default_rng(13)
    runs, tasks, shift = 1500, 12, 0.1
    hits = 0
    for _ in range(runs):
        difficulty = rng.uniform(0.2, 0.9, size=tasks)
        first = rng.binomial(EPISODES, difficulty) / EPISODES
        second = rng.binomial(EPISODES, difficulty - shift) / EPISODES
        hits += paired_difference(first, second).contains(shift)
    assert hits / runs >= 0.93


def test_percentile_free_intervals_are_not_trivially_wide() -> None:
    assert task_rate_interval([8] * 32, [16] * 32).half_width < 0.05
    assert wilson_interval(0, 16).low == 0.0 and wilson_interval(16, 16).high == 1.0


def test_task_rate_interval_widens_with_task_heterogeneity() -> None:
    homogeneous = task_rate_interval([8] * 8, [16] * 8)
    split = task_rate_interval([0, 16] * 4, [16] * 8)
    assert homogeneous.estimate == split.estimate == 0.5
    assert split.half_width > 2 * homogeneous.half_width


@pytest.mark.slow
@pytest.mark.parametrize(("tasks", "runs"), [(10, 400), (56, 1000)])
def test_hierarchical_interaction_covers_and_includes_seed_spread(tasks: int, runs: int) -> None:
    """3 RL training seeds whose rates spread with standard deviation 0.05 (the default run's: about 0.02)."""
    rng = np.random.default_rng(14)
    truth = (0.8 - 0.5) - (0.35 - 0.3)
    hits, narrower = 0, 0
    for run in range(runs):
        cells = {}
        for (agent, budget), rate in {("rl", 8): 0.8, ("base", 8): 0.5, ("rl", 3): 0.35, ("base", 3): 0.3}.items():
            seeds = 3 if agent == "rl" else 1
            seed_rate = np.clip(rate + (rng.normal(0, 0.05, size=(seeds, 1)) if agent == "rl" else 0.0), 0, 1)
            task_rate = np.clip(seed_rate + rng.normal(0, 0.1, size=(1, tasks)), 0, 1)
            cells[(agent, budget)] = rng.random((seeds, tasks, EPISODES)) < task_rate[:, :, None]
        result = contrast_interval(cells, interaction_weights("rl", "base", 8, 3), resamples=300, seed=run)
        hits += result.interval.contains(truth)
        narrower += result.interval.half_width < 0.2
    assert hits / runs >= 0.93
    assert narrower > 0


def test_contrast_rejects_cells_with_different_tasks() -> None:
    cells = {"a": np.ones((1, 3, 4)), "b": np.ones((1, 4, 4))}
    with pytest.raises(InvalidOptionError, match="same tasks"):
        contrast_interval(cells, {"a": 1.0, "b": -1.0})
    with pytest.raises(InvalidOptionError, match="no outcomes"):
        contrast_interval(cells, {"c": 1.0})


def test_holm_is_step_down_and_monotone() -> None:
    assert holm_adjust([0.01, 0.02, 0.5]) == [0.03, 0.04, 0.5]
    assert holm_adjust([]) == []
    with pytest.raises(InvalidOptionError):
        holm_adjust([1.5])


def test_equivalence_verdict_each_way() -> None:
    assert equivalence_verdict(Interval(0.0, -0.03, 0.03, 0.9, "x"), 0.05) == "equivalent"
    assert equivalence_verdict(Interval(0.2, 0.1, 0.3, 0.9, "x"), 0.05) == "different"
    assert equivalence_verdict(Interval(0.0, -0.2, 0.2, 0.9, "x"), 0.05) == "undecided"


def test_bad_inputs_raise_typed_errors() -> None:
    with pytest.raises(InvalidOptionError):
        wilson_interval(5, 4)
    with pytest.raises(InvalidOptionError):
        task_rate_interval([1, 2], [4])
    with pytest.raises(InvalidOptionError):
        bca_interval([])
    with pytest.raises(InvalidOptionError):
        paired_difference([1.0], [1.0, 2.0])
