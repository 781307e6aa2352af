"""The projection of the sizes that would decide a claim, checked by simulating the claims' own decision rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.stats.claims import ClaimSettings, _verdict
from agentgym_budget.stats.intervals import Interval
from agentgym_budget.stats.power import growth_to_decide

_NORMAL_Z = {0.9: 1.6448536, 0.95: 1.9599640}


def _decided_share(claim: dict, growth: float, tested: int, runs: int = 4000) -> float:
    """Share of simulated studies ``growth`` times this one's size, true contrast = the estimate, that decide it.

    Each run draws a normal estimate with the projected standard error, builds the interval and a two-sided
    p-value, adjusts it at Holm's strictest step (x tested) and asks the study's own verdict rule.
    """
    rng = np.random.default_rng(7)
    confidence = claim["interval"]["confidence"]
    error = claim["interval"]["half_width"] / _NORMAL_Z[confidence] / np.sqrt(growth)
    settings = ClaimSettings()
    decided = 0
    for estimate in rng.normal(claim["estimate"], error, size=runs):
        half = _NORMAL_Z[confidence] * error
        z = abs(estimate) / error
        p_value = math.erfc(z / math.sqrt(2))  # two-sided normal p
        record = {"claim": claim["claim"], "holm_p": min(1.0, p_value * tested)}
        record["_interval"] = Interval(estimate, estimate - half, estimate + half, confidence, "normal")
        decided += _verdict(record, settings) != "undecided"
    return decided / runs


MEASURED = [  # the generation study's four measured claims (docs/results/study-generate.json, 2026-12-06)
    {"claim": "budget_dependence", "estimate": 0.039, "interval": {"half_width": 0.107, "confidence": 0.95}},
    {"claim": "single_step", "estimate": 0.037, "interval": {"half_width": 0.061, "confidence": 0.9}},
    {"claim": "recovery", "estimate": 0.0625, "interval": {"half_width": 0.094, "confidence": 0.95}},
    {"claim": "budgetmix_robustness", "estimate": -0.031, "interval": {"half_width": 0.084, "confidence": 0.95}},
    {"claim": "budget_dependence", "estimate": 0.0, "interval": {"half_width": 0.08, "confidence": 0.95}},
]


@pytest.mark.parametrize("claim", MEASURED, ids=lambda c: f"{c['claim']}{c['estimate']:+}")
def test_the_projected_growth_decides_with_the_wanted_power_and_half_of_it_does_not(claim: dict) -> None:
    growth = growth_to_decide(claim, tested=4, power=0.8)
    assert growth is not None and growth > 1
    assert 0.77 <= _decided_share(claim, growth, tested=4) <= 0.83  # 4000 runs: Monte Carlo SE ~0.006
    assert _decided_share(claim, growth / 2, tested=4) < 0.7


def test_sizes_that_already_decide_need_no_growth_and_a_missing_interval_has_no_projection() -> None:
    decided = {"claim": "recovery", "estimate": 0.3, "interval": {"half_width": 0.05, "confidence": 0.95}}
    assert growth_to_decide(decided) == 1.0
    assert growth_to_decide({"claim": "recovery", "estimate": None, "interval": None}) is None
    on_margin = {"claim": "recovery", "estimate": 0.05, "interval": {"half_width": 0.1, "confidence": 0.95}}
    assert growth_to_decide(on_margin, margin=0.05) > 1  # on the margin, yet above 0: 'supported' remains
    equal = {"claim": "single_step", "estimate": 0.05, "interval": {"half_width": 0.1, "confidence": 0.9}}
    assert growth_to_decide(equal, margin=0.05, power=0.99) > growth_to_decide(equal, margin=0.05, power=0.5)


@pytest.mark.parametrize("bad", [{"power": 1.0}, {"alpha": 0.0}, {"margin": 0.0}, {"tested": 0}])
def test_settings_outside_their_range_are_refused_with_what_was_given(bad: dict) -> None:
    claim = {"claim": "recovery", "estimate": 0.1, "interval": {"half_width": 0.1, "confidence": 0.95}}
    with pytest.raises(InvalidOptionError, match=f"{next(iter(bad))}={next(iter(bad.values()))!r}"):
        growth_to_decide(claim, **bad)
