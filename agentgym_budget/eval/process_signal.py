"""How informative is a family's step-level ``progress`` signal? Correlations, and where it misleads.

The probes and the recovery runs see many (state, step) pairs together with what eventually
happened. Each becomes a :class:`SignalPoint`: the ``progress`` of the state, the progress change
of the step taken from it (the signal a :class:`~agentgym_budget.wrappers.ProcessReward` pays
with ``gamma=1``), whether that step agreed with the expert or was an error (when known), and the
eventual success from the state (1/0 for an episode, or a rollout value in [0, 1]).

:func:`analyze_signal` reports, per family:

* ``progress_success_corr``: Pearson correlation of a state's progress with eventual success
  (point-biserial for 0/1 success), and ``progress_success_auc``: the probability that a state from
  which the task was eventually won has higher progress than one from which it was not (ties 1/2);
  ``success_by_progress``: the success rate per progress bin;
* ``high_progress_failures``: states with progress >= ``high`` that still failed, and their share
  of the high-progress states: where the signal *misleads* (it says "almost done" and the episode is
  lost anyway, e.g. a wrong product with most attributes right, or a recipe ruined at the end);
* step level: ``delta_success_corr`` and ``delta_optimal_corr`` (progress change against success
  and against expert agreement), ``silent_steps`` (share of steps with no change: where a dense
  reward says nothing), ``silent_optimal_steps`` (good steps the signal does not reward),
  ``rewarded_errors`` (errors with a positive change) and ``penalized_optimal_steps``;
* ``verdict``: one sentence summing that up.

Correlations are ``None`` when one side is constant (e.g. TextWorld Coin Collector with
``progress="score"``, 0 until the coin is taken: the signal carries no information before the end).

Example:
    >>> points = [SignalPoint("shop", p, d, s, o) for p, d, s, o in
    ...           [(0.0, 0.0, 0, False), (0.5, 0.5, 1, True), (0.8, 0.3, 1, True), (0.9, 0.0, 0, False)]]
    >>> report = analyze_signal(points)["shop"]
    >>> report["progress_success_auc"], report["high_progress_failures"]
    (0.5, {'threshold': 0.5, 'states': 3, 'failed': 1, 'rate': 0.333333})
    >>> report["delta_optimal_corr"] > 0.9, report["silent_steps"]
    (True, 0.5)
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SignalPoint", "analyze_signal", "correlation"]

PROGRESS_BINS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Edges of the progress bins of ``success_by_progress`` (the last bin is closed)."""


@dataclass(frozen=True)
class SignalPoint:
    """One state, the step taken from it, and what eventually happened (see the module docstring).

    Attributes:
        family: Task family.
        progress: ``progress`` of the state.
        delta: Progress change of the step taken from it (``None`` if unknown).
        success: Eventual success from the state, in [0, 1].
        optimal: The step agreed with the expert (``None`` if unknown).
        error: The step was an error (``None`` if unknown).
    """

    family: str
    progress: float
    delta: float | None
    success: float
    optimal: bool | None = None
    error: bool | None = None


def _round(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), 6)


def correlation(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson correlation of ``x`` and ``y`` (``None`` if fewer than 2 points or one side is constant).

    Example:
        >>> correlation([0, 1, 2], [0, 2, 4]), correlation([1, 1, 1], [0, 1, 0])
        (1.0, None)
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return _round(float(np.corrcoef(a, b)[0, 1]))


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float | None:
    """P(score of a random positive > score of a random negative), ties counting 1/2 (``None`` without both).

    Example:
        >>> auc([0.1, 0.4, 0.35, 0.8], [False, False, True, True])
        0.75
    """
    values = np.asarray(scores, dtype=float)
    mask = np.asarray(positive, dtype=bool)
    pos, neg = values[mask], values[~mask]
    if not pos.size or not neg.size:
        return None
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return _round((greater + 0.5 * ties) / (pos.size * neg.size))


def _share(part: int, whole: int) -> float | None:
    return _round(part / whole) if whole else None


def _bins(points: Sequence[SignalPoint]) -> list[dict[str, Any]]:
    rows = []
    edges = PROGRESS_BINS
    for i in range(len(edges) - 1):
        low, high = edges[i], edges[i + 1]
        last = i == len(edges) - 2
        inside = [p for p in points if low <= p.progress < high or (last and p.progress == high)]
        rows.append(
            {
                "bin": f"[{low:.2f}, {high:.2f}{']' if last else ')'}",
                "states": len(inside),
                "success": _round(float(np.mean([p.success for p in inside]))) if inside else None,
            }
        )
    return rows


def _verdict(report: dict[str, Any]) -> str:
    if report["progress_levels"] <= 1:
        return "progress is constant on these states: the signal carries no step-level information here."
    parts = []
    auc_value = report["progress_success_auc"]
    if auc_value is None:
        parts.append("every state had the same outcome, so progress cannot be checked against success")
    else:
        if auc_value < 0.4:
            parts.append(f"higher progress goes with more eventual failures here (AUC {auc_value:.2f} < 0.5)")
        else:
            strength = "strongly" if auc_value >= 0.8 else "weakly" if auc_value >= 0.6 else "barely"
            parts.append(f"progress {strength} separates eventual successes from failures (AUC {auc_value:.2f})")
    silent = report["silent_steps"]
    if silent is not None and silent >= 0.5:
        parts.append(f"it is silent on {silent:.0%} of the steps")
    failures = report["high_progress_failures"]
    if failures["rate"]:
        parts.append(f"{failures['rate']:.0%} of the states with progress >= {failures['threshold']} still failed")
    rewarded = report["rewarded_errors"]
    if rewarded:
        parts.append(f"{rewarded:.0%} of the errors raised progress")
    return "; ".join(parts) + "."


def _analyze_family(points: Sequence[SignalPoint], high: float) -> dict[str, Any]:
    progress = [p.progress for p in points]
    success = [p.success for p in points]
    won = [p.success >= 0.5 for p in points]
    steps = [p for p in points if p.delta is not None]
    deltas = [float(p.delta) for p in steps]  # type: ignore[arg-type]
    judged = [p for p in steps if p.optimal is not None]
    optimal = [p for p in judged if p.optimal]
    errors = [p for p in steps if p.error]
    high_states = [p for p in points if p.progress >= high]
    failed = [p for p in high_states if p.success < 0.5]
    report: dict[str, Any] = {
        "points": len(points),
        "progress_levels": len({round(v, 6) for v in progress}),
        "mean_progress": _round(float(np.mean(progress))) if points else None,
        "success_rate": _round(float(np.mean(success))) if points else None,
        "progress_success_corr": correlation(progress, success),
        "progress_success_auc": auc(progress, won),
        "success_by_progress": _bins(points),
        "high_progress_failures": {
            "threshold": high,
            "states": len(high_states),
            "failed": len(failed),
            "rate": _share(len(failed), len(high_states)),
        },
        "steps": len(steps),
        "delta_success_corr": correlation(deltas, [p.success for p in steps]),
        "delta_optimal_corr": correlation([float(p.delta) for p in judged], [float(bool(p.optimal)) for p in judged]),  # type: ignore[arg-type]
        "silent_steps": _share(sum(1 for d in deltas if d == 0), len(steps)),
        "silent_optimal_steps": _share(sum(1 for p in optimal if p.delta == 0), len(optimal)),
        "rewarded_errors": _share(sum(1 for p in errors if (p.delta or 0) > 0), len(errors)),
        "penalized_optimal_steps": _share(sum(1 for p in optimal if (p.delta or 0) < 0), len(optimal)),
    }
    report["verdict"] = _verdict(report)
    return report


def analyze_signal(points: Iterable[SignalPoint], *, high: float = 0.5) -> dict[str, dict[str, Any]]:
    """The report of the module docstring for every family in ``points`` (families sorted)."""
    by_family: dict[str, list[SignalPoint]] = defaultdict(list)
    for point in points:
        by_family[point.family].append(point)
    return {family: _analyze_family(by_family[family], high) for family in sorted(by_family)}


def format_signal(reports: dict[str, dict[str, Any]]) -> str:
    """One paragraph per family (for the terminal).

    Example:
        >>> print(format_signal({"textworld": {"points": 4, "verdict": "progress is constant."}}))
        Process signal (progress):
          textworld (4 points): progress is constant.
    """
    lines = ["Process signal (progress):"]
    for family, report in reports.items():
        lines.append(f"  {family} ({report['points']} points): {report['verdict']}")
    return "\n".join(lines)
