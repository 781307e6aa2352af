"""Statistics of the study: intervals with checked coverage, hierarchical bootstrap, claims and verdicts.

May import: :mod:`agentgym_budget.errors` only (and numpy). It sits in the agents/chat/stats layer: the
runner, the evaluations, training and the study use it.
"""

from agentgym_budget.stats.claims import (
    CLAIMS as CLAIMS,
)
from agentgym_budget.stats.claims import (
    ClaimSettings as ClaimSettings,
)
from agentgym_budget.stats.claims import (
    decide_claims as decide_claims,
)
from agentgym_budget.stats.hierarchical import (
    ContrastResult as ContrastResult,
)
from agentgym_budget.stats.hierarchical import (
    contrast_interval as contrast_interval,
)
from agentgym_budget.stats.hierarchical import (
    interaction_weights as interaction_weights,
)
from agentgym_budget.stats.intervals import (
    Interval as Interval,
)
from agentgym_budget.stats.intervals import (
    bca_interval as bca_interval,
)
from agentgym_budget.stats.intervals import (
    bootstrap_p_value as bootstrap_p_value,
)
from agentgym_budget.stats.intervals import (
    check_confidence as check_confidence,
)
from agentgym_budget.stats.intervals import (
    equivalence_verdict as equivalence_verdict,
)
from agentgym_budget.stats.intervals import (
    holm_adjust as holm_adjust,
)
from agentgym_budget.stats.intervals import (
    paired_difference as paired_difference,
)
from agentgym_budget.stats.intervals import (
    task_rate_interval as task_rate_interval,
)
from agentgym_budget.stats.intervals import (
    wilson_interval as wilson_interval,
)

__all__: list[str] = []
