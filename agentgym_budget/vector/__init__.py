"""Vector and group envs over agentgym-budget ids.

* :class:`~agentgym_budget.vector.batch.BatchVectorEnv`: the one vector base (batching, autoreset modes,
  seeds, ``reset_mask`` and per-env options); its subclasses only say how a sub-env starts.
* :class:`~agentgym_budget.vector.text_vector_env.TextVectorEnv`: ``gym.make_vec(id, num_envs=n)``
  in one process, with Gymnasium's autoreset modes and per-env options.
* :class:`~agentgym_budget.vector.group_vector.GroupVectorEnv`: a vector env whose starts are forks, so
  the G members of a group share one exact start (GRPO-style groups).
* :class:`~agentgym_budget.vector.group.Group` and :func:`~agentgym_budget.vector.options.reset_each`:
  one group of forks, and a different reset per sub-env of any Gymnasium vector env.

May import: the wrappers, :mod:`agentgym_budget.snapshots`, :mod:`agentgym_budget.core` and
:mod:`agentgym_budget.errors`. Nothing below it imports this room (the registry loads it by name).
"""

from agentgym_budget.vector.options import reset_each

__all__ = ["reset_each"]
