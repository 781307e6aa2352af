"""agentgym-budget: train and evaluate LLM agents on multi-turn text tasks under turn budgets.

Importing the package registers every environment id with Gymnasium::

    import gymnasium as gym
    import agentgym_budget
    from agentgym_budget.wrappers import StateSnapshot, TurnBudget

    env = StateSnapshot(TurnBudget(gym.make("agentgym_budget/TextWorld-Cooking-v0"), max_turns=20))
    obs, info = env.reset(seed=7)

The names of this module are what user code writes; the full list of public names, module by
module, is ``docs/public-api.md``. The wrappers, the agent protocol and the evaluation entry points
are imported when first used, so ``import agentgym_budget`` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentgym_budget import tasks
from agentgym_budget._internal import moved
from agentgym_budget._internal.numerics import keep_matrix_products_reproducible
from agentgym_budget._version import __version__
from agentgym_budget.core.env import TextEnv
from agentgym_budget.core.turn import Turn
from agentgym_budget.errors import AgentGymBudgetError
from agentgym_budget.registration import NAMESPACE as NAMESPACE
from agentgym_budget.registration import env_info, make, registered_ids
from agentgym_budget.snapshots import EnvState, clone, get_state, set_state

moved.install()  # the module paths of earlier releases still import, with a DeprecationWarning
keep_matrix_products_reproducible()  # before a model library's first matrix product: --threads changes no bits

_LAZY = {
    "BudgetMix": "agentgym_budget.wrappers",
    "ProcessReward": "agentgym_budget.wrappers",
    "StateSnapshot": "agentgym_budget.wrappers",
    "TurnBudget": "agentgym_budget.wrappers",
    "Agent": "agentgym_budget.agents",
    "AsyncAgent": "agentgym_budget.agents",
    "parse_agent": "agentgym_budget.agents",
    "register_agent": "agentgym_budget.agents",
    "EnvRef": "agentgym_budget.runner",
    "pass_at_k": "agentgym_budget.eval",
    "PassKTConfig": "agentgym_budget.eval",
    "run_passkt": "agentgym_budget.eval",
    "ProbeConfig": "agentgym_budget.eval",
    "run_probe": "agentgym_budget.eval",
    "RecoveryConfig": "agentgym_budget.eval",
    "run_recovery": "agentgym_budget.eval",
}
"""Public names imported on first use, and the module that defines them."""

__all__ = [
    "Agent",
    "AgentGymBudgetError",
    "AsyncAgent",
    "BudgetMix",
    "EnvRef",
    "EnvState",
    "PassKTConfig",
    "ProbeConfig",
    "ProcessReward",
    "RecoveryConfig",
    "StateSnapshot",
    "TextEnv",
    "Turn",
    "TurnBudget",
    "__version__",
    "clone",
    "env_info",
    "get_state",
    "make",
    "parse_agent",
    "pass_at_k",
    "register_agent",
    "registered_ids",
    "run_passkt",
    "run_probe",
    "run_recovery",
    "set_state",
    "tasks",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if f"agentgym_budget.{name}" in moved.MOVED_MODULES:
        return importlib.import_module(f"agentgym_budget.{name}")
    raise AttributeError(f"module 'agentgym_budget' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
