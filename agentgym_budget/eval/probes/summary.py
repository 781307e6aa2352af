"""Single-step probe summaries: accuracy and value per agent, by depth and family, and agent comparisons.

Every probe record (:mod:`agentgym_budget.eval.probes.worker`) is one sampled action of one agent at
one probe state. Per agent, each state contributes the mean over its samples of

* ``optimal`` (expert agreement, :func:`~agentgym_budget.eval.probes.judge.is_optimal`): **step accuracy**;
* ``value`` (fraction of continuations that won after the action): **step value**;
* ``progress_delta`` (progress after minus before): **progress change**;

and the agent's figure is the mean over states. For agents that expose their policy (``score:``), the
**exact step accuracy** is the mean over states of the probability mass on optimal actions (``p_optimal``):
the expected accuracy, without the sampled action's Bernoulli noise, with an expanded BCa bootstrap interval over states
(:func:`~agentgym_budget.eval.estimator.bootstrap_ci`). The same is reported per depth and per task
family. Two agents are compared on their common states with a *paired* Student-t interval of the
per-state differences (:func:`~agentgym_budget.eval.estimator.paired_ci`): it excludes 0 when the
difference is significant.

Example:
    >>> rows = [{"agent": a, "env_id": "e", "family": "f", "state_id": f"s{i}", "depth": i, "sample": j,
    ...          "optimal": (i + j + (a == "b")) % 2 == 0, "value": 1.0, "progress_delta": 0.0, "valid": True}
    ...         for a in "ab" for i in range(4) for j in range(2)]
    >>> summary = summarize_probes(rows, resamples=200)
    >>> summary.agents["a"].step_accuracy.mean, summary.comparisons[0].accuracy.mean
    (0.5, 0.0)
"""

from __future__ import annotations

import json
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
)
from agentgym_budget.eval.process_signal import SignalPoint

__all__ = ["Estimate", "estimate"]

PROBE_DEFINITION = (
    "Single-step probes: at shared states sampled from reference trajectories (snapshotted once), each agent "
    "proposes m actions. step_accuracy: share of actions that agree with the expert (the expert's own next action, "
    "an immediate win, or an action after which the expert's plan is at least one step shorter); step_value: share "
    "of continuations (by the continuation policy, within the episode's remaining budget) that win after the action; "
    "progress_change: progress after minus before. Per state the mean over samples, then the mean over states; "
    "intervals: expanded BCa bootstrap over states; comparisons: Student-t on the per-state differences of the "
    "common states."
)
"""Definition stored in every probe summary."""


def state_key(record: Mapping[str, Any]) -> tuple[str, str, str | None, str]:
    """``(env_id, env_kwargs as JSON, split, state_id)``: a probe state's identity across agents."""
    return (
        record.get("env_id", ""),
        json.dumps(record.get("env_kwargs") or {}, sort_keys=True),
        record.get("split"),
        record["state_id"],
    )


def _json(value: float) -> float | None:
    return None if not np.isfinite(value) else round(float(value), 6)


@dataclass(frozen=True)
class Estimate:
    """A mean over states with its bootstrap interval.

    Attributes:
        mean: The mean (``nan`` with no state).
        low: Lower bound.
        high: Upper bound.
        n: Number of states.
    """

    mean: float
    low: float
    high: float
    n: int

    @property
    def significant(self) -> bool:
        """The interval excludes 0 (meaningful for differences)."""
        return bool(self.low > 0 or self.high < 0)

    def to_json(self) -> dict[str, Any]:
        """``{"mean", "ci", "n"}``."""
        return {"mean": _json(self.mean), "ci": [_json(self.low), _json(self.high)], "n": self.n}


def estimate(
    values: Sequence[float],
    *,
    confidence: float,
    resamples: int,
    seed: int,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """:class:`Estimate` of per-state ``values`` (the interval clipped to ``bounds``, the range the mean cannot leave).

    Example:
        >>> estimate([1.0, 0.0, 1.0, 1.0], confidence=0.95, resamples=100, seed=0).mean
        0.75
    """
    array = np.asarray(values, dtype=float)
    if not array.size:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    low, high = bootstrap_ci(array, confidence=confidence, resamples=resamples, seed=seed, bounds=bounds)
    return Estimate(float(array.mean()), low, high, int(array.size))


@dataclass
class AgentProbes:
    """One agent's probe results.

    Attributes:
        agent: Canonical agent name.
        samples: Actions judged.
        step_accuracy: Expert agreement.
        step_value: Rollout value.
        progress_change: Progress change.
        valid_rate: Share of actions that were admissible.
        by_depth: Depth -> (accuracy, value).
        by_family: Family -> (accuracy, value).
        per_state: State key -> (accuracy, value, progress change) (for comparisons).
    """

    agent: str
    samples: int
    step_accuracy: Estimate
    step_value: Estimate
    progress_change: Estimate
    valid_rate: float
    by_depth: dict[int, tuple[Estimate, Estimate]] = field(default_factory=dict)
    by_family: dict[str, tuple[Estimate, Estimate]] = field(default_factory=dict)
    per_state: dict[tuple[Any, ...], tuple[float, float, float]] = field(default_factory=dict, repr=False)
    exact_accuracy: Estimate | None = None
    per_state_exact: dict[tuple[Any, ...], float] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        """JSON form (``step_accuracy`` and ``step_value`` are plain numbers; intervals beside them)."""
        return {
            "states": self.step_accuracy.n,
            "samples": self.samples,
            "step_accuracy": _json(self.step_accuracy.mean),
            "step_accuracy_ci": self.step_accuracy.to_json()["ci"],
            "step_value": _json(self.step_value.mean),
            "step_value_ci": self.step_value.to_json()["ci"],
            "progress_change": _json(self.progress_change.mean),
            "progress_change_ci": self.progress_change.to_json()["ci"],
            "valid_action_rate": _json(self.valid_rate),
            **(
                {
                    "exact_step_accuracy": self.exact_accuracy.to_json()["mean"],
                    "exact_step_accuracy_ci": self.exact_accuracy.to_json()["ci"],
                }
                if self.exact_accuracy is not None
                else {}
            ),
            "by_depth": [
                {"depth": depth, "states": acc.n, "step_accuracy": acc.to_json(), "step_value": value.to_json()}
                for depth, (acc, value) in sorted(self.by_depth.items())
            ],
            "by_family": {
                family: {"states": acc.n, "step_accuracy": acc.to_json(), "step_value": value.to_json()}
                for family, (acc, value) in sorted(self.by_family.items())
            },
        }


@dataclass(frozen=True)
class ProbeComparison:
    """``first - second`` on common states (paired Student-t interval)."""

    first: str
    second: str
    accuracy: Estimate
    value: Estimate
    exact_accuracy: Estimate | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON form with ``significant`` flags."""
        exact = self.exact_accuracy
        return {
            **(
                {"exact_step_accuracy_diff": exact.to_json(), "exact_step_accuracy_significant": exact.significant}
                if exact is not None
                else {}
            ),
            "first": self.first,
            "second": self.second,
            "states": self.accuracy.n,
            "step_accuracy_diff": self.accuracy.to_json(),
            "step_accuracy_significant": self.accuracy.significant,
            "step_value_diff": self.value.to_json(),
            "step_value_significant": self.value.significant,
        }


@dataclass
class ProbeSummary:
    """Every agent's results and every pairwise comparison."""

    agents: dict[str, AgentProbes]
    comparisons: list[ProbeComparison]
    confidence: float
    resamples: int
    process_signal: dict[str, Any] = field(default_factory=dict)

    def to_json(self, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON form of ``summary.json``."""
        return {
            "definition": PROBE_DEFINITION,
            "confidence": self.confidence,
            "bootstrap_resamples": self.resamples,
            "config": dict(config or {}),
            "agents": {name: agent.to_json() for name, agent in self.agents.items()},
            "comparisons": [c.to_json() for c in self.comparisons],
            "process_signal": self.process_signal,
        }

    def csv_rows(self) -> list[dict[str, Any]]:
        """Rows of ``summary.csv``: per agent, overall, per family and per depth."""
        rows = []
        for name, agent in self.agents.items():
            groups = [("all", "all", agent.step_accuracy, agent.step_value)]
            groups += [(family, "all", a, v) for family, (a, v) in sorted(agent.by_family.items())]
            groups += [("all", str(depth), a, v) for depth, (a, v) in sorted(agent.by_depth.items())]
            for family, depth, accuracy, value in groups:
                rows.append(
                    {
                        "agent": name,
                        "family": family,
                        "depth": depth,
                        "states": accuracy.n,
                        "step_accuracy": _json(accuracy.mean),
                        "accuracy_ci_low": _json(accuracy.low),
                        "accuracy_ci_high": _json(accuracy.high),
                        "step_value": _json(value.mean),
                        "value_ci_low": _json(value.low),
                        "value_ci_high": _json(value.high),
                    }
                )
        return rows


def _state_means(records: Sequence[Mapping[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    states: dict[tuple[Any, ...], dict[str, Any]] = {}
    grouped: dict[tuple[Any, ...], list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[state_key(record)].append(record)
    for key, rows in grouped.items():
        states[key] = {
            "accuracy": float(np.mean([bool(r["optimal"]) for r in rows])),
            "value": float(np.mean([float(r["value"]) for r in rows])),
            "delta": float(np.mean([float(r.get("progress_delta", 0.0)) for r in rows])),
            "depth": int(rows[0].get("depth", 0)),
            "family": rows[0].get("family", "?"),
            "exact": float(np.mean([r["p_optimal"] for r in rows])) if all("p_optimal" in r for r in rows) else None,
        }
    return states


def summarize_probes(
    records: Iterable[Mapping[str, Any]],
    *,
    order: Sequence[str] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> ProbeSummary:
    """Summarise probe records (see the module docstring); ``order`` lists agents first."""
    by_agent: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        by_agent[record["agent"]].append(record)
    rank = {name: i for i, name in enumerate(order or ())}
    names = sorted(by_agent, key=lambda name: (rank.get(name, len(rank)), name))
    options = {"confidence": confidence, "resamples": resamples, "seed": seed}
    agents: dict[str, AgentProbes] = {}
    for name in names:
        rows = by_agent[name]
        states = _state_means(rows)
        values = list(states.values())
        result = AgentProbes(
            agent=name,
            samples=len(rows),
            step_accuracy=estimate([s["accuracy"] for s in values], **options, bounds=RATE),
            step_value=estimate([s["value"] for s in values], **options, bounds=RATE),
            progress_change=estimate([s["delta"] for s in values], **options, bounds=DIFFERENCE),
            valid_rate=float(np.mean([bool(r.get("valid", True)) for r in rows])),
            per_state={key: (s["accuracy"], s["value"], s["delta"]) for key, s in states.items()},
        )
        if all(s["exact"] is not None for s in values):
            result.exact_accuracy = estimate([s["exact"] for s in values], **options, bounds=RATE)
            result.per_state_exact = {key: s["exact"] for key, s in states.items()}
        for attribute, group in (("depth", result.by_depth), ("family", result.by_family)):
            buckets: dict[Any, list[dict[str, Any]]] = defaultdict(list)
            for s in values:
                buckets[s[attribute]].append(s)
            for bucket, members in buckets.items():
                group[bucket] = (
                    estimate([s["accuracy"] for s in members], **options, bounds=RATE),
                    estimate([s["value"] for s in members], **options, bounds=RATE),
                )
        agents[name] = result
    comparisons = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            a, b = agents[first].per_state, agents[second].per_state
            common = sorted(set(a) & set(b))
            if not common:
                continue
            pairs = []
            for column in (0, 1):
                x = np.array([a[key][column] for key in common])
                y = np.array([b[key][column] for key in common])
                low, high = paired_ci(x, y, confidence=confidence, bounds=DIFFERENCE)
                pairs.append(Estimate(float(x.mean() - y.mean()), low, high, len(common)))
            exact = None
            a_exact, b_exact = agents[first].per_state_exact, agents[second].per_state_exact
            if a_exact and b_exact:
                x, y = np.array([a_exact[key] for key in common]), np.array([b_exact[key] for key in common])
                low, high = paired_ci(x, y, confidence=confidence, bounds=DIFFERENCE)
                exact = Estimate(float(x.mean() - y.mean()), low, high, len(common))
            comparisons.append(ProbeComparison(first, second, pairs[0], pairs[1], exact))
    return ProbeSummary(agents, comparisons, confidence, resamples)


def _cell(est: Estimate, signed: bool = False) -> str:
    if not np.isfinite(est.mean):
        return "-"
    sign = "+" if signed else ""
    return f"{est.mean:{sign}.2f} [{est.low:{sign}.2f}, {est.high:{sign}.2f}]"


def format_probe_summary(summary: ProbeSummary) -> str:
    """The summary as text tables (agents, accuracy by depth, comparisons)."""
    width = max([len(name) for name in summary.agents] + [5])
    lines = [
        f"{'agent'.ljust(width)}  {'states':>6}  {'step accuracy':>19}  {'step value':>19}  {'progress change':>22}"
    ]
    for name, agent in summary.agents.items():
        lines.append(
            f"{name.ljust(width)}  {agent.step_accuracy.n:>6}  {_cell(agent.step_accuracy):>19}  "
            f"{_cell(agent.step_value):>19}  {_cell(agent.progress_change, True):>22}"
        )
    exact = [(name, agent.exact_accuracy) for name, agent in summary.agents.items() if agent.exact_accuracy]
    if exact:
        lines += ["", "Exact step accuracy (probability mass on optimal actions, from the agent's policy):"]
        lines += [f"{name.ljust(width)}  {_cell(estimate):>19}" for name, estimate in exact]
    depths = sorted({d for agent in summary.agents.values() for d in agent.by_depth})
    if depths:
        lines += ["", "Step accuracy by depth (states):"]
        lines.append(f"{'depth'.ljust(width)}  " + "  ".join(f"{d:>9}" for d in depths))
        for name, agent in summary.agents.items():
            cells = []
            for depth in depths:
                accuracy = agent.by_depth.get(depth, (None, None))[0]
                cells.append(f"{accuracy.mean:.2f} ({accuracy.n})" if accuracy is not None else "-")
            lines.append(f"{name.ljust(width)}  " + "  ".join(f"{c:>9}" for c in cells))
    families = sorted({f for agent in summary.agents.values() for f in agent.by_family})
    if len(families) > 1:
        lines += ["", "By family (accuracy / value):"]
        for name, agent in summary.agents.items():
            cells = [f"{f}: {_cell(agent.by_family[f][0])} / {_cell(agent.by_family[f][1])}" for f in families]
            lines.append(f"{name.ljust(width)}  " + "  ".join(cells))
    for comparison in summary.comparisons:
        marks = ["*" if e.significant else "" for e in (comparison.accuracy, comparison.value)]
        lines += [
            "",
            f"{comparison.first}  minus  {comparison.second}  ({comparison.accuracy.n} common states; * = CI excludes 0)",
            f"  step accuracy {_cell(comparison.accuracy, True)}{marks[0]}   step value {_cell(comparison.value, True)}{marks[1]}",
        ]
        if comparison.exact_accuracy is not None:
            mark = "*" if comparison.exact_accuracy.significant else ""
            lines.append(f"  exact step accuracy {_cell(comparison.exact_accuracy, True)}{mark}")
    lines.append(
        f"\nIntervals: {summary.confidence:.0%}, expanded BCa bootstrap over states ({summary.resamples} resamples); "
        "comparisons: paired t over common states."
    )
    return "\n".join(lines)


def probe_signal_points(records: Sequence[Mapping[str, Any]]) -> list[SignalPoint]:
    """The process-signal points of probe records: the state's progress, the action's change, its value."""
    return [
        SignalPoint(
            family=r.get("family", "?"),
            progress=float(r["progress"]),
            delta=float(r["progress_delta"]),
            success=float(r["value"]),
            optimal=bool(r["optimal"]),
            error=bool(r["error"]),
        )
        for r in records
    ]
