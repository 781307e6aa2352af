"""Single-step decision probes from states shared by every agent.

* :mod:`~agentgym_budget.eval.probes.states`: reference trajectories and the probe states on them;
* :mod:`~agentgym_budget.eval.probes.judge`: judging one decision (expert agreement, continuations);
* :mod:`~agentgym_budget.eval.probes.plan`: the configuration, its jobs, the run;
* :mod:`~agentgym_budget.eval.probes.worker`, :mod:`~agentgym_budget.eval.probes.summary`,
  :mod:`~agentgym_budget.eval.probes.plots`: playing a job, the summary, the figure.
"""

from agentgym_budget.eval.probes.plan import ProbeConfig as ProbeConfig
from agentgym_budget.eval.probes.plan import ProbeRun as ProbeRun
from agentgym_budget.eval.probes.plan import run_probe as run_probe

__all__: list[str] = []
