"""The claims' verdicts on synthetic records whose truth is known: each verdict comes out each way."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agentgym_budget.errors import DataError
from agentgym_budget.stats.claims import CLAIMS, ClaimSettings, decide_claims, outcome_cells
from agentgym_budget.study.claims import claims_markdown

BUDGETS = (2, 3, 5, 8, 10)
SETTINGS = ClaimSettings(large_budget=8, small_budget=3, train_budgets=(3, 5, 8), resamples=400)


def _episodes(rates: dict[str, dict[int, float]], seed: int = 0, tasks: int = 12, episodes: int = 16) -> list[dict]:
    rng = np.random.default_rng(seed)
    records = []
    for agent, by_budget in rates.items():
        for training_seed in range(1 if agent == "sft" else 3):
            for budget, rate in by_budget.items():
                for task in range(tasks):
                    for sample in range(episodes):
                        won = bool(rng.random() < rate)
                        records.append({"agent": agent, "seed": training_seed, "task_id": f"t{task}",
                                        "budget": budget, "sample": sample, "won": won})  # fmt: skip
    return records


def _probes(rates: dict[str, float], states: int = 40) -> list[dict]:
    rng = np.random.default_rng(1)
    difficulty = rng.normal(0.0, 0.3, size=states)  # shared states: the same difficulty for every agent
    return [
        {"agent": agent, "seed": s, "state_id": f"s{i}", "correct": bool(rng.random() < rate + difficulty[i])}
        for agent, rate in rates.items() for s in range(1 if agent == "sft" else 3) for i in range(states) for _ in range(8)
    ]  # fmt: skip


def _recovery(rates: dict[str, dict[int, float]], states: int = 20) -> list[dict]:
    rng = np.random.default_rng(2)
    return [
        {"agent": agent, "seed": s, "state_id": f"s{i}", "k": k, "recovered": bool(rng.random() < rate)}
        for agent, by_k in rates.items() for s in range(1 if agent == "sft" else 3)
        for k, rate in by_k.items() for i in range(states) for _ in range(8)
    ]  # fmt: skip


def _flat(rate: float) -> dict[int, float]:
    return dict.fromkeys(BUDGETS, rate)


SHRINKING = {2: 0.1, 3: 0.2, 5: 0.5, 8: 0.85, 10: 0.9}
BASE = {2: 0.1, 3: 0.2, 5: 0.35, 8: 0.5, 10: 0.55}


def _verdicts(episodes, probes, recovery) -> dict[str, str]:
    return {c["claim"]: c["verdict"] for c in decide_claims(episodes, probes, recovery, SETTINGS)}


def test_every_claim_supported_when_true() -> None:
    mix = {2: 0.4, 3: 0.5, 5: 0.6, 8: 0.8, 10: 0.85}
    fixed = {2: 0.05, 3: 0.2, 5: 0.5, 8: 0.85, 10: 0.6}
    episodes = _episodes({"sft": BASE, "fixed": {**fixed, 3: 0.2, 8: 0.85}, "budgetmix": mix,
                          "budgetmix_process": {b: min(r + 0.15, 1.0) for b, r in mix.items()}})  # fmt: skip
    probes = _probes({"sft": 0.6, "fixed": 0.6}, states=300)
    recovery = _recovery({"sft": {0: 0.5, 1: 0.2, 2: 0.1, 3: 0.05}, "fixed": {0: 0.5, 1: 0.5, 2: 0.45, 3: 0.4}})
    verdicts = _verdicts(episodes, probes, recovery)
    assert verdicts == dict.fromkeys(CLAIMS, "supported")


def test_every_claim_not_supported_when_false() -> None:
    # The RL gain grows as the budget tightens, BudgetMix is worse out of range, the process signal hurts,
    # RL is better at single steps and recovers worse after injected errors than at the control.
    growing = {2: 0.6, 3: 0.7, 5: 0.6, 8: 0.55, 10: 0.55}
    episodes = _episodes({"sft": _flat(0.5), "fixed": growing, "budgetmix": {**growing, 2: 0.3, 10: 0.3},
                          "budgetmix_process": {**growing, 2: 0.2, 10: 0.2}}, episodes=32)  # fmt: skip
    probes = _probes({"sft": 0.3, "fixed": 0.8})
    recovery = _recovery({"sft": dict.fromkeys(range(4), 0.5), "fixed": {0: 0.6, 1: 0.3, 2: 0.3, 3: 0.3}}, states=40)
    verdicts = _verdicts(episodes, probes, recovery)
    assert verdicts == dict.fromkeys(CLAIMS, "not_supported")


def test_small_effects_at_low_power_are_undecided() -> None:
    small = {2: 0.3, 3: 0.3, 5: 0.35, 8: 0.4, 10: 0.4}
    episodes = _episodes({"sft": _flat(0.3), "fixed": small, "budgetmix": {**small, 2: 0.4, 10: 0.5},
                          "budgetmix_process": {**small, 2: 0.45}}, tasks=4, episodes=4)  # fmt: skip
    probes = _probes({"sft": 0.5, "fixed": 0.5}, states=6)
    recovery = _recovery({"sft": {0: 0.5, 1: 0.4}, "fixed": {0: 0.5, 1: 0.5}}, states=4)
    verdicts = _verdicts(episodes, probes, recovery)
    assert verdicts == dict.fromkeys(CLAIMS, "undecided")


def test_single_step_and_recovery_say_when_rl_showed_no_gain() -> None:
    probes = _probes({"sft": 0.6, "fixed": 0.6}, states=300)
    recovery = _recovery({"sft": {0: 0.5, 1: 0.2}, "fixed": {0: 0.5, 1: 0.2}}, states=40)
    steady = {2: 0.05, 3: 0.05, 5: 0.5, 8: 0.95, 10: 0.95}
    unchanged = decide_claims(_episodes({"sft": steady, "fixed": steady}, tasks=40), probes, recovery, SETTINGS)
    gains = unchanged[0]["gains"]
    assert set(gains) == {"3", "8"} and all(abs(g["estimate"]) < 0.05 and g["high"] <= 0.05 for g in gains.values())
    assert [c["claim"] for c in unchanged if "context" in c] == ["single_step", "recovery"]
    assert "RL showed no gain in Pass@1 at T=8" in unchanged[1]["context"]
    improved = decide_claims(_episodes({"sft": BASE, "fixed": SHRINKING}, tasks=40), probes, recovery, SETTINGS)
    assert improved[0]["gains"]["8"]["low"] > 0.2 and not any("context" in c for c in improved)
    lines = claims_markdown(unchanged, training_seeds=3)
    assert any(line.startswith("- RL gain over the base, Δ(T) (95%): T=3 ") for line in lines)
    assert any(line.startswith("- single_step: RL showed no gain in Pass@1") for line in lines)


def test_the_k0_control_cancels_a_uniform_recovery_advantage() -> None:
    # RL recovers more at every k, including k=0 where nothing was injected: the control removes it.
    recovery = _recovery({"sft": dict.fromkeys(range(4), 0.3), "fixed": dict.fromkeys(range(4), 0.7)}, states=30)
    claim = decide_claims([], [], recovery, SETTINGS)[2]
    assert claim["claim"] == "recovery" and claim["verdict"] != "supported"
    assert abs(claim["estimate"]) < 0.1 and claim["per_k"]["0"]["fixed"] > 0.6


@pytest.mark.parametrize("outcome", [False, True])
def test_a_saturated_claim_is_undecided_not_decided_by_its_zero_width_interval(outcome: bool) -> None:
    # Every probe action judged wrong (or right) for both agents: the interval is [0, 0] and would pass the
    # equivalence test by construction (a Cooking study's probes, 2026-12-05).
    probes = [
        {"agent": a, "seed": 0, "state_id": f"s{i}", "correct": outcome} for a in ("sft", "fixed") for i in range(10)
    ]
    claim = decide_claims([], probes, [], SETTINGS)[1]
    assert claim["claim"] == "single_step" and claim["interval"]["half_width"] == 0.0
    assert claim["verdict"] == "undecided"
    assert claim["reason"].startswith(f"saturated: every outcome in its cells is {int(outcome)}")
    json.dumps(claim)
    varied = [{**record, "correct": record["state_id"] != "s0"} for record in probes]
    assert "saturated" not in decide_claims([], varied, [], SETTINGS)[1]


def test_missing_arms_are_undecided_with_a_reason_and_json_ready() -> None:
    claims = decide_claims(_episodes({"sft": BASE, "fixed": SHRINKING}, tasks=3, episodes=4), [], [], SETTINGS)
    by_name = {c["claim"]: c for c in claims}
    assert by_name["process_supervision"]["verdict"] == "undecided"
    assert (
        by_name["process_supervision"]["reason"] == "no records of budgetmix, budgetmix_process: arm or stage not run"
    )
    assert by_name["budget_dependence"]["sizes"]["fixed T=8"] == {"seeds": 3, "tasks": 3, "episodes": 4}
    json.dumps(claims)


def test_outcome_cells_keep_shared_units_and_rectangular_episodes() -> None:
    records = [{"agent": "a", "seed": 0, "task_id": "x", "won": 1}] * 3 + [
        {"agent": "b", "seed": 0, "task_id": "x", "won": 0},
        {"agent": "b", "seed": 0, "task_id": "y", "won": 0},
    ]
    cells = outcome_cells(records, ["agent"], "task_id", "won")
    assert cells[("a",)].shape == cells[("b",)].shape == (1, 1, 1)
    with pytest.raises(DataError, match="needs"):
        outcome_cells([{"agent": "a"}], ["agent"], "task_id", "won")
