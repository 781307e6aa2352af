"""How much larger a study must be for a claim to be decided: a projection from its achieved interval.

A half-width of 0.05 does not decide a claim whose estimate is +0.04: its interval would still hold both 0 and
the margin. :func:`growth_to_decide` answers the question a reader of an ``undecided`` verdict asks instead: if
the true contrast equals today's estimate, by what factor must every size (training seeds, tasks or states,
episodes) grow for the claim to be decided, ``supported`` or ``not_supported``, with probability ``power``?

The projection is a normal approximation of the claim's estimate: its standard error today is the interval's
half-width over ``z`` of the interval's confidence, and it shrinks as ``1 / sqrt(growth)``. The chance of a
verdict at a growth is the chance that the estimate falls where a rule of
:func:`agentgym_budget.stats.claims.decide_claims` decides (the union of the regions below), and the growth
returned is the smallest that reaches ``power``:

* ``supported`` (not ``single_step``): the interval excludes 0 upwards **and** the Holm-adjusted p-value is
  below ``alpha``, taken at Holm's strictest step (``alpha / tested``), so the projection errs large;
* ``not_supported`` (not ``single_step``): the interval excludes 0 downwards, or lies inside ``±margin``;
* ``single_step`` (a 90% equivalence interval): ``supported`` inside ``±margin`` or below 0,
  ``not_supported`` above 0.

It is a projection, not a measurement: training seeds add spread that one seed cannot show, and
``tests/test_power.py`` checks it against the decision rules themselves by simulation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import NormalDist
from typing import Any

from agentgym_budget.errors import InvalidOptionError

__all__ = ["growth_to_decide"]

_NORMAL = NormalDist()


def _z(two_sided: float) -> float:
    """The normal quantile of a two-sided level: 1.96 for 0.95."""
    return _NORMAL.inv_cdf(0.5 + two_sided / 2)


_LARGEST_GROWTH = 10_000.0


def _decision_regions(claim: str, error: float, margin: float, z_interval: float, z_test: float) -> list[tuple]:
    """Where the estimate must fall for a verdict, given its standard error: disjoint ``(low, high)`` ranges."""
    half = z_interval * error
    inside = margin - half
    if claim == "single_step":
        cuts = [(-math.inf, -half), (half, math.inf)]
    else:
        cuts = [(-math.inf, -half), (max(half, z_test * error), math.inf)]
    if inside > 0:
        cuts.append((-inside, inside))
    cuts.sort()
    merged: list[list[float]] = []
    for low, high in cuts:
        if merged and low <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return [(low, high) for low, high in merged]


def _decision_chance(
    claim: Mapping[str, Any], growth: float, *, margin: float = 0.05, alpha: float = 0.05, tested: int = 1
) -> float:
    """Chance that a study ``growth`` times this one's size decides ``claim``, if the truth is its estimate.

    Example:
        >>> claim = {"claim": "recovery", "estimate": 0.0625, "interval": {"half_width": 0.094, "confidence": 0.95}}
        >>> round(_decision_chance(claim, 1.0, tested=4), 2)
        0.12
    """
    interval = claim["interval"]
    z_interval = _z(float(interval["confidence"]))
    error = float(interval["half_width"]) / z_interval / math.sqrt(growth)
    truth = NormalDist(float(claim["estimate"]), error)
    z_test = _NORMAL.inv_cdf(1 - alpha / tested / 2)
    regions = _decision_regions(claim["claim"], error, margin, z_interval, z_test)
    return sum(truth.cdf(high) - truth.cdf(low) for low, high in regions)


def growth_to_decide(
    claim: Mapping[str, Any], *, margin: float = 0.05, alpha: float = 0.05, tested: int = 1, power: float = 0.8
) -> float | None:
    """Smallest factor by which every size must grow for ``claim`` to be decided with probability ``power``.

    Args:
        claim: A claim of ``study.json``: ``claim``, ``estimate`` and ``interval`` (``half_width``,
            ``confidence``).
        margin: The equivalence margin of the claims.
        alpha: Family-wise error rate of their Holm correction.
        tested: How many claims share the Holm correction.
        power: Wanted probability of a verdict if the true contrast equals the estimate.

    Returns:
        The factor (1.0 if today's sizes already suffice), or ``None`` for a claim without an interval, or one
        no growth up to 10,000x decides.

    Raises:
        InvalidOptionError: ``power`` or ``alpha`` outside (0, 1), ``margin`` not positive, ``tested`` < 1.

    Example:
        >>> claim = {"claim": "recovery", "estimate": 0.0625, "interval": {"half_width": 0.094, "confidence": 0.95}}
        >>> round(growth_to_decide(claim, tested=4), 1)
        6.5
    """
    if not (0 < power < 1 and 0 < alpha < 1) or margin <= 0 or tested < 1:
        raise InvalidOptionError(
            f"power and alpha must lie in (0, 1), margin be > 0 and tested >= 1; got power={power!r}, "
            f"alpha={alpha!r}, margin={margin!r}, tested={tested!r}."
        )
    interval = claim.get("interval")
    if not interval or claim.get("estimate") is None or float(interval["half_width"]) <= 0:
        return None

    def enough(growth: float) -> bool:
        return _decision_chance(claim, growth, margin=margin, alpha=alpha, tested=tested) >= power

    if enough(1.0):
        return 1.0
    grid = [1.0 * 1.25**i for i in range(1, 1 + math.ceil(math.log(_LARGEST_GROWTH, 1.25)))]
    high = next((growth for growth in grid if enough(growth)), None)
    if high is None:
        return None
    low = high / 1.25
    for _ in range(40):
        middle = math.sqrt(low * high)
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high
