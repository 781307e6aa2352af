"""Plot of the recovery runs: recovery rate against the remaining budget.

:func:`recovery_vs_budget_figure` (``recovery_vs_budget``) returns a :class:`matplotlib.figure.Figure`:
recovery rate against the turns left after the perturbation, one panel per number of forced wrong
actions ``k``, one line per agent (drawn as the probes draw theirs,
:func:`~agentgym_budget.eval.probes.plots.draw_estimates`).

Example:
    >>> import tempfile, pathlib
    >>> from agentgym_budget.eval.figures import save_figure
    >>> from agentgym_budget.eval.probes.summary import Estimate
    >>> curves = {"a": {1: [(5, Estimate(0.2, 0.1, 0.3, 4)), (10, Estimate(0.6, 0.4, 0.8, 4))]},
    ...           "b": {1: [(5, Estimate(0.0, 0.0, 0.0, 4)), (10, Estimate(0.1, 0.0, 0.2, 4))]}}
    >>> paths = save_figure(recovery_vs_budget_figure(curves), [pathlib.Path(tempfile.mkdtemp()) / "recovery.svg"])
    >>> paths[0].read_text()[:5]
    '<?xml'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentgym_budget.eval.figures import figure_legend, new_figure
from agentgym_budget.eval.probes.plots import draw_estimates
from agentgym_budget.eval.probes.summary import Estimate

__all__: list[str] = []


def recovery_vs_budget_figure(curves: Mapping[str, Mapping[int, Sequence[tuple[int, Estimate]]]]) -> Any:
    """Recovery rate against the remaining budget: ``curves[agent][k]`` is a list of ``(budget, estimate)``."""
    ks = sorted({k for per_k in curves.values() for k in per_k})
    figure, axes = new_figure(len(ks), columns=3)
    for k, axis in zip(ks, axes, strict=True):
        for index, (name, per_k) in enumerate(curves.items()):
            if per_k.get(k):
                draw_estimates(axis, list(per_k[k]), name, index, len(curves))
        axis.set_title("no perturbation (control)" if k == 0 else f"k = {k} forced wrong action{'s' if k > 1 else ''}")
        axis.set_xlabel("turns left after the perturbation")
        axis.set_ylabel("recovery rate (won)")
        axis.set_ylim(-0.03, 1.03)
        axis.grid(alpha=0.3)
    figure_legend(figure, axes)
    figure.suptitle("Recovery rate against the remaining budget")
    return figure
