"""Evaluation: the estimator, the analyses, and what they share.

* :mod:`.estimator`: unbiased pass@k, intervals over tasks (expanded BCa bootstrap; paired Student-t);
* :mod:`.process_signal`: how informative the ``progress`` signal is; :mod:`.figures`: figure helpers;
* :mod:`.passkt`: the Pass@(K,T) grid, its modes and resume, summaries, tables, plots, reports;
* :mod:`.probes`: single-step decision probes from shared states;
* :mod:`.recovery`: forced-error and natural recovery probes.

Each analysis runs on :mod:`agentgym_budget.runner` (environments, episodes, workers, the run's files).

The room for analyses of agents on the environments; a new evaluation is a subpackage here with a config, a
plan on :mod:`agentgym_budget.runner.skeleton`, a worker and a summary, plus a ``cmd_<name>.py`` in the CLI.

May import: :mod:`agentgym_budget.runner`, :mod:`agentgym_budget.prepare`, :mod:`agentgym_budget.agents`,
:mod:`agentgym_budget.stats` and the layers below (wrappers, snapshots, core, registration, errors). The
RL plug-ins, training, the study and the CLI import it; it imports none of them.

Example:
    >>> from agentgym_budget.eval import pass_at_k
    >>> round(pass_at_k(n=8, c=2, k=4), 4)
    0.7857
"""

from __future__ import annotations

from agentgym_budget.eval.estimator import (
    bootstrap_ci as bootstrap_ci,
)
from agentgym_budget.eval.estimator import (
    mean_pass_at_k as mean_pass_at_k,
)
from agentgym_budget.eval.estimator import (
    paired_bootstrap_ci as paired_bootstrap_ci,
)
from agentgym_budget.eval.estimator import (
    paired_ci as paired_ci,
)
from agentgym_budget.eval.estimator import (
    pass_at_k as pass_at_k,
)
from agentgym_budget.eval.passkt.config import PassKTConfig as PassKTConfig
from agentgym_budget.eval.passkt.plan import PassKTRun as PassKTRun
from agentgym_budget.eval.passkt.plan import run_passkt as run_passkt
from agentgym_budget.eval.passkt.report import report as report
from agentgym_budget.eval.passkt.summary import Summary as Summary
from agentgym_budget.eval.passkt.summary import summarize as summarize
from agentgym_budget.eval.probes.plan import ProbeConfig as ProbeConfig
from agentgym_budget.eval.probes.plan import ProbeRun as ProbeRun
from agentgym_budget.eval.probes.plan import run_probe as run_probe
from agentgym_budget.eval.recovery.config import RecoveryConfig as RecoveryConfig
from agentgym_budget.eval.recovery.plan import RecoveryRun as RecoveryRun
from agentgym_budget.eval.recovery.plan import run_recovery as run_recovery

__all__: list[str] = []
