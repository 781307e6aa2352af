"""The caption every Pass@(K,T) figure carries: what was run (env, arguments, split, tasks) and what the bands are.

Example:
    >>> import numpy as np
    >>> from agentgym_budget.eval.passkt.summary import AgentGrid, Summary
    >>> key = ("random", "agentgym_budget/TextWorld-CoinCollector-v0", '{"level": 110}', "train", "independent", False)
    >>> zero = np.zeros((1, 1))
    >>> grid = AgentGrid("random", key, ("a", "b"), ks=(1,), budgets=(10,), samples=4, estimate=zero, low=zero, high=zero)
    >>> print(summary_caption(Summary([grid], [], 0.95, 1000)))
    TextWorld-CoinCollector-v0 (level=110), split train, 2 tasks x 4 samples; bands and brackets: 95% intervals over tasks (expanded BCa bootstrap; differences: paired t)
"""

from __future__ import annotations

import json

from agentgym_budget.eval.passkt.summary import Summary

__all__: list[str] = []


def _env_text(env_id: str, kwargs: str) -> str:
    name = env_id.split("/", 1)[-1]
    arguments = json.loads(kwargs) if kwargs else {}
    return f"{name} ({','.join(f'{k}={v}' for k, v in arguments.items())})" if arguments else name


def summary_caption(summary: Summary) -> str:
    """One line naming env, arguments (the level), split, number of tasks and samples, and the interval."""
    runs = sorted({(_env_text(g.key[1], g.key[2]), g.key[3], len(g.tasks), g.samples) for g in summary.grids})
    what = "; ".join(f"{env}, split {split}, {tasks} tasks x {samples} samples" for env, split, tasks, samples in runs)
    return (
        f"{what}; bands and brackets: {summary.confidence:.0%} intervals over tasks "
        "(expanded BCa bootstrap; differences: paired t)"
    )
