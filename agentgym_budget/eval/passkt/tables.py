"""Plain-text tables of Pass@(K,T) grids and differences, for the terminal.

Example:
    >>> import numpy as np
    >>> from agentgym_budget.eval.passkt.summary import AgentGrid
    >>> grid = AgentGrid("agent", ("agent", "e", "{}", None, "independent", False), ("t1", "t2"), (1, 2), (5, 10), 4,
    ...                  np.array([[0.25, 0.5], [0.4, 0.75]]), np.array([[0.0, 0.25], [0.1, 0.5]]),
    ...                  np.array([[0.5, 0.75], [0.7, 1.0]]))
    >>> print(format_grid(grid))
    agent  (2 tasks x 4 samples, independent mode)
    Pass@(K,T)                T=5               T=10
           K=1  0.25 [0.00, 0.50]  0.50 [0.25, 0.75]
           K=2  0.40 [0.10, 0.70]  0.75 [0.50, 1.00]
"""

from __future__ import annotations

import math

import numpy as np

from agentgym_budget.eval.passkt.summary import AgentGrid, Difference, Summary

__all__: list[str] = []


def _cell(value: float, low: float, high: float, *, signed: bool = False) -> str:
    if math.isnan(value):
        return "-"
    sign = "+" if signed else ""
    return f"{value:{sign}.2f} [{low:{sign}.2f}, {high:{sign}.2f}]"


def _table(title: str, ks: tuple[int, ...], budgets: tuple[int, ...], cells: list[list[str]]) -> str:
    headers = [f"T={t}" for t in budgets]
    width = max([len(h) for h in headers] + [len(c) for row in cells for c in row])
    first = max(len(title), max(len(f"K={k}") for k in ks) + 2)
    lines = [title.ljust(first) + "".join("  " + h.rjust(width) for h in headers)]
    for k, row in zip(ks, cells, strict=True):
        lines.append(f"K={k}".rjust(first) + "".join("  " + c.rjust(width) for c in row))
    return "\n".join(lines)


def format_grid(grid: AgentGrid) -> str:
    """A grid as text: a heading line, then rows ``K`` and columns ``T`` with ``estimate [low, high]``."""
    mode = grid.key[4] + (" mode, budget shown" if grid.key[5] else " mode")
    heading = f"{grid.label}  ({len(grid.tasks)} tasks x {grid.samples} samples, {mode})"
    cells = [
        [_cell(grid.estimate[i, j], grid.low[i, j], grid.high[i, j]) for j in range(len(grid.budgets))]
        for i in range(len(grid.ks))
    ]
    return heading + "\n" + _table("Pass@(K,T)", grid.ks, grid.budgets, cells)


def format_difference(difference: Difference) -> str:
    """A difference grid as text; ``*`` marks cells whose interval excludes 0."""
    heading = (
        f"{difference.first}  minus  {difference.second}  ({len(difference.tasks)} common tasks; * = CI excludes 0)"
    )
    cells = []
    for i in range(len(difference.ks)):
        row = []
        for j in range(len(difference.budgets)):
            low, high = difference.low[i, j], difference.high[i, j]
            mark = "*" if (not np.isnan(low)) and (low > 0 or high < 0) else " "
            row.append(_cell(difference.estimate[i, j], low, high, signed=True) + mark)
        cells.append(row)
    return heading + "\n" + _table("Difference", difference.ks, difference.budgets, cells)


def format_summary(summary: Summary) -> str:
    """Every grid, then every difference, separated by blank lines."""
    parts = [format_grid(grid) for grid in summary.grids]
    parts += [format_difference(difference) for difference in summary.differences]
    confidence = (
        f"Intervals: {summary.confidence:.0%}, expanded BCa bootstrap over tasks ({summary.resamples} resamples); "
        "differences: paired t over common tasks."
    )
    return "\n\n".join([*parts, confidence])
