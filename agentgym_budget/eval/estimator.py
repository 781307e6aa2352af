r"""Pass@k estimation: the unbiased estimator, its average over tasks, and bootstrap intervals.

For one task with ``n`` sampled episodes of which ``c`` succeeded, the probability that at least one
of ``k`` episodes drawn without replacement from the ``n`` succeeds is

.. math:: \widehat{\text{pass@}k} = 1 - \binom{n-c}{k} \Big/ \binom{n}{k},

an unbiased estimate of ``1 - (1-p)^k`` for the task's success probability ``p`` (Chen et al., 2021).
It is computed as the product :math:`1 - \prod_{i=n-c+1}^{n} (1 - k/i)`, which never forms the
binomial coefficients (exact for any ``n``, no overflow). The estimate of a task set is the mean over
its tasks; :func:`bootstrap_ci` resamples *tasks* with replacement to give a percentile interval
(the samples inside a task are not resampled: the estimator already averages over them), and
:func:`paired_bootstrap_ci` does the same for the difference of two agents on the same tasks.

Example:
    >>> round(pass_at_k(n=10, c=3, k=1), 12)
    0.3
    >>> round(pass_at_k(n=10, c=3, k=4), 4)
    0.8333
    >>> pass_at_k(n=5, c=2, k=4)
    1.0
    >>> mean_pass_at_k([10, 10], [0, 10], k=2)
    0.5
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentgym_budget.errors import InvalidOptionError

__all__ = ["bootstrap_ci", "mean_pass_at_k", "paired_bootstrap_ci", "pass_at_k", "pass_at_k_per_task"]

DEFAULT_BOOTSTRAP = 2000
"""Bootstrap resamples used by default."""

DEFAULT_CONFIDENCE = 0.95
"""Default confidence level of the intervals."""


def _check(n: int, c: int, k: int) -> None:
    if not (isinstance(n, (int, np.integer)) and isinstance(c, (int, np.integer)) and isinstance(k, (int, np.integer))):
        raise InvalidOptionError(f"pass@k needs integers n, c, k; got n={n!r}, c={c!r}, k={k!r}.")
    if not 0 <= c <= n:
        raise InvalidOptionError(f"pass@k needs 0 <= c <= n successes, got c={c} of n={n}.")
    if not 1 <= k <= n:
        raise InvalidOptionError(
            f"pass@k needs 1 <= k <= n: k={k} with only n={n} samples per task; sample at least k episodes."
        )


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate ``1 - C(n-c, k) / C(n, k)`` for one task (see the module docstring).

    Raises:
        InvalidOptionError: Not ``0 <= c <= n`` or not ``1 <= k <= n``.
    """
    _check(n, c, k)
    if n - c < k:
        return 1.0
    factors = 1.0 - k / np.arange(n - c + 1, n + 1, dtype=float)
    return float(1.0 - np.prod(factors))


def pass_at_k_per_task(n: Sequence[int], c: Sequence[int], k: int) -> np.ndarray:
    """:func:`pass_at_k` of every task (``n[i]`` samples, ``c[i]`` successes) as an array.

    Example:
        >>> pass_at_k_per_task([4, 4, 4], [0, 1, 4], k=2).tolist()
        [0.0, 0.5, 1.0]
    """
    if len(n) != len(c):
        raise InvalidOptionError(f"pass@k: {len(n)} sample counts but {len(c)} success counts.")
    return np.array([pass_at_k(int(ni), int(ci), k) for ni, ci in zip(n, c, strict=True)], dtype=float)


def mean_pass_at_k(n: Sequence[int], c: Sequence[int], k: int) -> float:
    """Mean of :func:`pass_at_k_per_task` over tasks (``nan`` for no task)."""
    values = pass_at_k_per_task(n, c, k)
    return float(values.mean()) if values.size else float("nan")


def _interval(means: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def _resample_index(size: int, resamples: int, seed: int) -> np.ndarray:
    if resamples < 1:
        raise InvalidOptionError(f"The bootstrap needs a positive number of resamples, got {resamples}.")
    return np.random.default_rng(seed).integers(0, size, size=(resamples, size))


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-task ``values`` (tasks resampled with replacement).

    Returns ``(nan, nan)`` for no task; a single task gives a zero-width interval.

    Example:
        >>> low, high = bootstrap_ci([0.0, 0.5, 1.0, 1.0], resamples=500)
        >>> 0.0 <= low <= 0.625 <= high <= 1.0
        True
    """
    if not 0 < confidence < 1:
        raise InvalidOptionError(f"confidence must be in (0, 1), got {confidence}.")
    array = np.asarray(values, dtype=float)
    if array.size == 0:
        return float("nan"), float("nan")
    means = array[_resample_index(array.size, resamples, seed)].mean(axis=1)
    return _interval(means, confidence)


def paired_bootstrap_ci(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> tuple[float, float]:
    """Bootstrap interval of ``mean(first) - mean(second)`` over the same tasks, resampled together.

    Example:
        >>> paired_bootstrap_ci([1.0, 1.0, 0.5], [0.5, 0.5, 0.0], resamples=200)
        (0.5, 0.5)
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape:
        raise InvalidOptionError(f"Paired bootstrap needs the same tasks for both sides, got {a.size} and {b.size}.")
    return bootstrap_ci(a - b, confidence=confidence, resamples=resamples, seed=seed)
