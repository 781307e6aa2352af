"""Pass@(K,T) grids from logged episodes: per agent, with bootstrap intervals, and agent differences.

:func:`summarize` reads episode records (as written by :mod:`agentgym_budget.eval.passkt.plan`) and, for
every group of records of one agent on one env configuration in one mode, computes for each budget
``T`` and breadth ``K`` the mean over tasks of the unbiased pass@K estimate
(:func:`~agentgym_budget.eval.estimator.pass_at_k`) with an expanded BCa bootstrap interval over tasks
(:func:`~agentgym_budget.eval.estimator.bootstrap_ci`). The
outcome of a sample at budget ``T`` is

* ``independent`` mode: the ``won`` of the episode run with budget ``T``;
* ``prefix`` mode: whether the episode run with the largest budget ``T_max >= T`` succeeded by turn
  ``T`` (``success_turn <= T``).

A cell needs ``K <= n`` samples on every task (else it is ``nan``). Only tasks that have samples at
every budget are used, so all cells of a grid cover the same tasks. For two or more groups,
:class:`Difference` gives ``first - second`` for every pair on their common tasks, with a *paired*
Student-t interval of the per-task differences (:func:`~agentgym_budget.eval.estimator.paired_ci`).

Example:
    >>> records = [
    ...     {"agent": "a", "env_id": "e", "env_kwargs": {}, "split": None, "mode": "prefix", "show_budget": False,
    ...      "task_id": t, "sample": s, "budget": 10, "won": w, "success_turn": 4 if w else None, "turns": 4}
    ...     for t, wins in (("t1", [1, 1, 0, 0]), ("t2", [1, 0, 0, 0])) for s, w in enumerate(wins)]
    >>> summary = summarize(records, ks=[1, 2], budgets=[3, 10], resamples=200)
    >>> grid = summary.grids[0]
    >>> grid.estimate.round(4).tolist()
    [[0.0, 0.375], [0.0, 0.6667]]
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentgym_budget.eval.estimator import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE,
    DIFFERENCE,
    RATE,
    bootstrap_ci,
    paired_ci,
    pass_at_k_per_task,
)

__all__ = ["Difference", "Summary", "summarize"]

DEFINITION = (
    "Pass@(K,T): probability that at least one of K independent episodes, each with a budget of T turns, "
    "wins the task; per task the unbiased estimate 1 - C(n-c,K)/C(n,K) from n samples with c wins at budget T, "
    "averaged over tasks; intervals: expanded BCa bootstrap over tasks, differences: Student-t on the per-task "
    "differences of the common tasks."
)
"""One-paragraph definition stored in every summary."""

GroupKey = tuple[str, str, str, str | None, str, bool]


def group_key(record: Mapping[str, Any]) -> GroupKey:
    """``(agent, env_id, env_kwargs as JSON, split, mode, show_budget)`` of an episode record."""
    kwargs = json.dumps(record.get("env_kwargs") or {}, sort_keys=True)
    return (
        record["agent"],
        record["env_id"],
        kwargs,
        record.get("split"),
        record.get("mode", "independent"),
        bool(record.get("show_budget", False)),
    )


def _won_at(record: Mapping[str, Any], budget: int) -> bool:
    success = record.get("success_turn")
    if success is None:
        return bool(record.get("won")) and int(record.get("turns", 0)) <= budget
    return int(success) <= budget


def outcome_table(
    records: Iterable[Mapping[str, Any]], budgets: Sequence[int], mode: str, samples: int | None = None
) -> dict[str, dict[int, list[bool]]]:
    """Per task and budget, the outcomes (won or not) of the samples of one group of records.

    Samples at or above ``samples`` are ignored when it is given; in prefix mode an episode counts
    for every budget up to its own.
    """
    table: dict[str, dict[int, dict[int, bool]]] = defaultdict(lambda: defaultdict(dict))
    if mode == "prefix":
        longest: dict[tuple[str, int], Mapping[str, Any]] = {}
        for record in records:
            if samples is not None and record["sample"] >= samples:
                continue
            slot = (record["task_id"], record["sample"])
            if slot not in longest or record["budget"] > longest[slot]["budget"]:
                longest[slot] = record
        for (task, sample), record in longest.items():
            for budget in budgets:
                if budget <= record["budget"]:
                    table[task][budget][sample] = _won_at(record, budget)
    else:
        wanted = set(budgets)
        for record in records:
            if record["budget"] in wanted and (samples is None or record["sample"] < samples):
                table[record["task_id"]][record["budget"]].setdefault(record["sample"], bool(record["won"]))
    return {
        task: {budget: [won for _, won in sorted(by_sample.items())] for budget, by_sample in by_budget.items()}
        for task, by_budget in table.items()
    }


@dataclass
class AgentGrid:
    """The Pass@(K,T) grid of one agent (rows ``ks``, columns ``budgets``).

    Attributes:
        label: Display name (the agent, plus env and mode when a summary mixes several).
        key: The :func:`group_key` of its records.
        tasks: Tasks covered (sorted).
        ks: Breadths ``K``.
        budgets: Budgets ``T``.
        samples: Smallest number of samples per (task, T).
        estimate: Mean pass@(K,T) over tasks, shape ``(len(ks), len(budgets))``.
        low: Lower bootstrap bound, same shape.
        high: Upper bootstrap bound, same shape.
        per_task: ``(K, T) -> per-task pass@K values`` (in :attr:`tasks` order).
    """

    label: str
    key: GroupKey
    tasks: tuple[str, ...]
    ks: tuple[int, ...]
    budgets: tuple[int, ...]
    samples: int
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    per_task: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def agent(self) -> str:
        """The agent's canonical name."""
        return self.key[0]

    def cells(self) -> list[dict[str, Any]]:
        """One dict per (K, T) cell."""
        return [
            {
                "k": k,
                "t": t,
                "pass": _json_float(self.estimate[i, j]),
                "ci_low": _json_float(self.low[i, j]),
                "ci_high": _json_float(self.high[i, j]),
            }
            for i, k in enumerate(self.ks)
            for j, t in enumerate(self.budgets)
        ]


@dataclass
class Difference:
    """``first - second`` on common tasks, with paired bootstrap intervals (same layout as :class:`AgentGrid`)."""

    first: str
    second: str
    tasks: tuple[str, ...]
    ks: tuple[int, ...]
    budgets: tuple[int, ...]
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray

    def cells(self) -> list[dict[str, Any]]:
        """One dict per (K, T) cell; ``significant`` when the interval excludes 0."""
        cells = []
        for i, k in enumerate(self.ks):
            for j, t in enumerate(self.budgets):
                low, high = self.low[i, j], self.high[i, j]
                cells.append(
                    {
                        "k": k,
                        "t": t,
                        "diff": _json_float(self.estimate[i, j]),
                        "ci_low": _json_float(low),
                        "ci_high": _json_float(high),
                        "significant": bool(low > 0 or high < 0),
                    }
                )
        return cells


@dataclass
class Summary:
    """Grids of every agent group and their pairwise differences."""

    grids: list[AgentGrid]
    differences: list[Difference]
    confidence: float
    resamples: int

    def to_json(self, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON form (``definition``, ``config``, ``agents``, ``differences``)."""
        agents = []
        for grid in self.grids:
            agent, env_id, kwargs, split, mode, show = grid.key
            agents.append(
                {
                    "label": grid.label,
                    "agent": agent,
                    "env_id": env_id,
                    "env_kwargs": json.loads(kwargs),
                    "split": split,
                    "mode": mode,
                    "show_budget": show,
                    "tasks": len(grid.tasks),
                    "samples": grid.samples,
                    "grid": grid.cells(),
                }
            )
        differences = [
            {"first": d.first, "second": d.second, "tasks": len(d.tasks), "grid": d.cells()} for d in self.differences
        ]
        return {
            "definition": DEFINITION,
            "confidence": self.confidence,
            "bootstrap_resamples": self.resamples,
            "config": dict(config or {}),
            "agents": agents,
            "differences": differences,
        }

    def csv_rows(self) -> list[dict[str, Any]]:
        """Rows of ``summary.csv``: one per agent and (K, T)."""
        rows = []
        for grid in self.grids:
            _, env_id, _, _, mode, show = grid.key
            for cell in grid.cells():
                rows.append(
                    {
                        "agent": grid.label,
                        "env_id": env_id,
                        "mode": mode,
                        "show_budget": show,
                        "k": cell["k"],
                        "t": cell["t"],
                        "pass_at_k": cell["pass"],
                        "ci_low": cell["ci_low"],
                        "ci_high": cell["ci_high"],
                        "tasks": len(grid.tasks),
                        "samples": grid.samples,
                    }
                )
        return rows


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) else round(float(value), 6)


def _label(key: GroupKey, keys: Sequence[GroupKey]) -> str:
    agent, env_id, kwargs, split, mode, show = key
    if len({k[1:] for k in keys}) <= 1:
        return agent
    args = ",".join(f"{k}={v}" for k, v in json.loads(kwargs).items())
    env = env_id.split("/", 1)[-1] + (f"({args})" if args else "") + (f"[{split}]" if split else "")
    return f"{agent} @ {env} {mode}{' shown' if show else ''}"


def _grid(
    label: str,
    key: GroupKey,
    table: dict[str, dict[int, list[bool]]],
    ks: Sequence[int],
    budgets: Sequence[int],
    confidence: float,
    resamples: int,
    seed: int,
) -> AgentGrid:
    tasks = tuple(sorted(t for t, by_budget in table.items() if all(by_budget.get(b) for b in budgets)))
    counts = [len(table[t][b]) for t in tasks for b in budgets]
    samples = min(counts) if counts else 0
    shape = (len(ks), len(budgets))
    estimate, low, high = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    per_task: dict[tuple[int, int], np.ndarray] = {}
    for j, budget in enumerate(budgets):
        n = [len(table[t][budget]) for t in tasks]
        c = [sum(table[t][budget]) for t in tasks]
        for i, k in enumerate(ks):
            if not tasks or k > samples:
                continue
            values = pass_at_k_per_task(n, c, k)
            per_task[(k, budget)] = values
            estimate[i, j] = values.mean()
            low[i, j], high[i, j] = bootstrap_ci(
                values, confidence=confidence, resamples=resamples, seed=seed, bounds=RATE
            )
    return AgentGrid(label, key, tasks, tuple(ks), tuple(budgets), samples, estimate, low, high, per_task)


def _difference(first: AgentGrid, second: AgentGrid, confidence: float, resamples: int, seed: int) -> Difference | None:
    common = sorted(set(first.tasks) & set(second.tasks))
    if not common or first.ks != second.ks or first.budgets != second.budgets:
        return None
    index_a = [first.tasks.index(t) for t in common]
    index_b = [second.tasks.index(t) for t in common]
    shape = (len(first.ks), len(first.budgets))
    estimate, low, high = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    for i, k in enumerate(first.ks):
        for j, t in enumerate(first.budgets):
            if (k, t) not in first.per_task or (k, t) not in second.per_task:
                continue
            a, b = first.per_task[(k, t)][index_a], second.per_task[(k, t)][index_b]
            estimate[i, j] = float(a.mean() - b.mean())
            low[i, j], high[i, j] = paired_ci(a, b, confidence=confidence, bounds=DIFFERENCE)
    return Difference(first.label, second.label, tuple(common), first.ks, first.budgets, estimate, low, high)


def summarize(
    records: Iterable[Mapping[str, Any]],
    *,
    ks: Sequence[int],
    budgets: Sequence[int],
    samples: int | None = None,
    order: Sequence[str] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> Summary:
    """Pass@(K,T) grids of every agent group in ``records`` (see the module docstring).

    Args:
        records: Episode records.
        ks: Breadths ``K`` (rows).
        budgets: Budgets ``T`` (columns).
        samples: Use only samples ``0 .. samples-1`` of each (task, T).
        order: Agent names in the order wanted (groups of other agents follow, sorted).
        confidence: Confidence level of the intervals.
        resamples: Bootstrap resamples.
        seed: Seed of the bootstrap.
    """
    ks, budgets = sorted(set(ks)), sorted(set(budgets))
    groups: dict[GroupKey, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        groups[group_key(record)].append(record)
    rank = {name: i for i, name in enumerate(order or ())}
    keys = sorted(groups, key=lambda key: (rank.get(key[0], len(rank)), key))
    grids = [
        _grid(
            _label(key, keys),
            key,
            outcome_table(groups[key], budgets, key[4], samples),
            ks,
            budgets,
            confidence,
            resamples,
            seed,
        )
        for key in keys
    ]
    differences = []
    for a in range(len(grids)):
        for b in range(a + 1, len(grids)):
            difference = _difference(grids[a], grids[b], confidence, resamples, seed)
            if difference is not None:
                differences.append(difference)
    return Summary(grids, differences, confidence, resamples)
