r"""Confidence intervals for the study: single rates, means over tasks, paired differences, Holm, equivalence.

* :func:`wilson_interval`: the Wilson score interval of one binomial rate (good coverage near 0 and 1,
  where the normal ("Wald") interval and the percentile bootstrap fail).
* :func:`task_rate_interval`: a rate measured as the mean over tasks of per-task success fractions
  (``n`` episodes per task). Episodes of one task are correlated, so the Wilson interval is computed
  with the *effective* sample size ``N / deff``, where the design effect ``deff >= 1`` is the ratio of the
  between-task variance of the mean to the binomial one (Kish). This keeps Wilson's coverage at extreme
  rates and widens the interval when tasks differ.
* :func:`bca_interval`: the bias-corrected and accelerated (BCa) bootstrap of a mean over tasks
  (Efron 1987), *expanded* for few tasks (Hesterberg 2015: the bounds' distance from the estimate is
  scaled by ``t_{m-1} / z * sqrt(m / (m - 1))`` for ``m`` tasks, which restores coverage the plain
  bootstrap loses with 8-16 tasks); :func:`paired_difference` gives the studentized (Student-t) interval of per-task differences of
  two agents on the same tasks (the pairing removes the between-task variance both share).
* :func:`holm_adjust` (Holm 1979) corrects the p-values of the findings a report states, and
  :func:`equivalence_verdict` decides a two one-sided test from an interval and a margin.

Every interval here is *marginal* (one comparison at its own level); simultaneity across the findings
of a report comes from Holm-adjusting their p-values (:func:`bootstrap_p_value` gives them).

Example:
    >>> interval = wilson_interval(3, 100)
    >>> round(interval.low, 4), round(interval.high, 4)
    (0.0103, 0.0845)
    >>> holm_adjust([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from agentgym_budget.errors import InvalidOptionError

__all__ = ["Interval", "bca_interval", "check_confidence", "paired_difference", "task_rate_interval"]

CONFIDENCE = 0.95
"""Default confidence level."""

RESAMPLES = 2000
"""Default number of bootstrap resamples."""

_NORMAL = NormalDist()


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided interval.

    Attributes:
        estimate: The point estimate.
        low: Lower bound.
        high: Upper bound.
        confidence: Nominal two-sided level.
        method: How the interval was computed (``wilson``, ``task_wilson``, ``bca``, ``hierarchical``...).
    """

    estimate: float
    low: float
    high: float
    confidence: float
    method: str

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.high - self.low) / 2.0

    def contains(self, value: float) -> bool:
        """Whether ``low <= value <= high``."""
        return self.low <= value <= self.high

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (floats rounded to 6 digits for stable files)."""
        return {
            "estimate": round(self.estimate, 6),
            "low": round(self.low, 6),
            "high": round(self.high, 6),
            "half_width": round(self.half_width, 6),
            "confidence": self.confidence,
            "method": self.method,
        }


def check_confidence(confidence: float) -> float:
    """``confidence`` if it is a confidence level: a number in (0, 1).

    Raises:
        InvalidOptionError: It is not (a bool, a string, 0, 1, 95...).

    Example:
        >>> check_confidence(0.95)
        0.95
        >>> check_confidence(95)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: confidence must be in (0, 1), for example 0.95; got 95.
    """
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise InvalidOptionError(f"confidence must be in (0, 1), for example 0.95; got {confidence!r}.")
    return confidence


def _two_sided_z(confidence: float) -> float:
    return _NORMAL.inv_cdf(0.5 + check_confidence(confidence) / 2.0)


def _wilson_bounds(rate: float, n: float, z: float) -> tuple[float, float]:
    denominator = 1.0 + z * z / n
    centre = (rate + z * z / (2.0 * n)) / denominator
    spread = z * math.sqrt(rate * (1.0 - rate) / n + z * z / (4.0 * n * n)) / denominator
    return max(0.0, centre - spread), min(1.0, centre + spread)


def wilson_interval(successes: int, n: int, *, confidence: float = CONFIDENCE) -> Interval:
    """Wilson score interval of ``successes / n``.

    Raises:
        InvalidOptionError: Not ``0 <= successes <= n`` with ``n >= 1``.

    Example:
        >>> wilson_interval(0, 16).high < 0.21
        True
    """
    if not (n >= 1 and 0 <= successes <= n):
        raise InvalidOptionError(f"A Wilson interval needs 0 <= successes <= n and n >= 1, got {successes} of {n}.")
    z = _two_sided_z(confidence)
    low, high = _wilson_bounds(successes / n, float(n), z)
    return Interval(successes / n, low, high, confidence, "wilson")


def task_rate_interval(
    successes: Sequence[int] | np.ndarray, episodes: Sequence[int] | np.ndarray, *, confidence: float = CONFIDENCE
) -> Interval:
    """Interval of the mean over tasks of ``successes[i] / episodes[i]`` (Wilson with a design effect).

    Example:
        >>> task_rate_interval([0, 16, 0, 16], [16] * 4).half_width > wilson_interval(32, 64).half_width
        True
    """
    wins, counts = np.asarray(successes, dtype=float), np.asarray(episodes, dtype=float)
    if wins.shape != counts.shape or wins.ndim != 1 or wins.size == 0:
        raise InvalidOptionError(
            f"Need one success and one episode count per task, got {wins.shape} and {counts.shape}."
        )
    if np.any(counts < 1) or np.any(wins < 0) or np.any(wins > counts):
        raise InvalidOptionError("Each task needs at least one episode and 0 <= successes <= episodes.")
    z = _two_sided_z(confidence)
    rates = wins / counts
    tasks, total = rates.size, float(counts.sum())
    rate = float(rates.mean())
    deff = 1.0
    if 0.0 < rate < 1.0 and tasks > 1:
        cluster_variance = float(rates.var(ddof=1)) / tasks
        deff = max(1.0, cluster_variance / (rate * (1.0 - rate) / total))
    low, high = _wilson_bounds(rate, total / deff, z)
    return Interval(rate, low, high, confidence, "task_wilson")


def _bootstrap_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    if resamples < 100:
        raise InvalidOptionError(f"The bootstrap needs at least 100 resamples, got {resamples}.")
    index = np.random.default_rng(seed).integers(0, values.size, size=(resamples, values.size))
    return values[index].mean(axis=1)


def bca_interval(
    values: Sequence[float] | np.ndarray,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Expanded BCa bootstrap interval of the mean of per-task ``values`` (tasks resampled with replacement).

    Constant values give a zero-width interval (the bootstrap has nothing to resample).

    Example:
        >>> interval = bca_interval([0.0, 0.25, 0.5, 1.0, 1.0, 0.75], resamples=500)
        >>> interval.low < 0.58 < interval.high
        True
    """
    z = _two_sided_z(confidence)
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0 or not np.all(np.isfinite(data)):
        raise InvalidOptionError(f"BCa needs a non-empty list of finite per-task values, got shape {data.shape}.")
    estimate = float(data.mean())
    if data.size == 1 or np.all(data == data[0]):
        return Interval(estimate, estimate, estimate, confidence, "bca")
    means = _bootstrap_means(data, resamples, seed)
    below = (np.sum(means < estimate) + 0.5 * np.sum(means == estimate)) / resamples
    z0 = _NORMAL.inv_cdf(min(max(below, 1.0 / resamples), 1.0 - 1.0 / resamples))
    jackknife = (data.sum() - data) / (data.size - 1)
    deviations = jackknife.mean() - jackknife
    scale = float(np.sum(deviations**2)) ** 1.5
    acceleration = float(np.sum(deviations**3)) / (6.0 * scale) if scale > 0 else 0.0
    bounds = []
    for sign in (-1.0, 1.0):
        shifted = z0 + sign * z
        level = _NORMAL.cdf(z0 + shifted / (1.0 - acceleration * shifted))
        bounds.append(float(np.quantile(means, min(max(level, 0.0), 1.0))))
    factor = _student_quantile(confidence, data.size - 1) / z * math.sqrt(data.size / (data.size - 1))
    low, high = (estimate + factor * (bound - estimate) for bound in bounds)
    return Interval(estimate, low, high, confidence, "bca_expanded")


def _student_quantile(confidence: float, freedom: int) -> float:
    """Two-sided Student-t quantile by the Cornish-Fisher expansion (error < 1e-3 for ``freedom >= 3``)."""
    z = _NORMAL.inv_cdf(0.5 + confidence / 2.0)
    nu = float(max(freedom, 1))
    return (
        z
        + (z**3 + z) / (4 * nu)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * nu**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * nu**3)
    )


def paired_difference(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    *,
    confidence: float = CONFIDENCE,
) -> Interval:
    """Student-t interval of ``mean(first) - mean(second)`` on the same tasks (per-task differences).

    The studentized interval on the paired differences covered 94.5% at nominal 95% in a seeded
    simulation (12 tasks x 16 episodes, heterogeneous tasks, shift 0.1) where the expanded BCa covered
    92.7%, so it is the one used for paired agent differences.

    Example:
        >>> paired_difference([1.0, 0.5, 0.75], [0.5, 0.0, 0.25]).estimate
        0.5
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise InvalidOptionError(
            f"A paired difference needs the same tasks on both sides, got {a.shape} and {b.shape}."
        )
    check_confidence(confidence)
    differences = a - b
    estimate = float(differences.mean())
    if differences.size == 1:
        return Interval(estimate, estimate, estimate, confidence, "paired_t")
    spread = _student_quantile(confidence, differences.size - 1) * float(differences.std(ddof=1))
    spread /= math.sqrt(differences.size)
    return Interval(estimate, estimate - spread, estimate + spread, confidence, "paired_t")


def bootstrap_p_value(replicates: Sequence[float] | np.ndarray, null: float = 0.0) -> float:
    """Two-sided bootstrap p-value of ``null``: twice the smaller tail of the replicates beyond it (capped at 1).

    Example:
        >>> bootstrap_p_value([0.1, 0.2, 0.3, -0.1])
        0.5
    """
    data = np.asarray(replicates, dtype=float)
    if data.size == 0:
        raise InvalidOptionError("A bootstrap p-value needs at least one replicate.")
    tail = min(np.mean(data <= null), np.mean(data >= null))
    return float(min(1.0, 2.0 * tail))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given); compare each to the family's alpha."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        value = p_values[index]
        if not 0.0 <= value <= 1.0:
            raise InvalidOptionError(f"p-values must be in [0, 1], got {value!r}.")
        running = max(running, min(1.0, (len(p_values) - rank) * value))
        adjusted[index] = round(running, 12)
    return adjusted


def equivalence_verdict(interval: Interval, margin: float) -> str:
    """``equivalent`` (interval inside ``[-margin, margin]``), ``different`` (excludes 0) or ``undecided``.

    Use a ``1 - 2 alpha`` interval for a level-alpha two one-sided test (90% for alpha = 0.05).

    Example:
        >>> equivalence_verdict(Interval(0.01, -0.02, 0.03, 0.9, "bca"), margin=0.05)
        'equivalent'
    """
    if margin <= 0:
        raise InvalidOptionError(f"An equivalence margin must be positive, got {margin!r}.")
    if -margin <= interval.low and interval.high <= margin:
        return "equivalent"
    if interval.low > 0 or interval.high < 0:
        return "different"
    return "undecided"
