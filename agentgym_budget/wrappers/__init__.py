"""Wrappers for turn budgets and shared-state snapshots.

* :class:`TurnBudget`: hard cap on turns (truncation, never termination), optionally shown to the agent.
* :class:`BudgetMix`: draw each episode's budget from a distribution (over a ``TurnBudget``).
* :class:`StateSnapshot`: ``snapshot()`` / ``restore()`` / ``fork(n)`` through every wrapper.
* :class:`ProcessReward`: potential-based shaping from ``progress``, optional invalid-action cost.

Every wrapper here records its constructor arguments and its own part of a snapshot
(``get_wrapper_state`` / ``set_wrapper_state``), so stacks built from them can be
snapshotted and forked.

May import: :mod:`agentgym_budget.core`, :mod:`agentgym_budget.snapshots`, :mod:`agentgym_budget.errors`
and the layers below. Vector envs, the runner, the evaluations, the plug-ins and training import it; task
families do not (a family's env is the base the wrappers wrap).
"""

from agentgym_budget.wrappers.budget_mix import BudgetMix as BudgetMix
from agentgym_budget.wrappers.budget_mix import BudgetSampler as BudgetSampler
from agentgym_budget.wrappers.process_reward import ProcessReward as ProcessReward
from agentgym_budget.wrappers.state_snapshot import StateSnapshot as StateSnapshot
from agentgym_budget.wrappers.turn_budget import TurnBudget as TurnBudget

__all__: list[str] = []  # the names above are listed by the modules that define them (docs/public-api.md)
