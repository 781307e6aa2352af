"""Statistics of the study: intervals with checked coverage, hierarchical bootstrap, claims and verdicts.

Depends only on numpy and :mod:`agentgym_budget.errors` (the lowest layer), so every layer may use it.
"""

from agentgym_budget.stats.claims import CLAIMS, ClaimSettings, decide_claims
from agentgym_budget.stats.hierarchical import ContrastResult, contrast_interval, interaction_weights
from agentgym_budget.stats.intervals import (
    Interval,
    bca_interval,
    bootstrap_p_value,
    check_confidence,
    equivalence_verdict,
    holm_adjust,
    paired_difference,
    task_rate_interval,
    wilson_interval,
)

__all__ = [
    "CLAIMS",
    "ClaimSettings",
    "ContrastResult",
    "Interval",
    "bca_interval",
    "bootstrap_p_value",
    "check_confidence",
    "contrast_interval",
    "decide_claims",
    "equivalence_verdict",
    "holm_adjust",
    "interaction_weights",
    "paired_difference",
    "task_rate_interval",
    "wilson_interval",
]
