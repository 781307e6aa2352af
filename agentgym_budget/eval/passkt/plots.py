"""Plots of Pass@(K,T) summaries (matplotlib's Agg canvas; no display, no global backend change).

Each plot is a function returning a :class:`matplotlib.figure.Figure`:

* :func:`heatmap_figure`: one Pass@(K,T) heatmap per agent (``heatmap``);
* :func:`success_vs_budget_figure`: success against the budget ``T``, one panel per ``K``, one line per
  agent with its interval band (``success_vs_T``);
* :func:`passk_vs_k_figure`: pass@K against ``K``, one panel per ``T`` (``passk_vs_K``);
* :func:`difference_figure`: for every pair of agents, the heatmap of ``first - second`` on common
  tasks, cells whose interval excludes 0 marked with ``*`` (``difference``): where the first agent's
  advantage lives in the (K, T) plane.

Curves of different agents never hide each other: each agent has its own marker and line style and
is shifted a little along x (:func:`series_style`, :func:`shifted`), and an agent whose whole grid
equals another's says so in the legend ("same as ...").

:func:`write_plots` writes all that apply, in every requested format (``png``, ``pdf``, ``svg``),
into an :func:`~agentgym_budget.runner.outputs.output_set` and returns their paths. The figure helpers
(:func:`~agentgym_budget.eval.figures.new_figure`, ...) are those of :mod:`agentgym_budget.eval.figures`.

Example:
    >>> import tempfile, pathlib
    >>> from agentgym_budget.runner.outputs import output_set, plot_names
    >>> from agentgym_budget.eval.passkt.summary import summarize
    >>> records = [{"agent": a, "env_id": "e", "task_id": f"t{t}", "sample": s, "budget": 5, "mode": "independent",
    ...             "won": (s + t) % (2 if a == "x" else 3) == 0, "turns": 5} for a in "xy" for t in range(3) for s in range(2)]
    >>> summary = summarize(records, ks=[1, 2], budgets=[5], resamples=200)
    >>> with output_set(tempfile.mkdtemp(), plot_names(PLOT_STEMS)) as outputs:
    ...     paths = write_plots(summary, outputs, formats=("svg",))
    >>> sorted(p.name for p in outputs.written), all(p.stat().st_size > 1000 for p in outputs.written)
    (['difference.svg', 'heatmap.svg', 'passk_vs_K.svg', 'success_vs_T.svg'], True)
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_budget.eval.figures import add_caption, figure_legend, new_figure, save_figure, series_style, shifted
from agentgym_budget.eval.passkt.caption import summary_caption
from agentgym_budget.eval.passkt.summary import AgentGrid, Difference, Summary
from agentgym_budget.runner.outputs import OutputSet

__all__: list[str] = []

PLOT_STEMS = ("heatmap", "success_vs_T", "passk_vs_K", "difference")
"""File names (without format) of the Pass@(K,T) plots."""


def same_as(grids: Sequence[AgentGrid]) -> dict[int, str]:
    """``index -> label`` of an earlier grid with exactly the same estimates (for legend notes).

    Example:
        >>> import numpy as np
        >>> key = ("a", "e", "{}", None, "independent", False)
        >>> grid = lambda label, v: AgentGrid(label, key, ("t",), (1,), (5,), 1, np.array([[v]]), np.array([[v]]),
        ...                                   np.array([[v]]))
        >>> same_as([grid("a", 0.5), grid("b", 0.25), grid("c", 0.5)])
        {2: 'a'}
    """
    notes: dict[int, str] = {}
    for later in range(len(grids)):
        for earlier in range(later):
            a, b = grids[earlier].estimate, grids[later].estimate
            if a.shape == b.shape and np.isfinite(a).any() and np.array_equal(a, b, equal_nan=True):
                notes[later] = grids[earlier].label
                break
    return notes


def _labels(grids: Sequence[AgentGrid]) -> list[str]:
    notes = same_as(grids)
    return [grid.label + (f" (same as {notes[i]})" if i in notes else "") for i, grid in enumerate(grids)]


def _annotated_heatmap(
    axis: Any, values: np.ndarray, ks: Sequence[int], budgets: Sequence[int], *, labels: list[list[str]], **style: Any
) -> Any:
    image = axis.imshow(np.ma.masked_invalid(values), origin="lower", aspect="auto", **style)
    axis.set_xticks(range(len(budgets)), [str(t) for t in budgets])
    axis.set_yticks(range(len(ks)), [str(k) for k in ks])
    axis.set_xlabel("turn budget T")
    axis.set_ylabel("samples K")
    norm = image.norm
    for i in range(len(ks)):
        for j in range(len(budgets)):
            if math.isnan(values[i, j]):
                continue
            shade = float(norm(values[i, j]))
            color = "white" if (shade < 0.45 if style.get("cmap") == "viridis" else abs(shade - 0.5) > 0.3) else "black"
            axis.text(j, i, labels[i][j], ha="center", va="center", fontsize=8, color=color)
    return image


def heatmap_figure(grids: Sequence[AgentGrid]) -> Any:
    """One Pass@(K,T) heatmap per grid, values annotated."""
    figure, axes = new_figure(len(grids), columns=3)
    image = None
    for grid, axis in zip(grids, axes, strict=True):
        labels = [[f"{v:.2f}" for v in row] for row in grid.estimate]
        image = _annotated_heatmap(
            axis, grid.estimate, grid.ks, grid.budgets, labels=labels, cmap="viridis", vmin=0.0, vmax=1.0
        )
        axis.set_title(f"{grid.label}\n{len(grid.tasks)} tasks x {grid.samples} samples", fontsize=9)
    figure.colorbar(image, ax=axes, shrink=0.85, label="Pass@(K,T)")
    figure.suptitle("Pass@(K,T)")
    return figure


def success_vs_budget_figure(grids: Sequence[AgentGrid]) -> Any:
    """Pass@(K,T) against T: one panel per K, one line (with interval band) per grid."""
    ks = grids[0].ks
    labels = _labels(grids)
    figure, axes = new_figure(len(ks), columns=2 if len(ks) <= 4 else 3)  # 2 x 2 for K = 1, 2, 4, 8: legible on a page
    for i, (k, axis) in enumerate(zip(ks, axes, strict=True)):
        for index, grid in enumerate(grids):
            gaps = np.diff(grid.budgets).min() if len(grid.budgets) > 1 else 1
            budgets = shifted(grid.budgets, index, len(grids), step=0.06 * gaps)
            axis.plot(budgets, grid.estimate[i], label=labels[index], **series_style(index))
            axis.fill_between(budgets, grid.low[i], grid.high[i], alpha=0.15)
        axis.set_title(f"K = {k}")
        axis.set_xlabel("turn budget T")
        axis.set_ylabel("Pass@(K,T)")
        axis.set_ylim(-0.03, 1.03)
        axis.grid(alpha=0.3)
    figure_legend(figure, axes)
    figure.suptitle("Success against the turn budget, at fixed K")
    return figure


def passk_vs_k_figure(grids: Sequence[AgentGrid]) -> Any:
    """Pass@(K,T) against K (log scale): one panel per T, one line (with interval band) per grid."""
    budgets = grids[0].budgets
    labels = _labels(grids)
    figure, axes = new_figure(len(budgets), columns=3, width=3.6)
    for j, (t, axis) in enumerate(zip(budgets, axes, strict=True)):
        for index, grid in enumerate(grids):
            ks = shifted(grid.ks, index, len(grids), step=0.08, log=True)
            axis.plot(ks, grid.estimate[:, j], label=labels[index], **series_style(index))
            axis.fill_between(ks, grid.low[:, j], grid.high[:, j], alpha=0.15)
        axis.set_xscale("log", base=2)
        axis.set_xticks(grids[0].ks, [str(k) for k in grids[0].ks])
        axis.set_title(f"T = {t}")
        axis.set_xlabel("samples K")
        axis.set_ylabel("Pass@(K,T)")
        axis.set_ylim(-0.03, 1.03)
        axis.grid(alpha=0.3)
    figure_legend(figure, axes)
    figure.suptitle("Pass@K against K, at fixed turn budget")
    return figure


def difference_figure(differences: Sequence[Difference]) -> Any:
    """Heatmap of ``first - second`` per pair; ``*`` marks cells whose interval excludes 0."""
    figure, axes = new_figure(len(differences), columns=3, width=4.8)
    image = None
    finite = [np.nanmax(np.abs(d.estimate)) for d in differences if np.isfinite(d.estimate).any()]
    scale = max([0.05, *finite])
    for difference, axis in zip(differences, axes, strict=True):
        labels = []
        for i in range(len(difference.ks)):
            row = []
            for j in range(len(difference.budgets)):
                low, high = difference.low[i, j], difference.high[i, j]
                mark = "*" if low > 0 or high < 0 else ""
                row.append(f"{difference.estimate[i, j]:+.2f}{mark}")
            labels.append(row)
        image = _annotated_heatmap(
            axis,
            difference.estimate,
            difference.ks,
            difference.budgets,
            labels=labels,
            cmap="RdBu",
            vmin=-scale,
            vmax=scale,
        )
        axis.set_title(f"{difference.first}\nminus {difference.second}", fontsize=9)
    figure.colorbar(image, ax=axes, shrink=0.85, label="difference in Pass@(K,T)")
    figure.suptitle(f"Difference ({len(differences[0].tasks)} common tasks; * = interval excludes 0)")
    return figure


def write_plots(summary: Summary, outputs: OutputSet, formats: Sequence[str] = ("png",)) -> list[Path]:
    """Write every plot that applies to ``summary`` in each of ``formats`` into ``outputs``; return their paths.

    ``outputs`` must accept the names :func:`plot_names` ``(PLOT_STEMS)``; the paths returned are
    where the files are staged until the output set is committed.
    """
    grids = [grid for grid in summary.grids if np.isfinite(grid.estimate).any()]
    if not grids:
        return []
    figures = {
        "heatmap": heatmap_figure(grids),
        "success_vs_T": success_vs_budget_figure(grids),
        "passk_vs_K": passk_vs_k_figure(grids),
    }
    differences = [d for d in summary.differences if np.isfinite(d.estimate).any()]
    if differences:
        figures["difference"] = difference_figure(differences)
    paths = []
    for stem, figure in figures.items():
        caption = textwrap.fill(summary_caption(summary, stem), width=int(figure.get_figwidth() * 15))
        add_caption(figure, caption)
        paths += save_figure(figure, [outputs.path(f"{stem}.{fmt}") for fmt in formats])
    return paths
