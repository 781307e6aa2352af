"""Plug-ins for RL libraries: one module per library, each importing its library only when used.

* :mod:`~agentgym_budget.integrations.ray_cluster`: connecting to a Ray cluster (a local one, or an
  existing one with this package shipped to its workers).
* :mod:`~agentgym_budget.integrations.ray_rollouts`: rollouts in Ray actors, built from an env
  configuration, continuing from one snapshot shipped once through the object store.

The evaluation commands run on Ray through :class:`~agentgym_budget.eval.ray_executor.RayBackend`
(``--backend ray``). A missing library raises :class:`~agentgym_budget.errors.MissingDependencyError`
naming the extra to install (``pip install "agentgym-budget[ray]"``).
"""

__all__: list[str] = []
