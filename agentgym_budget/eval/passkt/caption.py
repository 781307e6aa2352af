"""The caption every Pass@(K,T) figure carries: what was run (env, arguments, split, tasks), what its marks mean.

Example:
    >>> import numpy as np
    >>> from agentgym_budget.eval.passkt.summary import AgentGrid, Summary
    >>> key = ("random", "agentgym_budget/TextWorld-CoinCollector-v0", '{"level": 110}', "train", "independent", False)
    >>> zero = np.zeros((1, 1))
    >>> grid = AgentGrid("random", key, ("a", "b"), ks=(1,), budgets=(10,), samples=4, estimate=zero, low=zero, high=zero)
    >>> print(summary_caption(Summary([grid], [], 0.95, 1000), "success_vs_T"))
    TextWorld-CoinCollector-v0 (level=110), split train, 2 tasks x 4 samples; bands: 95% intervals over tasks (expanded BCa bootstrap)
"""

from __future__ import annotations

import json

from agentgym_budget.eval.passkt.summary import Summary

__all__: list[str] = []


def _env_text(env_id: str, kwargs: str) -> str:
    name = env_id.split("/", 1)[-1]
    arguments = json.loads(kwargs) if kwargs else {}
    return f"{name} ({','.join(f'{k}={v}' for k, v in arguments.items())})" if arguments else name


_DRAWN = {
    "heatmap": "cells: point estimates (their intervals: summary.csv)",
    "success_vs_T": "bands: {confidence} intervals over tasks (expanded BCa bootstrap)",
    "passk_vs_K": "bands: {confidence} intervals over tasks (expanded BCa bootstrap)",
    "difference": "*: the {confidence} interval over common tasks (paired t) excludes 0 (intervals: difference.csv)",
}


def summary_caption(summary: Summary, plot: str) -> str:
    """One line naming env, arguments (the level), split, number of tasks and samples, and what ``plot`` draws.

    ``plot`` is one of the plot stems (``heatmap``, ``success_vs_T``, ``passk_vs_K``, ``difference``): the
    caption names the intervals that plot draws, and only those.
    """
    runs = sorted({(_env_text(g.key[1], g.key[2]), g.key[3], len(g.tasks), g.samples) for g in summary.grids})
    what = "; ".join(f"{env}, split {split}, {tasks} tasks x {samples} samples" for env, split, tasks, samples in runs)
    return f"{what}; " + _DRAWN[plot].format(confidence=f"{summary.confidence:.0%}")
