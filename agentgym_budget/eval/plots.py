"""Plots of Pass@(K,T) summaries (matplotlib's Agg canvas; no display, no global backend change).

* :func:`plot_heatmaps`: one Pass@(K,T) heatmap per agent (``heatmap.png``);
* :func:`plot_success_vs_budget`: success against the budget ``T``, one panel per ``K``, one line per
  agent with its interval band (``success_vs_T.png``);
* :func:`plot_passk_vs_k`: pass@K against ``K``, one panel per ``T`` (``passk_vs_K.png``);
* :func:`plot_differences`: for every pair of agents, the heatmap of ``first - second`` on common tasks,
  cells whose interval excludes 0 marked with ``*`` (``difference.png``): where the first agent's
  advantage lives in the (K, T) plane.

:func:`write_plots` writes all that apply into a directory (atomically) and returns their paths.
:func:`new_figure`, :func:`save_figure` and :func:`figure_legend` are the figure helpers the other
evaluation plots (probes, recovery) share.

Example:
    >>> import tempfile, pathlib
    >>> from agentgym_budget.eval.summary import summarize
    >>> records = [{"agent": a, "env_id": "e", "task_id": f"t{t}", "sample": s, "budget": 5, "mode": "independent",
    ...             "won": (s + t) % (2 if a == "x" else 3) == 0, "turns": 5} for a in "xy" for t in range(3) for s in range(2)]
    >>> paths = write_plots(summarize(records, ks=[1, 2], budgets=[5], resamples=50), pathlib.Path(tempfile.mkdtemp()))
    >>> sorted(p.name for p in paths), all(p.stat().st_size > 1000 for p in paths)
    (['difference.png', 'heatmap.png', 'passk_vs_K.png', 'success_vs_T.png'], True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_budget.eval.store import atomic_path
from agentgym_budget.eval.summary import AgentGrid, Difference, Summary

__all__ = [
    "figure_legend",
    "new_figure",
    "plot_differences",
    "plot_heatmaps",
    "plot_passk_vs_k",
    "plot_success_vs_budget",
    "save_figure",
    "write_plots",
]

_DPI = 110


def new_figure(panels: int, *, width: float = 4.2, height: float = 3.4, columns: int = 4) -> tuple[Any, list[Any]]:
    """A figure with ``panels`` axes in a grid of at most ``columns`` columns (Agg canvas, no global state)."""
    from matplotlib.figure import Figure

    columns = max(1, min(columns, panels))
    rows = math.ceil(panels / columns)
    figure = Figure(figsize=(width * columns, height * rows + 0.4), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel().tolist()
    for extra in axes[panels:]:
        extra.set_visible(False)
    return figure, axes[:panels]


def save_figure(figure: Any, path: Path) -> Path:
    """Render ``figure`` to ``path`` as PNG, atomically; return the path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=_DPI, format="png")
    return path


def figure_legend(figure: Any, axes: list[Any]) -> None:
    """One legend below the panels, from the first axis's labelled artists."""
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 3), fontsize=8)


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


def plot_heatmaps(grids: Sequence[AgentGrid], path: Path) -> Path:
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
    return save_figure(figure, path)


def plot_success_vs_budget(grids: Sequence[AgentGrid], path: Path) -> Path:
    """Pass@(K,T) against T: one panel per K, one line (with interval band) per grid."""
    ks = grids[0].ks
    figure, axes = new_figure(len(ks))
    for i, (k, axis) in enumerate(zip(ks, axes, strict=True)):
        for grid in grids:
            budgets = np.array(grid.budgets)
            axis.plot(budgets, grid.estimate[i], marker="o", label=grid.label)
            axis.fill_between(budgets, grid.low[i], grid.high[i], alpha=0.2)
        axis.set_title(f"K = {k}")
        axis.set_xlabel("turn budget T")
        axis.set_ylabel("Pass@(K,T)")
        axis.set_ylim(-0.03, 1.03)
        axis.grid(alpha=0.3)
    figure_legend(figure, axes)
    figure.suptitle("Success against the turn budget, at fixed K")
    return save_figure(figure, path)


def plot_passk_vs_k(grids: Sequence[AgentGrid], path: Path) -> Path:
    """Pass@(K,T) against K (log scale): one panel per T, one line (with interval band) per grid."""
    budgets = grids[0].budgets
    figure, axes = new_figure(len(budgets), columns=5, width=3.6)
    for j, (t, axis) in enumerate(zip(budgets, axes, strict=True)):
        for grid in grids:
            ks = np.array(grid.ks)
            axis.plot(ks, grid.estimate[:, j], marker="o", label=grid.label)
            axis.fill_between(ks, grid.low[:, j], grid.high[:, j], alpha=0.2)
        axis.set_xscale("log", base=2)
        axis.set_xticks(grids[0].ks, [str(k) for k in grids[0].ks])
        axis.set_title(f"T = {t}")
        axis.set_xlabel("samples K")
        axis.set_ylabel("Pass@(K,T)")
        axis.set_ylim(-0.03, 1.03)
        axis.grid(alpha=0.3)
    figure_legend(figure, axes)
    figure.suptitle("Pass@K against K, at fixed turn budget")
    return save_figure(figure, path)


def plot_differences(differences: Sequence[Difference], path: Path) -> Path:
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
    return save_figure(figure, path)


def write_plots(summary: Summary, directory: Path) -> list[Path]:
    """Write every plot that applies to ``summary`` into ``directory``; return their paths."""
    directory = Path(directory)
    grids = [grid for grid in summary.grids if np.isfinite(grid.estimate).any()]
    if not grids:
        return []
    paths = [
        plot_heatmaps(grids, directory / "heatmap.png"),
        plot_success_vs_budget(grids, directory / "success_vs_T.png"),
        plot_passk_vs_k(grids, directory / "passk_vs_K.png"),
    ]
    differences = [d for d in summary.differences if np.isfinite(d.estimate).any()]
    if differences:
        paths.append(plot_differences(differences, directory / "difference.png"))
    return paths
