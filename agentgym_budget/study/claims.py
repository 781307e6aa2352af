"""The study's claims from its logs, and the part of ``study.md`` that says what the study can and cannot show.

:func:`claim_records` turns the logs of one study directory (``passkt/episodes.jsonl``, ``probe/probes.jsonl``,
``recovery/episodes.jsonl``) into the plain records :func:`agentgym_budget.stats.claims.decide_claims` reads, with
agents named by recipe (``sft``, ``fixed``, ``budgetmix``, ...) and the training seed given, in a canonical
order (agent, task or state, ``k``, budget, sample), so the claims do not depend on the order in which
worker processes logged the records. Outcomes:

* Pass@(1,T): in ``prefix`` mode an episode run at the largest budget counts as won at ``T`` when
  ``success_turn <= T``; in ``independent`` mode, the ``won`` of the episode run at ``T``;
* single step: a probe is correct when its action is ``optimal``; for an agent that exposes its policy (``score:``)
  its exact expected accuracy at the state, ``p_optimal`` (the probability mass on optimal actions), instead of
  the sampled action's 0 or 1, so the claim carries no sampling noise of the agent's choice;
* recovery: a ``perturbed`` episode after ``k`` forced errors (``k = 0``: the control) that was ``won``.

:func:`study_claims` decides the claims; :func:`claims_markdown` renders them with the study's sizes,
achieved half-widths, seeds, machine, and what is scripted versus learned.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentgym_budget.runner.store import read_jsonl
from agentgym_budget.stats.claims import ClaimSettings, decide_claims
from agentgym_budget.stats.power import growth_to_decide

__all__: list[str] = []


def _order(record: dict[str, Any]) -> tuple[str, ...]:
    fields = ("agent", "task_id", "state_id", "k", "budget", "sample")
    return tuple(repr(record.get(name)) for name in fields)


def _log(directory: Path, name: str = "episodes.jsonl") -> list[dict[str, Any]]:
    """The records of a stage's log in a canonical order: log order depends on how workers interleaved."""
    path = directory / name
    return sorted(read_jsonl(path), key=_order) if path.exists() else []


def claim_records(
    out: str | Path, agents: Mapping[str, str], budgets: Sequence[int], training_seed: int = 0
) -> tuple[list[dict], list[dict], list[dict]]:
    """``(episodes, probes, recovery)`` records of a study directory (see the module docstring).

    ``agents`` maps run names (``sft``, ``fixed``, ``fixed@1``: recipe ``fixed``, training run 1) to agent specs as
    the logs name them; records of other agents are dropped. Runs without ``@`` get ``training_seed``.
    """
    out, names, seeds = Path(out), {}, {}
    for name, spec in agents.items():  # "fixed@2": the RL recipe "fixed", training seed index 2
        recipe, _, index = name.partition("@")
        names[spec], seeds[spec] = recipe, int(index) if index.isdigit() else training_seed
    episodes = []
    for record in _log(out / "passkt"):
        if record.get("agent") not in names:
            continue
        base = {"agent": names[record["agent"]], "seed": seeds[record["agent"]], "task_id": record["task_id"]}
        if record.get("mode") == "prefix":
            turn = record.get("success_turn")
            for budget in (b for b in budgets if b <= record["budget"]):
                episodes.append({**base, "budget": budget, "won": turn is not None and turn <= budget})
        elif record["budget"] in budgets:
            episodes.append({**base, "budget": record["budget"], "won": bool(record["won"])})
    probes = [
        {
            "agent": names[r["agent"]],
            "seed": seeds[r["agent"]],
            "state_id": r["state_id"],
            "correct": r["p_optimal"] if "p_optimal" in r else bool(r["optimal"]),
        }
        for r in _log(out / "probe", "probes.jsonl")
        if r.get("kind") == "probe" and r.get("agent") in names
    ]
    recovery = [
        {"agent": names[r["agent"]], "seed": seeds[r["agent"]], "state_id": r["state_id"], "k": r["k"],
         "recovered": bool(r["won"])}
        for r in _log(out / "recovery")
        if r.get("kind") == "perturbed" and r.get("agent") in names
    ]  # fmt: skip
    return episodes, probes, recovery


def study_claims(out: str | Path, config: Any, agents: Mapping[str, str]) -> list[dict[str, Any]]:
    """The claims of a study directory (``config``: its :class:`~agentgym_budget.study.run.StudyConfig`)."""
    budgets = sorted(config.eval_budgets)
    from agentgym_budget.study.arms import no_process_arm

    settings = ClaimSettings(
        large_budget=budgets[-1],
        small_budget=budgets[0],
        train_budgets=tuple(config.budgets),
        no_process=no_process_arm(getattr(config, "arms", ())),
        seed=config.seed,
    )
    return decide_claims(*claim_records(out, agents, budgets), settings)


def _cell(value: Any, pattern: str) -> str:
    return "n/a" if value is None else format(value, pattern)


HALF_WIDTH_TARGET = 0.05
"""The half-width the study's sizes aim at for every claim's interval (issue 21, item 4)."""


def _power_line(claims: Sequence[Mapping[str, Any]]) -> str:
    """The power line of ``study.md``: a saturated claim (one outcome in every cell, half-width 0) has no power.

    Example:
        >>> claims = [{"claim": "a", "interval": {"half_width": 0.0}, "saturated": 0.0},
        ...           {"claim": "b", "interval": {"half_width": 0.04}}]
        >>> _power_line(claims)
        '- Power: half-width target <= 0.05; achieved by 1 of 1 measured claims (b 0.040); saturated, so no power: a.'
    """
    widths = {c["claim"]: (c.get("interval") or {}).get("half_width") for c in claims if "saturated" not in c}
    saturated = [c["claim"] for c in claims if "saturated" in c]
    measured = {name: width for name, width in widths.items() if width is not None}
    met = [name for name, width in measured.items() if width <= HALF_WIDTH_TARGET]
    line = (
        f"- Power: half-width target <= {HALF_WIDTH_TARGET}; achieved by {len(met)} of {len(measured)} measured "
        f"claims ({', '.join(f'{n} {w:.3f}' for n, w in measured.items()) or 'none'})"
        + (f"; saturated, so no power: {', '.join(saturated)}." if saturated else ".")
    )
    short = {name: (width / HALF_WIDTH_TARGET) ** 2 for name, width in measured.items() if name not in met}
    if short:
        line += (
            " A half-width shrinks about as 1/sqrt(size), so reaching the target needs about "
            + ", ".join(f"{factor:.1f}x ({name})" for name, factor in short.items())
            + " as many training seeds and tasks or states as this run (a projection, not a measurement)."
        )
    return line


def _decision_line(claims: Sequence[Mapping[str, Any]]) -> str:
    """What it would take to decide each undecided claim, if the truth were its estimate (80% chance).

    Example:
        >>> interval = {"half_width": 0.094, "confidence": 0.95}
        >>> claims = [{"claim": "recovery", "estimate": 0.0625, "interval": interval, "verdict": "undecided",
        ...            "p_value": 0.15}]
        >>> print(_decision_line(claims))  # doctest: +ELLIPSIS
        - To decide: if the truth were each estimate, a verdict with 80% chance needs about 4.6x (recovery) this ...
    """
    settings = ClaimSettings()
    tested = max(1, sum("p_value" in claim for claim in claims))
    growths = {
        claim["claim"]: growth_to_decide(claim, margin=settings.margin, alpha=settings.alpha, tested=tested)
        for claim in claims
        if claim.get("verdict") == "undecided" and claim.get("interval") and "saturated" not in claim
    }
    if not growths:
        return "- To decide: no undecided claim with an interval."
    sizes = ", ".join(
        f"{growth:.1f}x ({name})" if growth else f"more than 10,000x ({name})" for name, growth in growths.items()
    )
    return (
        f"- To decide: if the truth were each estimate, a verdict with 80% chance needs about {sizes} this run's "
        "sizes (training seeds, tasks or states and episodes alike; a normal projection from the achieved "
        "intervals, Holm at its strictest step: `agentgym_budget.stats.power`)."
    )


_SEED_CAVEATS = {
    1: " One seed: the run-to-run spread of training is NOT in the intervals.",
    2: " Two seeds: the intervals resample them, but two runs show little of training's run-to-run spread"
    " (3 or more wanted).",
}
"""What ``study.md`` adds after the number of training seeds, when it is small."""


def _gain_lines(claims: Sequence[Mapping[str, Any]]) -> list[str]:
    """The RL gain at the two budgets of ``budget_dependence``, and what it means for the claims read against it."""
    gains = next((c.get("gains") for c in claims if c["claim"] == "budget_dependence"), None)
    if not gains:
        return []
    cells = [f"T={t} {g['estimate']:+.3f} [{g['low']:+.3f}, {g['high']:+.3f}]" for t, g in gains.items()]
    lines = [
        f"- RL gain over the base, Δ(T) ({next(iter(gains.values()))['confidence']:.0%}): " + "; ".join(cells) + "."
    ]
    lines += [f"- {c['claim']}: {c['context']}." for c in claims if c.get("context")]
    return lines


def machine() -> str:
    """The machine a study ran on, as ``study.md`` and the figures' captions name it (``x86_64 Linux, 2 CPUs``)."""
    return f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs"


CLAIM_QUESTIONS = {
    "budget_dependence": "RL's gain depends on the budget (Δ(T_large) - Δ(T_small), Pass@1)",
    "single_step": "the gain is not in single steps (probe accuracy, RL - base)",
    "recovery": "the gain is in recovery (k = 1-3 forced errors minus k = 0)",
    "budgetmix_robustness": "BudgetMix is more robust (BudgetMix - fixed outside its budgets)",
    "process_supervision": "process supervision helps (with - without the process signal)",
}
"""Each claim as the README's verdict table asks it."""


def verdict_lines(claims: Sequence[Mapping[str, Any]]) -> list[str]:
    """The README's verdict table: per claim its question, estimate with interval, and verdict.

    Example:
        >>> claim = {"claim": "recovery", "estimate": 0.1, "verdict": "undecided",
        ...          "interval": {"low": 0.0, "high": 0.2, "confidence": 0.95}}
        >>> verdict_lines([claim, {"claim": "single_step", "verdict": "undecided", "reason": "no records of sft: arm or stage not run"}])[2:]
        ['| the gain is in recovery (k = 1-3 forced errors minus k = 0) | +0.100 [+0.000, +0.200] (95%) | undecided |', '| the gain is not in single steps (probe accuracy, RL - base) | not measured (no records of sft: arm or stage not run) | undecided |']
    """
    lines = ["| claim (contrast) | estimate [interval] | verdict |", "|---|---|---|"]
    for claim in claims:
        interval = claim.get("interval")
        if interval and claim.get("estimate") is not None:
            value = (
                f"{claim['estimate']:+.3f} [{interval['low']:+.3f}, {interval['high']:+.3f}] "
                f"({interval['confidence']:.0%})"
            )
        else:
            value = f"not measured ({claim.get('reason', 'no data')})"
        lines.append(f"| {CLAIM_QUESTIONS[claim['claim']]} | {value} | {claim['verdict']} |")
    return lines


def claims_markdown(claims: Sequence[Mapping[str, Any]], training_seeds: int = 1) -> list[str]:
    """Lines of ``study.md``: the claims table and what the study can and cannot show.

    Example:
        >>> claim = {"claim": "recovery", "statistic": "s", "estimate": 0.1, "verdict": "undecided",
        ...          "interval": {"low": 0.0, "high": 0.2, "confidence": 0.95, "half_width": 0.1}}
        >>> [line for line in claims_markdown([claim]) if line.startswith("- Power")]
        ['- Power: half-width target <= 0.05; achieved by 0 of 1 measured claims (recovery 0.100). A half-width shrinks about as 1/sqrt(size), so reaching the target needs about 4.0x (recovery) as many training seeds and tasks or states as this run (a projection, not a measurement).']
    """
    lines = [
        "## Claims",
        "",
        "| claim | statistic | estimate | interval | half-width | Holm p | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for claim in claims:
        interval = claim.get("interval") or {}
        bounds = (
            f"[{interval['low']:+.3f}, {interval['high']:+.3f}] ({interval['confidence']:.0%})" if interval else "n/a"
        )
        lines.append(
            f"| {claim['claim']} | {claim['statistic']} | {_cell(claim.get('estimate'), '+.3f')} | {bounds} | "
            f"{_cell(interval.get('half_width'), '.3f')} | {_cell(claim.get('holm_p'), '.3f')} | "
            f"{claim['verdict']}{' (' + claim['reason'] + ')' if claim.get('reason') else ''} |"
        )
    lines += [
        "",
        "## What this study can and cannot show",
        "",
        "- Sizes per cell (training seeds x tasks or states x episodes):",
        *(
            f"  - {claim['claim']}: "
            + ", ".join(f"{n} {s['seeds']}x{s['tasks']}x{s['episodes']}" for n, s in claim["sizes"].items())
            for claim in claims
            if claim.get("sizes")
        ),
        _power_line(claims),
        _decision_line(claims),
        *_gain_lines(claims),
        f"- Training seeds per recipe: {training_seeds}." + _SEED_CAVEATS.get(training_seeds, ""),
        "- Intervals: hierarchical bootstrap over training seeds, shared tasks/states and episodes; each is marginal,"
        " and the verdicts use Holm-adjusted p-values over the claims (family-wise 5%). `undecided` means: not"
        " decided at this power, not evidence of no effect.",
        "- Learned agents only (SFT base and RL recipes trained here); no scripted expert is compared. Common random"
        " numbers pair the agents' environments, not their sampling.",
        f"- Machine: {machine()}, Python {platform.python_version()}.",
        "",
    ]
    return lines
