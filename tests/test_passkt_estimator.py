"""The pass@k estimator against brute-force enumeration, and its intervals' coverage on synthetic data."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.eval.estimator import (
    bootstrap_ci,
    check_interval_options,
    mean_pass_at_k,
    paired_bootstrap_ci,
    paired_ci,
    pass_at_k,
    pass_at_k_per_task,
)


def brute_force(n: int, c: int, k: int) -> Fraction:
    """Fraction of all k-subsets of n samples (c of them successes) that contain a success."""
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    hits = sum(any(samples[i] for i in subset) for subset in subsets)
    return Fraction(hits, len(subsets))


@st.composite
def counts(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 11))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True)
@given(counts())
def test_estimator_equals_brute_force_enumeration(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(float(brute_force(n, c, k)), abs=1e-12)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, derandomize=True)
@given(counts())
def test_estimator_equals_closed_form_and_is_monotone(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    exact = 1 - math.comb(n - c, k) / math.comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)
    if k < n:
        assert pass_at_k(n, c, k + 1) >= pass_at_k(n, c, k) - 1e-12
    if c < n:
        assert pass_at_k(n, c + 1, k) >= pass_at_k(n, c, k) - 1e-12


def test_estimator_is_stable_for_large_n() -> None:
    # C(1000, 500) overflows floats; the product form does not.
    value = pass_at_k(1000, 10, 500)
    exact = 1 - Fraction(math.comb(990, 500), math.comb(1000, 500))
    assert value == pytest.approx(float(exact), rel=1e-9)
    assert pass_at_k(1000, 0, 500) == 0.0
    assert pass_at_k(1000, 600, 500) == 1.0


def test_k_equal_one_is_the_success_rate_and_mean_over_tasks() -> None:
    assert pass_at_k(8, 3, 1) == pytest.approx(3 / 8)
    per_task = pass_at_k_per_task([8, 4, 2], [3, 0, 2], 2)
    assert per_task.tolist() == pytest.approx([pass_at_k(8, 3, 2), 0.0, 1.0])
    assert mean_pass_at_k([8, 4, 2], [3, 0, 2], 2) == pytest.approx(per_task.mean())


@pytest.mark.parametrize(("n", "c", "k"), [(4, 5, 1), (4, -1, 1), (4, 2, 5), (4, 2, 0), (3, 1.5, 1)])
def test_invalid_counts_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(InvalidOptionError):
        pass_at_k(n, c, k)


def test_k_larger_than_n_message_says_what_to_do() -> None:
    with pytest.raises(InvalidOptionError, match="sample at least k episodes"):
        pass_at_k(4, 1, 8)


def _true_mean_pass(alpha: float, beta: float, k: int) -> float:
    # E[1 - (1-p)^k] for p ~ Beta(alpha, beta): 1 - B(alpha, beta + k) / B(alpha, beta).
    log_b = math.lgamma(alpha) + math.lgamma(beta + k) - math.lgamma(alpha + beta + k)
    log_b0 = math.lgamma(alpha) + math.lgamma(beta) - math.lgamma(alpha + beta)
    return 1 - math.exp(log_b - log_b0)


def test_bootstrap_interval_covers_the_true_value_at_the_nominal_rate() -> None:
    """Synthetic task populations: p_task ~ Beta(1.2, 2.5), 30 tasks x 8 samples, 90% intervals."""
    rng = np.random.default_rng(7)
    alpha, beta, tasks, n, k, reps = 1.2, 2.5, 30, 8, 4, 300
    truth = _true_mean_pass(alpha, beta, k)
    covered = 0
    for rep in range(reps):
        p = rng.beta(alpha, beta, size=tasks)
        c = rng.binomial(n, p)
        values = pass_at_k_per_task([n] * tasks, c.tolist(), k)
        low, high = bootstrap_ci(values, confidence=0.9, resamples=800, seed=rep)
        assert low <= values.mean() <= high
        covered += low <= truth <= high
    coverage = covered / reps
    # Close to nominal: a too-narrow or shifted interval fails, and so does one wide enough to cover always.
    assert 0.86 <= coverage <= 0.97, coverage


EPISODES = 16


@pytest.mark.parametrize("rate", [0.03, 0.5, 0.97])
@pytest.mark.parametrize("tasks", [8, 20])
def test_pass_at_one_interval_covers_at_extreme_rates_and_few_tasks(rate: float, tasks: int) -> None:
    """The percentile bootstrap this replaced covered 82% at rate 0.03 over 8 tasks (nominal 95%)."""
    rng = np.random.default_rng(21)
    runs, hits = 400, 0
    for run in range(runs):
        values = rng.binomial(EPISODES, rate, size=tasks) / EPISODES
        low, high = bootstrap_ci(values, resamples=1000, seed=run, bounds=(0.0, 1.0))
        hits += low <= rate <= high
        assert 0.0 <= low <= values.mean() <= high <= 1.0
    assert hits / runs >= 0.93, hits / runs


@pytest.mark.parametrize(("first_rate", "second_rate"), [(0.03, 0.03), (0.1, 0.03), (0.97, 0.9)])
@pytest.mark.parametrize("tasks", [8, 20])
def test_paired_interval_covers_differences_near_the_edges(first_rate: float, second_rate: float, tasks: int) -> None:
    rng = np.random.default_rng(22)
    runs, hits = 500, 0
    for _ in range(runs):
        first = rng.binomial(EPISODES, first_rate, size=tasks) / EPISODES
        second = rng.binomial(EPISODES, second_rate, size=tasks) / EPISODES
        low, high = paired_ci(first, second, bounds=(-1.0, 1.0))
        hits += low <= first_rate - second_rate <= high
    assert hits / runs >= 0.93, hits / runs


def test_paired_interval_covers_a_shift_on_heterogeneous_tasks() -> None:
    rng = np.random.default_rng(23)
    runs, hits, shift = 500, 0, 0.1
    for _ in range(runs):
        difficulty = rng.uniform(0.2, 0.9, size=8)
        first = rng.binomial(EPISODES, difficulty) / EPISODES
        second = rng.binomial(EPISODES, difficulty - shift) / EPISODES
        low, high = paired_ci(first, second)
        hits += low <= shift <= high
    assert hits / runs >= 0.93, hits / runs


def test_bootstrap_interval_contains_the_truth_and_shrinks_with_more_tasks() -> None:
    rng = np.random.default_rng(3)
    truth = _true_mean_pass(2.0, 2.0, 2)
    widths = []
    for tasks in (20, 320):
        c = rng.binomial(8, rng.beta(2.0, 2.0, size=tasks))
        low, high = bootstrap_ci(pass_at_k_per_task([8] * tasks, c.tolist(), 2), resamples=1000)
        assert low <= truth <= high
        widths.append(high - low)
    assert widths[1] < widths[0] / 2


def test_bootstrap_edge_cases_and_determinism() -> None:
    assert all(math.isnan(v) for v in bootstrap_ci([]))
    assert bootstrap_ci([0.4]) == (0.4, 0.4)
    values = [0.1, 0.9, 0.5, 0.3]
    assert bootstrap_ci(values, seed=5) == bootstrap_ci(values, seed=5)
    assert bootstrap_ci([0.0] * 7 + [0.0625], bounds=(0.0, 1.0))[0] == 0.0  # unclipped, the expansion goes below 0
    assert bootstrap_ci([0.0] * 7 + [0.0625])[0] < 0.0
    with pytest.raises(InvalidOptionError, match=r"confidence must be in \(0, 1\)"):
        bootstrap_ci(values, confidence=1.5)
    with pytest.raises(InvalidOptionError, match="at least 100 resamples"):
        bootstrap_ci(values, resamples=99)
    with pytest.raises(InvalidOptionError, match="at least 100 resamples"):
        check_interval_options(0.95, 0)
    assert all(math.isnan(v) for v in paired_ci([], []))
    with pytest.raises(InvalidOptionError, match=r"confidence must be in \(0, 1\)"):
        paired_ci([], [], confidence=1.5)


def test_paired_bootstrap_uses_task_pairing() -> None:
    rng = np.random.default_rng(11)
    base = rng.uniform(0, 1, size=40)
    shifted = np.clip(base + 0.1 + rng.normal(0, 0.01, size=40), 0, 1.2)
    low, high = paired_bootstrap_ci(shifted, base, resamples=1000)
    assert 0.05 < low < 0.1 < high < 0.15  # pairing removes the large between-task spread
    unpaired_low, unpaired_high = bootstrap_ci(shifted, resamples=1000)
    assert (high - low) < (unpaired_high - unpaired_low) / 5
    paired_low, paired_high = paired_ci(shifted, base)
    assert 0.05 < paired_low < 0.1 < paired_high < 0.15
    with pytest.raises(InvalidOptionError):
        paired_bootstrap_ci([0.1, 0.2], [0.3])
    with pytest.raises(InvalidOptionError, match="same tasks"):
        paired_ci([0.1, 0.2], [0.3])
