"""Hierarchical bootstrap over training seeds, then tasks, then episodes, for contrasts of cell means.

A *cell* is one arm of the study (say ``("grpo", 4)``: an agent at a budget) with outcomes in an array
of shape ``(seeds, tasks, episodes)``: training seed, evaluation task, episode. All cells share the same
tasks in the same order (the agents are evaluated on the same held-out tasks), so a replicate draws
**one** set of tasks for every cell (paired over tasks); training seeds are drawn per cell (seeds of
different recipes are independent runs; an agent with one seed, such as the base, keeps it), and
episodes are drawn per (cell, seed, task). Resampling every level is conservative (the episode level
adds its variance twice, once through the task means); it is the design that lets the interval include
the run-to-run spread of training, which is what a second run on another machine sees.

:func:`contrast_interval` gives the interval of any linear contrast ``sum_c w_c * mean_c``, e.g. the
interaction ``Δ(T_large) - Δ(T_small)`` of :func:`interaction_weights`.

Example:
    >>> rng = np.random.default_rng(0)
    >>> cells = {("rl", 8): rng.random((3, 6, 16)) < 0.8, ("base", 8): rng.random((1, 6, 16)) < 0.5,
    ...          ("rl", 3): rng.random((3, 6, 16)) < 0.3, ("base", 3): rng.random((1, 6, 16)) < 0.3}
    >>> result = contrast_interval(cells, interaction_weights("rl", "base", 8, 3), resamples=400)
    >>> result.interval.low > 0
    True
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.stats.intervals import CONFIDENCE, RESAMPLES, Interval, bootstrap_p_value

__all__: list[str] = []

_NORMAL = NormalDist()


@dataclass(frozen=True)
class ContrastResult:
    """A contrast's interval, its bootstrap p-value against 0, and the sizes behind it.

    Attributes:
        interval: Estimate and bias-corrected percentile interval.
        p_value: Two-sided bootstrap p-value of ``contrast == 0``.
        sizes: Per cell ``{"seeds", "tasks", "episodes"}`` (keys rendered with ``str``).
    """

    interval: Interval
    p_value: float
    sizes: dict[str, dict[str, int]]


def interaction_weights(agent: str, base: str, large: int, small: int) -> dict[tuple[str, int], float]:
    """Weights of ``Δ(large) - Δ(small)`` with ``Δ(T) = mean[agent, T] - mean[base, T]``.

    Example:
        >>> interaction_weights("rl", "base", 8, 3)[("base", 3)]
        1.0
    """
    return {(agent, large): 1.0, (base, large): -1.0, (agent, small): -1.0, (base, small): 1.0}


def _validated(cells: Mapping[Hashable, np.ndarray], weights: Mapping[Hashable, float]) -> dict[Hashable, np.ndarray]:
    missing = [key for key in weights if key not in cells]
    if missing:
        raise InvalidOptionError(f"The contrast names cells {missing!r} that have no outcomes; cells: {list(cells)!r}.")
    arrays = {key: np.asarray(cells[key], dtype=float) for key in weights}
    shapes = {key: array.shape for key, array in arrays.items()}
    if any(len(shape) != 3 or min(shape) < 1 for shape in shapes.values()):
        raise InvalidOptionError(f"Each cell needs outcomes of shape (seeds, tasks, episodes), got {shapes!r}.")
    if len({shape[1] for shape in shapes.values()}) != 1:
        raise InvalidOptionError(f"All cells must share the same tasks, got task counts {shapes!r}.")
    return arrays


def _replicates(
    arrays: dict[Hashable, np.ndarray], weights: Mapping[Hashable, float], resamples: int, rng: np.random.Generator
) -> np.ndarray:
    tasks = next(iter(arrays.values())).shape[1]
    task_index = rng.integers(0, tasks, size=(resamples, tasks))
    total = np.zeros(resamples)
    for key in sorted(arrays, key=repr):
        outcomes = arrays[key]
        seeds, _, episodes = outcomes.shape
        seed_index = rng.integers(0, seeds, size=(resamples, seeds))
        episode_index = rng.integers(0, episodes, size=(resamples, seeds, tasks, episodes))
        drawn = outcomes[seed_index[:, :, None, None], task_index[:, None, :, None], episode_index]
        total += weights[key] * drawn.mean(axis=(1, 2, 3))
    return total


def contrast_interval(
    cells: Mapping[Hashable, np.ndarray],
    weights: Mapping[Hashable, float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> ContrastResult:
    """Hierarchical-bootstrap interval of ``sum(weights[c] * mean(cells[c]))`` (bias-corrected percentile).

    Raises:
        InvalidOptionError: A weighted cell is missing or misshapen, cells disagree on tasks, or bad options.
    """
    if not 0 < confidence < 1 or resamples < 100:
        raise InvalidOptionError(f"Need 0 < confidence < 1 and >= 100 resamples, got {confidence!r}, {resamples!r}.")
    arrays = _validated(cells, weights)
    estimate = float(sum(weights[key] * arrays[key].mean() for key in arrays))
    replicates = _replicates(arrays, weights, resamples, np.random.default_rng(seed))
    below = (np.sum(replicates < estimate) + 0.5 * np.sum(replicates == estimate)) / resamples
    z0 = _NORMAL.inv_cdf(min(max(below, 1.0 / resamples), 1.0 - 1.0 / resamples))
    z = _NORMAL.inv_cdf(0.5 + confidence / 2.0)
    levels = [_NORMAL.cdf(2.0 * z0 - z), _NORMAL.cdf(2.0 * z0 + z)]
    low, high = (float(value) for value in np.quantile(replicates, levels))
    sizes = {
        str(key): {"seeds": array.shape[0], "tasks": array.shape[1], "episodes": array.shape[2]}
        for key, array in arrays.items()
    }
    interval = Interval(estimate, min(low, estimate), max(high, estimate), confidence, "hierarchical_bootstrap")
    return ContrastResult(interval, bootstrap_p_value(replicates), sizes)
