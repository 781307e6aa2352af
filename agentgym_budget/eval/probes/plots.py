"""Plots of the probes: single-step accuracy and value by depth.

:func:`accuracy_by_depth_figure` (``accuracy_by_depth``) returns a :class:`matplotlib.figure.Figure`
built with the helpers of :mod:`agentgym_budget.eval.figures` (save it with
:func:`~agentgym_budget.eval.figures.save_figure`, in any of its formats): step accuracy and step value
against the depth of the probe state, one line per agent with its bootstrap band; a depth without
states breaks the line (nothing is drawn across it). Lines of different agents are shifted a little
along x and drawn in different styles (:func:`draw_estimates`), so agents with equal results stay visible.

Example:
    >>> from agentgym_budget.eval.probes.summary import Estimate
    >>> break_gaps([(0, Estimate(1.0, 1.0, 1.0, 2)), (2, Estimate(0.0, 0.0, 0.0, 1))], step=1)[1][1]
    nan
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agentgym_budget.eval.figures import figure_legend, new_figure, series_style, shifted
from agentgym_budget.eval.probes.summary import Estimate, ProbeSummary

__all__: list[str] = []


def break_gaps(points: Sequence[tuple[int, Estimate]], step: int) -> list[tuple[float, float, float, float]]:
    """``(x, mean, low, high)`` rows of ``points`` (sorted by x) with a ``nan`` row wherever x jumps by more than ``step``.

    Matplotlib breaks a line (and its band) at ``nan``, so no line is drawn across x values without data.

    Example:
        >>> rows = break_gaps([(0, Estimate(1.0, 1.0, 1.0, 2)), (1, Estimate(0.5, 0.0, 1.0, 2)),
        ...                    (4, Estimate(0.0, 0.0, 0.0, 1))], step=1)
        >>> [row[1] for row in rows]
        [1.0, 0.5, nan, 0.0]
    """
    rows: list[tuple[float, float, float, float]] = []
    previous: int | None = None
    for x, estimate in sorted(points, key=lambda point: point[0]):
        if previous is not None and x - previous > step:
            rows.append(((x + previous) / 2, np.nan, np.nan, np.nan))
        rows.append((float(x), estimate.mean, estimate.low, estimate.high))
        previous = x
    return rows


def draw_estimates(
    axis: Any, points: Sequence[tuple[int, Estimate]], label: str, index: int, count: int, *, gap: int | None = None
) -> None:
    """Draw ``(x, estimate)`` points on ``axis`` as the ``index``-th of ``count`` lines, with its interval band.

    With ``gap``, the line breaks where x jumps by more than ``gap`` (:func:`break_gaps`).
    """
    rows = break_gaps(points, gap) if gap is not None else [(x, e.mean, e.low, e.high) for x, e in points]
    if not rows:
        return
    xs, means, lows, highs = (np.array(column, dtype=float) for column in zip(*rows, strict=True))
    xs = shifted(xs, index, count, step=0.12)
    axis.plot(xs, means, label=label, **series_style(index))
    axis.fill_between(xs, lows, highs, alpha=0.15)


def accuracy_by_depth_figure(summary: ProbeSummary) -> Any:
    """Step accuracy and step value against depth, one line (with interval band) per agent, broken at empty depths."""
    figure, axes = new_figure(2, columns=2, width=5.0)
    count = len(summary.agents)
    for index, (name, agent) in enumerate(summary.agents.items()):
        depths = sorted(agent.by_depth)
        draw_estimates(axes[0], [(d, agent.by_depth[d][0]) for d in depths], name, index, count, gap=1)
        draw_estimates(axes[1], [(d, agent.by_depth[d][1]) for d in depths], name, index, count, gap=1)
    for axis, title in zip(
        axes, ("step accuracy (expert agreement)", "step value (continuations that win)"), strict=True
    ):
        axis.set_title(title, fontsize=10)
        axis.set_xlabel("depth of the probe state (reference turns before it)")
        axis.set_ylabel("mean over states")
        axis.set_ylim(-0.03, 1.03)
        axis.grid(alpha=0.3)
    figure_legend(figure, axes)
    states = max((agent.step_accuracy.n for agent in summary.agents.values()), default=0)
    figure.suptitle(f"Single-step probes by depth ({states} states)")
    return figure
