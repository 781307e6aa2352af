"""Recovery probes: forced wrong actions from shared states, and natural recovery from the agent's own errors.

* :mod:`~agentgym_budget.eval.recovery.plan`: the configuration, its jobs, the run;
* :mod:`~agentgym_budget.eval.recovery.worker`: playing a job in a worker;
* :mod:`~agentgym_budget.eval.recovery.natural`: the agent's own errors and whether it recovered;
* :mod:`~agentgym_budget.eval.recovery.summary`, :mod:`~agentgym_budget.eval.recovery.plots`: the summary, the figure.

Recovery starts from the probes' reference states (:mod:`agentgym_budget.eval.probes`).
"""

from agentgym_budget.eval.recovery.config import RecoveryConfig as RecoveryConfig
from agentgym_budget.eval.recovery.plan import RecoveryRun as RecoveryRun
from agentgym_budget.eval.recovery.plan import run_recovery as run_recovery

__all__: list[str] = []
