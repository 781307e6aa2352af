"""Evaluation: the estimator, the analyses, and what they share.

* :mod:`.estimator`: unbiased pass@k, intervals over tasks (expanded BCa bootstrap; paired Student-t);
* :mod:`.process_signal`: how informative the ``progress`` signal is; :mod:`.figures`: figure helpers;
* :mod:`.passkt`: the Pass@(K,T) grid, its modes and resume, summaries, tables, plots, reports;
* :mod:`.probes`: single-step decision probes from shared states;
* :mod:`.recovery`: forced-error and natural recovery probes.

Each analysis runs on :mod:`agentgym_budget.runner` (environments, episodes, workers, the run's files).

Example:
    >>> from agentgym_budget.eval import pass_at_k
    >>> round(pass_at_k(n=8, c=2, k=4), 4)
    0.7857
"""

from __future__ import annotations

from agentgym_budget.eval.estimator import bootstrap_ci, mean_pass_at_k, paired_bootstrap_ci, paired_ci, pass_at_k
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import PassKTRun, run_passkt
from agentgym_budget.eval.passkt.report import report
from agentgym_budget.eval.passkt.summary import Summary, summarize
from agentgym_budget.eval.probes.plan import ProbeConfig, ProbeRun, run_probe
from agentgym_budget.eval.recovery.config import RecoveryConfig
from agentgym_budget.eval.recovery.plan import RecoveryRun, run_recovery

__all__ = [
    "PassKTConfig",
    "PassKTRun",
    "ProbeConfig",
    "ProbeRun",
    "RecoveryConfig",
    "RecoveryRun",
    "Summary",
    "bootstrap_ci",
    "mean_pass_at_k",
    "paired_bootstrap_ci",
    "paired_ci",
    "pass_at_k",
    "report",
    "run_passkt",
    "run_probe",
    "run_recovery",
    "summarize",
]
