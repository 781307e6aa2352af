"""The study's claims, decided from its records: a pure function from outcomes to verdicts.

:func:`decide_claims` reads three lists of records (plain dicts, as the study writes them):

* ``episodes``: ``{"agent", "seed", "task_id", "budget", "won"}``: one Pass@(1,T) episode;
* ``probes``: ``{"agent", "seed", "state_id", "correct"}``: one single-step probe on a shared state;
* ``recovery``: ``{"agent", "seed", "state_id", "k", "recovered"}``: one episode continued after ``k``
  injected errors (``k = 0`` is the control: the same state, no error injected).

Each claim is a linear contrast of cell means with a hierarchical-bootstrap interval over training
seeds, shared tasks (or states) and episodes (:mod:`agentgym_budget.stats.hierarchical`), so the
intervals include the spread of training itself. The claims' p-values are Holm-adjusted together; a
claim is ``supported`` only if its interval says so **and** its adjusted p-value is below ``alpha``;
``not_supported`` when the interval excludes the claimed direction or lies inside the equivalence
margin; otherwise ``undecided`` (at this power). A claim whose arms were not run is ``undecided`` with
``reason``, and so is a *saturated* one, whose cells hold one outcome only (every probe action
judged wrong, say): its zero-width interval would pass any test by construction. Verdict rules per
claim:

==================== ======================================================================= =====================
claim                statistic                                                               supported when
==================== ======================================================================= =====================
budget_dependence    Δ(T_large) - Δ(T_small), Δ(T) = rl - base at T                          interval > 0
single_step          probe accuracy rl - base (90% interval, equivalence)                    inside ±margin or < 0
recovery             mean over k>=1 of Δ(k) - Δ(0), Δ(k) = rl - base after k errors          interval > 0
budgetmix_robustness mean over out-of-range budgets of budgetmix - fixed                     interval > 0
                     (also reported, not tested: curriculum - fixed, budgetmix - curriculum)
process_supervision  mean over budgets of process - no-process arm                           interval > 0
==================== ======================================================================= =====================
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentgym_budget.errors import DataError
from agentgym_budget.stats.hierarchical import contrast_interval, interaction_weights
from agentgym_budget.stats.intervals import equivalence_verdict, holm_adjust

__all__ = ["ClaimSettings", "decide_claims"]

CLAIMS = ("budget_dependence", "single_step", "recovery", "budgetmix_robustness", "process_supervision")
"""The claims, in report order."""


@dataclass(frozen=True)
class ClaimSettings:
    """Which agents and budgets each claim compares, and the decision rules' constants.

    Attributes:
        base: The base policy (SFT).
        rl: The RL agent of claims 1-3.
        fixed: The fixed-budget RL recipe; ``budgetmix``: the BudgetMix recipe; ``curriculum``: the curriculum
            recipe (its contrasts with the other two are reported beside ``budgetmix_robustness``).
        process: The arm trained with the process signal; ``no_process``: the same recipe without it.
        large_budget: ``T_large`` of claim 1; ``small_budget``: ``T_small``.
        train_budgets: Budgets BudgetMix trained on (claim 4 uses the budgets outside their range).
        margin: Equivalence margin (absolute rate).
        alpha: Family-wise error rate of the Holm correction.
        resamples: Bootstrap resamples; ``seed``: bootstrap seed.
    """

    base: str = "sft"
    rl: str = "fixed"
    fixed: str = "fixed"
    budgetmix: str = "budgetmix"
    curriculum: str = "curriculum"
    process: str = "budgetmix_process"
    no_process: str = "budgetmix"
    large_budget: int = 8
    small_budget: int = 3
    train_budgets: tuple[int, ...] = (4, 5, 6)
    margin: float = 0.05
    alpha: float = 0.05
    resamples: int = 2000
    seed: int = 0


def outcome_cells(records: Sequence[Mapping[str, Any]], keys: Sequence[str], unit: str, value: str) -> dict:
    """Arrays ``(seeds, units, episodes)`` of ``value`` per cell ``tuple(record[k] for k in keys)``.

    Units (tasks or states) are those every cell has; each (seed, unit) keeps its first ``m`` episodes in
    record order, ``m`` the smallest count, so the arrays are rectangular.

    Raises:
        DataError: A record lacks a field, or the cells share no unit.

    Example:
        >>> records = [{"agent": "a", "seed": 0, "task_id": t, "won": w} for t, w in (("x", 1), ("x", 0), ("y", 1))]
        >>> outcome_cells(records, ["agent"], "task_id", "won")[("a",)].tolist()
        [[[1.0], [1.0]]]
    """
    grouped: dict[Hashable, dict[Any, dict[Any, list[float]]]] = defaultdict(lambda: defaultdict(dict))
    for record in records:
        try:
            cell, seed, item = tuple(record[k] for k in keys), record["seed"], record[unit]
            grouped[cell][seed].setdefault(item, []).append(float(record[value]))
        except (KeyError, TypeError, ValueError) as error:
            raise DataError(f"A study record needs {[*keys, 'seed', unit, value]!r}, got {dict(record)!r}.") from error
    if not grouped:
        return {}
    units = sorted(set.intersection(*(set(u) for seeds in grouped.values() for u in seeds.values())), key=repr)
    if not units:
        raise DataError(f"The cells {sorted(grouped, key=repr)!r} share no {unit}: nothing to compare.")
    episodes = min(len(seeds[s][u]) for seeds in grouped.values() for s in seeds for u in units)
    return {
        cell: np.array([[seeds[s][u][:episodes] for u in units] for s in sorted(seeds, key=repr)])
        for cell, seeds in grouped.items()
    }


def _claim(name: str, statistic: str, cells: dict, weights: dict, settings: ClaimSettings, **options: Any) -> dict:
    missing = sorted({str(key[0]) for key in weights if key not in cells})
    if missing or not weights:
        return {"claim": name, "statistic": statistic, "estimate": None, "interval": None, "verdict": "undecided",
                "reason": f"no records of {', '.join(missing) or 'any arm'}: arm or stage not run", "sizes": {}}  # fmt: skip
    result = contrast_interval(
        cells, weights, confidence=options.get("confidence", 0.95), resamples=settings.resamples, seed=settings.seed
    )
    claim = {
        "claim": name,
        "statistic": statistic,
        "estimate": round(result.interval.estimate, 6),
        "interval": result.interval.to_json(),
        "p_value": round(result.p_value, 6),
        "sizes": {_cell_label(key, options.get("axis", "T")): result.sizes[str(key)] for key in weights},
        "_interval": result.interval,
    }
    outcomes = np.unique(np.concatenate([cells[key].ravel() for key in weights]))
    if outcomes.size == 1:
        claim["saturated"] = float(outcomes[0])
    return claim


def _cell_label(key: tuple, axis: str) -> str:
    """A cell's name in ``sizes``: ``"fixed T=3"`` (agent, budget), ``"fixed k=0"`` (agent, errors) or ``"fixed"``.

    Example:
        >>> _cell_label(("fixed", 3), "T"), _cell_label(("sft", 0), "k"), _cell_label(("sft",), "T")
        ('fixed T=3', 'sft k=0', 'sft')
    """
    return str(key[0]) if len(key) == 1 else f"{key[0]} {axis}={key[1]}"


def _budget_claims(episodes: Sequence[Mapping[str, Any]], s: ClaimSettings) -> list[dict]:
    cells = outcome_cells(episodes, ["agent", "budget"], "task_id", "won")
    budgets = sorted({key[1] for key in cells})
    interaction = _claim(
        "budget_dependence",
        f"Δ({s.large_budget}) - Δ({s.small_budget}), Δ(T) = Pass@(1,T)[{s.rl}] - Pass@(1,T)[{s.base}]",
        cells, interaction_weights(s.rl, s.base, s.large_budget, s.small_budget), s,
    )  # fmt: skip
    interaction["gains"] = _gains(cells, s)
    outside = [b for b in budgets if b < min(s.train_budgets) or b > max(s.train_budgets)]
    mix = {
        (agent, b): sign / max(len(outside), 1)
        for b in outside
        for agent, sign in ((s.budgetmix, 1.0), (s.fixed, -1.0))
    }
    robustness = _claim(
        "budgetmix_robustness",
        f"mean over budgets {outside} (outside training {list(s.train_budgets)}) of Pass@1[{s.budgetmix}] - [{s.fixed}]",
        cells, mix or {(s.budgetmix, "none"): 1.0}, s,
    )  # fmt: skip
    arms = (s.budgetmix, s.fixed, s.curriculum)
    robustness["per_budget"] = {
        str(b): {a: round(float(cells[(a, b)].mean()), 6) for a in arms if (a, b) in cells} for b in budgets
    }
    robustness["secondary"] = _secondary(cells, outside, s)
    for agent in arms:
        means = [float(cells[(agent, b)].mean()) for b in budgets if (agent, b) in cells]
        if means:
            robustness[f"worst_{agent}"], robustness[f"spread_{agent}"] = (
                round(min(means), 6),
                round(max(means) - min(means), 6),
            )
    process = {
        (agent, b): sign / len(budgets) for b in budgets for agent, sign in ((s.process, 1.0), (s.no_process, -1.0))
    }
    supervision = _claim(
        "process_supervision", f"mean over budgets of Pass@1[{s.process}] - Pass@1[{s.no_process}]", cells, process, s
    )
    return [interaction, robustness, supervision]


def _gains(cells: dict, s: ClaimSettings) -> dict[str, Any]:
    """Δ(T) = rl - base at ``T_small`` and ``T_large`` (intervals only: outside the Holm family)."""
    found = {}
    for budget in (s.small_budget, s.large_budget):
        weights = {(s.rl, budget): 1.0, (s.base, budget): -1.0}
        if all(key in cells for key in weights):
            found[str(budget)] = _reported_contrast(cells, weights, s)
    return found


def _reported_contrast(cells: dict, weights: dict, s: ClaimSettings) -> dict[str, Any]:
    """A contrast's interval and p-value as reported beside a claim (not part of the Holm family)."""
    result = contrast_interval(cells, weights, resamples=s.resamples, seed=s.seed)
    return {**result.interval.to_json(), "p_value": round(result.p_value, 6)}


def _no_gain_context(dependence: dict, s: ClaimSettings) -> str | None:
    """What ``single_step`` and ``recovery`` are read against when RL showed no gain in Pass@1 at ``T_large``."""
    gain = dependence.get("gains", {}).get(str(s.large_budget))
    if not gain or gain["low"] > 0:
        return None
    return (
        f"RL showed no gain in Pass@1 at T={s.large_budget} (Δ = {gain['estimate']:+.3f} [{gain['low']:+.3f}, "
        f"{gain['high']:+.3f}]): this verdict is about RL runs that did not improve on the base, not about where "
        "an RL gain comes from"
    )


def _secondary(cells: dict, outside: list[int], s: ClaimSettings) -> dict[str, Any]:
    """The curriculum's contrasts over the out-of-range budgets (intervals only: outside the Holm family)."""
    found = {}
    for first, second in ((s.curriculum, s.fixed), (s.budgetmix, s.curriculum)):
        weights = {(a, b): sign / len(outside) for b in outside for a, sign in ((first, 1.0), (second, -1.0))}
        if not outside or any(key not in cells for key in weights):
            continue
        found[f"{first} - {second}"] = _reported_contrast(cells, weights, s)
    return found


def _recovery_claim(recovery: Sequence[Mapping[str, Any]], s: ClaimSettings) -> dict:
    cells = outcome_cells(recovery, ["agent", "k"], "state_id", "recovered")
    ks = sorted({key[1] for key in cells if key[1] != 0})
    weights: dict = defaultdict(float)
    for k in ks:
        for agent, sign in ((s.rl, 1.0), (s.base, -1.0)):
            weights[(agent, k)] += sign / len(ks)
            weights[(agent, 0)] -= sign / len(ks)
    claim = _claim("recovery", f"mean over k={ks} of Δ(k) - Δ(0), Δ(k) = {s.rl} - {s.base} after k errors", cells,
                   dict(weights) or {(s.rl, 0): 1.0, (s.rl, 1): -1.0}, s, axis="k")  # fmt: skip
    claim["per_k"] = {str(k): {a: round(float(cells[(a, k)].mean()), 6) for a in (s.rl, s.base) if (a, k) in cells}
                      for k in sorted({key[1] for key in cells})}  # fmt: skip
    return claim


def _verdict(claim: dict, s: ClaimSettings) -> str:
    interval = claim.pop("_interval", None)
    if interval is None:
        return "undecided"
    if "saturated" in claim:
        claim["reason"] = (
            f"saturated: every outcome in its cells is {claim['saturated']:g}, so the measure cannot separate the "
            "agents here"
        )
        return "undecided"
    significant = claim["holm_p"] < s.alpha
    if claim["claim"] == "single_step":
        decision = equivalence_verdict(interval, s.margin)
        if decision == "equivalent" or interval.high < 0:
            return "supported"
        return "not_supported" if interval.low > 0 else "undecided"
    if interval.low > 0 and significant:
        return "supported"
    if interval.high < 0 or equivalence_verdict(interval, s.margin) == "equivalent":
        return "not_supported"
    return "undecided"


def decide_claims(
    episodes: Sequence[Mapping[str, Any]],
    probes: Sequence[Mapping[str, Any]],
    recovery: Sequence[Mapping[str, Any]],
    settings: ClaimSettings | None = None,
) -> list[dict[str, Any]]:
    """The five claims (:data:`CLAIMS` order), each with statistic, estimate, interval, Holm p, verdict, sizes."""
    s = settings or ClaimSettings()
    probe_cells = outcome_cells(probes, ["agent"], "state_id", "correct")
    single = _claim("single_step", f"probe accuracy [{s.rl}] - [{s.base}] on shared states (90% interval, margin "
                    f"{s.margin})", probe_cells, {(s.rl,): 1.0, (s.base,): -1.0}, s, confidence=0.90)  # fmt: skip
    dependence, robustness, supervision = _budget_claims(episodes, s)
    recovered = _recovery_claim(recovery, s)
    claims = [dependence, single, recovered, robustness, supervision]
    tested = [c for c in claims if c.get("p_value") is not None]
    for claim, adjusted in zip(tested, holm_adjust([c["p_value"] for c in tested]), strict=True):
        claim["holm_p"] = adjusted
    for claim in claims:
        claim["verdict"] = _verdict(claim, s)
    context = _no_gain_context(dependence, s)
    for claim in (single, recovered):
        if context and claim.get("interval"):
            claim["context"] = context
    return claims
