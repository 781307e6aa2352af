"""Plots of the probes: single-step accuracy and value by depth; recovery rate against the remaining budget.

Both use the figure helpers of :mod:`agentgym_budget.eval.plots` (Agg canvas, atomic writes).

* :func:`plot_accuracy_by_depth` (``accuracy_by_depth.png``): step accuracy and step value against
  the depth of the probe state, one line per agent with its bootstrap band;
* :func:`plot_recovery_vs_budget` (``recovery_vs_budget.png``): recovery rate against the turns left
  after the perturbation, one panel per number of forced wrong actions ``k``, one line per agent.

Lines of different agents are shifted a little along x and drawn in different styles, so agents
with equal results stay visible.

Example:
    >>> import tempfile, pathlib
    >>> from agentgym_budget.eval.probe_summary import Estimate
    >>> curves = {"a": {1: [(5, Estimate(0.2, 0.1, 0.3, 4)), (10, Estimate(0.6, 0.4, 0.8, 4))]},
    ...           "b": {1: [(5, Estimate(0.0, 0.0, 0.0, 4)), (10, Estimate(0.1, 0.0, 0.2, 4))]}}
    >>> path = plot_recovery_vs_budget(curves, pathlib.Path(tempfile.mkdtemp()) / "recovery.png")
    >>> path.stat().st_size > 1000
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_budget.eval.plots import figure_legend, new_figure, save_figure
from agentgym_budget.eval.probe_summary import Estimate, ProbeSummary

__all__ = ["plot_accuracy_by_depth", "plot_recovery_vs_budget"]


_MARKERS = ("o", "s", "^", "D", "v")
_STYLES = ("-", "--", ":", "-.")


def _line(axis: Any, points: Sequence[tuple[int, Estimate]], label: str, index: int = 0, count: int = 1) -> None:
    # Agents with equal results would hide each other: shift each line a little and vary its style.
    shift = (index - (count - 1) / 2) * 0.12
    xs = np.array([x for x, _ in points], dtype=float) + shift
    style = {"marker": _MARKERS[index % len(_MARKERS)], "linestyle": _STYLES[index % len(_STYLES)]}
    axis.plot(xs, [e.mean for _, e in points], label=label, **style)
    axis.fill_between(xs, [e.low for _, e in points], [e.high for _, e in points], alpha=0.15)


def plot_accuracy_by_depth(summary: ProbeSummary, path: Path) -> Path:
    """Step accuracy and step value against depth, one line (with interval band) per agent."""
    figure, axes = new_figure(2, columns=2, width=5.0)
    count = len(summary.agents)
    for index, (name, agent) in enumerate(summary.agents.items()):
        depths = sorted(agent.by_depth)
        _line(axes[0], [(d, agent.by_depth[d][0]) for d in depths], name, index, count)
        _line(axes[1], [(d, agent.by_depth[d][1]) for d in depths], name, index, count)
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
    return save_figure(figure, path)


def plot_recovery_vs_budget(curves: Mapping[str, Mapping[int, Sequence[tuple[int, Estimate]]]], path: Path) -> Path:
    """Recovery rate against the remaining budget: ``curves[agent][k]`` is a list of ``(budget, estimate)``."""
    ks = sorted({k for per_k in curves.values() for k in per_k})
    figure, axes = new_figure(len(ks), columns=3)
    for k, axis in zip(ks, axes, strict=True):
        for index, (name, per_k) in enumerate(curves.items()):
            if per_k.get(k):
                _line(axis, list(per_k[k]), name, index, len(curves))
        axis.set_title("no perturbation (control)" if k == 0 else f"k = {k} forced wrong action{'s' if k > 1 else ''}")
        axis.set_xlabel("turns left after the perturbation")
        axis.set_ylabel("recovery rate (won)")
        axis.set_ylim(-0.03, 1.03)
        axis.grid(alpha=0.3)
    figure_legend(figure, axes)
    figure.suptitle("Recovery rate against the remaining budget")
    return save_figure(figure, path)
