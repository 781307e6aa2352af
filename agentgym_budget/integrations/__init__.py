"""Plug-ins for RL libraries: one module per library, each importing its library only when used.

* :mod:`~agentgym_budget.integrations.openenv`: OpenEnv server (``agentgym-budget serve``) and client.
* :mod:`~agentgym_budget.integrations.trl`: TRL ``GRPOTrainer(environment_factory=...)`` environments.
* :mod:`~agentgym_budget.integrations.skyrl`: a SkyRL-gym text env and its registration.
* :mod:`~agentgym_budget.integrations.verifiers`: verifiers' ``openenv`` taskset against the server.
* :mod:`~agentgym_budget.integrations.verl`: a verl multi-turn agent loop (one episode per dataset row),
  with :mod:`~agentgym_budget.integrations.verl_data` for its rows (in its own venv: extra ``verl``).
* :mod:`~agentgym_budget.runner.ray_cluster`: connecting to a Ray cluster (a local one, or an
  existing one with this package shipped to its workers).
* :mod:`~agentgym_budget.integrations.ray_rollouts`: rollouts in Ray actors, built from an env
  configuration, continuing from one snapshot shipped once through the object store.

They share :mod:`~agentgym_budget.integrations.session` (the episode mapping: env stack, budget,
BudgetMix, reward, task selection), :mod:`~agentgym_budget.integrations.pool` (sessions reused across
episodes, from any thread) and :mod:`~agentgym_budget.agents.actions` (free-text model
output to one command). A missing library raises
:class:`~agentgym_budget.errors.MissingDependencyError` naming the extra to install
(``pip install "agentgym-budget[openenv]"``, ``[trl]``, ``[skyrl]``, ``[verifiers]``, ``[ray]``, ``[verl]``).
The evaluation commands run on Ray through :class:`~agentgym_budget.runner.ray_executor.RayBackend`
(``--backend ray``).

The room for RL-library plug-ins; a new one is one module here that imports its library inside the
functions that need it, plus an extra in ``pyproject.toml``.

May import: the front door (:mod:`agentgym_budget`, to register the ids), :mod:`agentgym_budget.runner`,
:mod:`agentgym_budget.agents`, :mod:`agentgym_budget.chat`, the wrappers and the layers below. Only
training and the CLI import it.
"""

__all__: list[str] = []
