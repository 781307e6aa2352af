"""agentgym-budget: train and evaluate LLM agents on multi-turn text tasks under turn budgets.

Importing the package registers every environment id with Gymnasium::

    import gymnasium as gym
    import agentgym_budget
    from agentgym_budget.wrappers import StateSnapshot, TurnBudget

    env = StateSnapshot(TurnBudget(gym.make("agentgym_budget/TextWorld-Cooking-v0"), max_turns=20))
    obs, info = env.reset(seed=7)
"""

from __future__ import annotations

from agentgym_budget import tasks
from agentgym_budget._version import __version__
from agentgym_budget.env import TextEnv, Turn
from agentgym_budget.registration import NAMESPACE, env_info, make, registered_ids
from agentgym_budget.snapshot import clone, get_state, set_state
from agentgym_budget.state import EnvState

__all__ = [
    "NAMESPACE",
    "EnvState",
    "TextEnv",
    "Turn",
    "__version__",
    "clone",
    "env_info",
    "get_state",
    "make",
    "registered_ids",
    "set_state",
    "tasks",
]
