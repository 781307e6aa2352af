"""Recovery summaries: recovery rate per agent against the remaining budget, ``k`` and depth; comparisons.

A perturbed episode (:mod:`agentgym_budget.eval.recovery.worker`) *recovers at budget R* when it
wins within ``R`` turns after the perturbation: with a hidden budget (``prefix`` mode) that is
``success_turn <= R`` of the one episode played at the largest ``R``; with a shown budget
(``independent`` mode) it is the ``won`` of the episode played with ``R`` turns.

Per agent and state the rate is the mean over samples (and, pooled, over the ``k >= 1``
perturbations the state has); the agent's figure is the mean over states with an expanded BCa
bootstrap interval over states. ``recovery_rate`` is the pooled rate at the largest ``R`` (given ample turns, does the
agent get back to a win?), ``control_success`` the same for ``k = 0`` (no perturbation). Agents are
compared with a paired Student-t interval over their common states, at the largest ``R`` and at every ``R``.

Example:
    >>> rows = [{"agent": a, "env_id": "e", "family": "f", "state_id": f"s{i}", "depth": i, "k": k, "sample": 0,
    ...          "budget": 10, "mode": "prefix", "won": a == "fix" or k == 0, "success_turn": 4 if (a == "fix" or k == 0) else None}
    ...         for a in ("fix", "stale") for i in range(3) for k in (0, 1)]
    >>> summary = summarize_recovery(rows, ks=(0, 1), budgets=(3, 10), mode="prefix", resamples=100)
    >>> summary.agents["fix"].recovery_rate.mean, summary.agents["stale"].recovery_rate.mean
    (1.0, 0.0)
    >>> summary.agents["fix"].rates[(1, 3)].mean, summary.comparisons[0].rate.significant
    (0.0, True)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentgym_budget.eval.estimator import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE, DIFFERENCE, RATE, paired_ci
from agentgym_budget.eval.probes.summary import Estimate, estimate, state_key
from agentgym_budget.eval.process_signal import format_signal
from agentgym_budget.eval.recovery.natural import format_natural

__all__: list[str] = []

RECOVERY_DEFINITION = (
    "Recovery probes: at shared states sampled from reference trajectories (depth t), k wrong actions are forced "
    "(admissible, not optimal, the task still solvable; errors preferred), then the agent, told the earlier turns, "
    "continues with R turns left (restore + fork, no replay). A continuation recovers at R if it wins within R turns. "
    "recovery_rate: share of continuations with k >= 1 that recover at the largest R (per state the mean over samples "
    "and k, then the mean over states); control_success: the same with k = 0. Intervals: expanded BCa bootstrap "
    "over states; comparisons: Student-t on the per-state differences of the common states."
)
"""Definition stored in every recovery summary."""


def recovered_at(record: Mapping[str, Any], budget: int, mode: str) -> bool | None:
    """Whether the perturbed episode ``record`` recovered within ``budget`` turns (``None``: not readable).

    Example:
        >>> recovered_at({"budget": 30, "won": True, "success_turn": 12}, 10, "prefix")
        False
        >>> recovered_at({"budget": 10, "won": True, "success_turn": 9}, 10, "independent")
        True
    """
    if mode == "prefix":
        if budget > int(record["budget"]):
            return None
        success = record.get("success_turn")
        return success is not None and int(success) <= budget
    if int(record["budget"]) != budget:
        return None
    return bool(record["won"])


@dataclass
class AgentRecovery:
    """One agent's recovery results.

    Attributes:
        agent: Canonical name.
        episodes: Perturbed episodes used.
        recovery_rate: Pooled ``k >= 1`` rate at the largest budget.
        control: ``k = 0`` rate at the largest budget (``None`` without ``k = 0``).
        rates: ``(k, R) -> Estimate`` over the states that have that ``k``.
        pooled: ``R -> Estimate`` of the pooled ``k >= 1`` rate.
        by_depth: Depth -> pooled rate at the largest budget.
        by_family: Family -> pooled rate at the largest budget.
        per_state: State key -> ``R -> pooled k >= 1 rate`` (for comparisons).
    """

    agent: str
    episodes: int
    recovery_rate: Estimate
    control: Estimate | None
    rates: dict[tuple[int, int], Estimate] = field(default_factory=dict)
    pooled: dict[int, Estimate] = field(default_factory=dict)
    by_depth: dict[int, Estimate] = field(default_factory=dict)
    by_family: dict[str, Estimate] = field(default_factory=dict)
    per_state: dict[tuple[Any, ...], dict[int, float]] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        """JSON form (``recovery_rate`` is a plain number; its interval beside it)."""
        ks = sorted({k for k, _ in self.rates})
        return {
            "states": self.recovery_rate.n,
            "episodes": self.episodes,
            "recovery_rate": self.recovery_rate.to_json()["mean"],
            "recovery_rate_ci": self.recovery_rate.to_json()["ci"],
            "control_success": self.control.to_json()["mean"] if self.control else None,
            "control_success_ci": self.control.to_json()["ci"] if self.control else None,
            "by_budget": [{"budget": r, **e.to_json()} for r, e in sorted(self.pooled.items())],
            "by_k": {
                str(k): [{"budget": r, **e.to_json()} for (kk, r), e in sorted(self.rates.items()) if kk == k]
                for k in ks
            },
            "by_depth": [{"depth": d, **e.to_json()} for d, e in sorted(self.by_depth.items())],
            "by_family": {family: e.to_json() for family, e in sorted(self.by_family.items())},
        }


@dataclass(frozen=True)
class RecoveryComparison:
    """``first - second`` of the pooled rate on common states: at the largest budget and at every budget."""

    first: str
    second: str
    rate: Estimate
    by_budget: dict[int, Estimate]

    def to_json(self) -> dict[str, Any]:
        """JSON form with ``significant`` flags."""
        return {
            "first": self.first,
            "second": self.second,
            "states": self.rate.n,
            "recovery_rate_diff": self.rate.to_json(),
            "significant": self.rate.significant,
            "by_budget": [
                {"budget": r, **e.to_json(), "significant": e.significant} for r, e in sorted(self.by_budget.items())
            ],
        }


@dataclass
class RecoverySummary:
    """Every agent's recovery results, comparisons, natural recovery and the process-signal analysis."""

    agents: dict[str, AgentRecovery]
    comparisons: list[RecoveryComparison]
    ks: tuple[int, ...]
    budgets: tuple[int, ...]
    confidence: float
    resamples: int
    natural: dict[str, Any] = field(default_factory=dict)
    traced: dict[str, Any] = field(default_factory=dict)
    process_signal: dict[str, Any] = field(default_factory=dict)

    def curves(self) -> dict[str, dict[int, list[tuple[int, Estimate]]]]:
        """``agent -> k -> [(R, estimate)]`` for :func:`~agentgym_budget.eval.recovery.plots.recovery_vs_budget_figure`."""
        return {
            name: {k: [(r, e) for (kk, r), e in sorted(agent.rates.items()) if kk == k] for k in self.ks}
            for name, agent in self.agents.items()
        }

    def to_json(self, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON form of ``summary.json``."""
        return {
            "definition": RECOVERY_DEFINITION,
            "confidence": self.confidence,
            "bootstrap_resamples": self.resamples,
            "config": dict(config or {}),
            "agents": {name: agent.to_json() for name, agent in self.agents.items()},
            "comparisons": [c.to_json() for c in self.comparisons],
            "natural_recovery": self.natural,
            "traced_recovery": self.traced,
            "process_signal": self.process_signal,
        }

    def csv_rows(self) -> list[dict[str, Any]]:
        """Rows of ``summary.csv``: one per agent, ``k`` and remaining budget."""
        return [
            {
                "agent": name,
                "k": k,
                "budget_left": r,
                "states": e.n,
                "recovery_rate": e.to_json()["mean"],
                "ci_low": e.to_json()["ci"][0],
                "ci_high": e.to_json()["ci"][1],
            }
            for name, agent in self.agents.items()
            for (k, r), e in sorted(agent.rates.items())
        ]


def _per_state(
    rows: Sequence[Mapping[str, Any]], budgets: Sequence[int], mode: str
) -> dict[tuple[Any, ...], dict[str, Any]]:
    states: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        key = state_key(row)
        entry = states.setdefault(
            key, {"depth": int(row.get("depth", 0)), "family": row.get("family", "?"), "outcomes": defaultdict(list)}
        )
        for budget in budgets:
            outcome = recovered_at(row, budget, mode)
            if outcome is not None:
                entry["outcomes"][(int(row["k"]), budget)].append(float(outcome))
    return states


def _agent_recovery(
    name: str,
    records: Sequence[Mapping[str, Any]],
    ks: Sequence[int],
    budgets: Sequence[int],
    mode: str,
    options: Mapping[str, Any],
) -> AgentRecovery:
    """One agent's recovery: per state, per ``(k, R)``, pooled over ``k >= 1``, by depth and by family."""
    top = budgets[-1]
    states = _per_state(records, budgets, mode)
    pooled_state: dict[tuple[Any, ...], dict[int, float]] = {}
    for key, entry in states.items():
        per_budget = {}
        for budget in budgets:
            values = [v for (k, b), vs in entry["outcomes"].items() if k >= 1 and b == budget for v in vs]
            if values:
                per_budget[budget] = float(np.mean(values))
        if per_budget:
            pooled_state[key] = per_budget
    rates = {}
    for k in ks:
        for budget in budgets:
            values = [
                float(np.mean(e["outcomes"][(k, budget)])) for e in states.values() if e["outcomes"].get((k, budget))
            ]
            if values:
                rates[(k, budget)] = estimate(values, **options, bounds=RATE)
    control = [float(np.mean(e["outcomes"][(0, top)])) for e in states.values() if e["outcomes"].get((0, top))]
    result = AgentRecovery(
        agent=name,
        episodes=len(records),
        recovery_rate=estimate([s[top] for s in pooled_state.values() if top in s], **options, bounds=RATE),
        control=estimate(control, **options, bounds=RATE) if 0 in ks else None,
        rates=rates,
        pooled={
            b: estimate([s[b] for s in pooled_state.values() if b in s], **options, bounds=RATE)
            for b in budgets
            if any(b in s for s in pooled_state.values())
        },
        per_state=pooled_state,
    )
    for attribute, group in (("depth", result.by_depth), ("family", result.by_family)):
        buckets: dict[Any, list[float]] = defaultdict(list)
        for key, values in pooled_state.items():
            if top in values:
                buckets[states[key][attribute]].append(values[top])
        for bucket, values in buckets.items():
            group[bucket] = estimate(values, **options, bounds=RATE)
    return result


def _comparisons(
    names: Sequence[str], agents: Mapping[str, AgentRecovery], budgets: Sequence[int], options: Mapping[str, Any]
) -> list[RecoveryComparison]:
    """Paired differences of every two agents on their common states, per remaining budget."""
    top = budgets[-1]
    comparisons = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            a, b = agents[first].per_state, agents[second].per_state
            per_budget = {}
            for budget in budgets:
                common = sorted(key for key in set(a) & set(b) if budget in a[key] and budget in b[key])
                if common:
                    x = np.array([a[key][budget] for key in common])
                    y = np.array([b[key][budget] for key in common])
                    low, high = paired_ci(x, y, confidence=options["confidence"], bounds=DIFFERENCE)
                    per_budget[budget] = Estimate(float(x.mean() - y.mean()), low, high, len(common))
            if top in per_budget:
                comparisons.append(RecoveryComparison(first, second, per_budget[top], per_budget))
    return comparisons


def summarize_recovery(
    records: Iterable[Mapping[str, Any]],
    *,
    ks: Sequence[int],
    budgets: Sequence[int],
    mode: str,
    order: Sequence[str] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> RecoverySummary:
    """Summarise perturbed-episode records (see the module docstring)."""
    ks, budgets = tuple(sorted(set(ks))), tuple(sorted(set(budgets)))
    options = {"confidence": confidence, "resamples": resamples, "seed": seed}
    by_agent: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        by_agent[record["agent"]].append(record)
    rank = {name: i for i, name in enumerate(order or ())}
    names = sorted(by_agent, key=lambda name: (rank.get(name, len(rank)), name))
    agents = {name: _agent_recovery(name, by_agent[name], ks, budgets, mode, options) for name in names}
    comparisons = _comparisons(names, agents, budgets, options)
    return RecoverySummary(agents, comparisons, ks, budgets, confidence, resamples)


def _cell(e: Estimate | None, signed: bool = False) -> str:
    if e is None or not np.isfinite(e.mean):
        return "-"
    sign = "+" if signed else ""
    return f"{e.mean:{sign}.2f} [{e.low:{sign}.2f}, {e.high:{sign}.2f}]"


def format_recovery_summary(summary: RecoverySummary) -> str:
    """The summary as text: rates, rates by remaining budget and ``k``, comparisons, natural recovery, signal."""
    width = max([len(n) for n in summary.agents] + [5])
    top = summary.budgets[-1]
    lines = [
        f"{'agent'.ljust(width)}  {'states':>6}  {'recovery rate (R=' + str(top) + ')':>22}  {'control (k=0)':>19}"
    ]
    for name, agent in summary.agents.items():
        lines.append(
            f"{name.ljust(width)}  {agent.recovery_rate.n:>6}  {_cell(agent.recovery_rate):>22}  {_cell(agent.control):>19}"
        )
    lines += ["", "Recovery rate by turns left after the perturbation (rows: agent, k):"]
    header = f"{'agent'.ljust(width)}  {'k':>2}  " + "  ".join(f"{'R=' + str(r):>6}" for r in summary.budgets)
    lines.append(header)
    for name, agent in summary.agents.items():
        for k in summary.ks:
            cells = [agent.rates.get((k, r)) for r in summary.budgets]
            if any(cells):
                shown = "  ".join(f"{c.mean:>6.2f}" if c is not None else f"{'-':>6}" for c in cells)
                lines.append(f"{name.ljust(width)}  {k:>2}  {shown}")
    families = sorted({f for agent in summary.agents.values() for f in agent.by_family})
    if len(families) > 1:
        lines += ["", f"Recovery rate (R={top}) by family:"]
        for name, agent in summary.agents.items():
            cells = [f"{family}: {_cell(agent.by_family.get(family))}" for family in families]
            lines.append(f"{name.ljust(width)}  " + "  ".join(cells))
    for comparison in summary.comparisons:
        mark = "*" if comparison.rate.significant else ""
        lines += [
            "",
            f"{comparison.first}  minus  {comparison.second}  ({comparison.rate.n} common states; * = CI excludes 0)",
            f"  recovery rate at R={top}: {_cell(comparison.rate, True)}{mark}",
        ]
    if summary.natural:
        lines += ["", "Natural recovery (episodes played from the start):", format_natural(summary.natural)]
    if summary.traced:
        lines += ["", "Natural recovery (logged episodes, replayed):", format_natural(summary.traced)]
    if summary.process_signal:
        lines += ["", format_signal(summary.process_signal)]
    lines.append(
        f"\nIntervals: {summary.confidence:.0%}, expanded BCa bootstrap over states ({summary.resamples} resamples); "
        "comparisons: paired t over common states."
    )
    return "\n".join(lines)
