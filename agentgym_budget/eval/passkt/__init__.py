"""Pass@(K,T): the grid of success within K tries of T turns each.

* :mod:`~agentgym_budget.eval.passkt.plan`: the configuration, its episodes and jobs, the run;
* :mod:`~agentgym_budget.eval.passkt.worker`: playing a job in a worker;
* :mod:`~agentgym_budget.eval.passkt.summary`, :mod:`~agentgym_budget.eval.passkt.tables`,
  :mod:`~agentgym_budget.eval.passkt.plots`, :mod:`~agentgym_budget.eval.passkt.report`: grids, text
  tables, figures, reports of an existing run.
"""

from agentgym_budget.eval.passkt.config import PassKTConfig as PassKTConfig
from agentgym_budget.eval.passkt.plan import PassKTRun as PassKTRun
from agentgym_budget.eval.passkt.plan import run_passkt as run_passkt

__all__: list[str] = []
