"""What every evaluation run shares: environments, episodes, workers, the run's files.

* :mod:`~agentgym_budget.runner.env_args` and :mod:`~agentgym_budget.runner.rollout`: environment
  references (:class:`~agentgym_budget.runner.rollout.EnvRef`), env pools, playing one episode;
* :mod:`~agentgym_budget.runner.seeds`: the seed of every episode of a run;
* :mod:`~agentgym_budget.runner.pool` (worker processes), :mod:`~agentgym_budget.runner.ray_executor`
  and :mod:`~agentgym_budget.runner.ray_cluster` (Ray actors), :mod:`~agentgym_budget.runner.parent_watch`;
* :mod:`~agentgym_budget.runner.store` (the crash-safe JSONL log), :mod:`~agentgym_budget.runner.run_lock`,
  :mod:`~agentgym_budget.runner.records`, :mod:`~agentgym_budget.runner.validation` and
  :mod:`~agentgym_budget.runner.outputs` (summary files and plots written as one set, CSV).

The analyses of :mod:`agentgym_budget.eval` (Pass@(K,T), probes, recovery) plug into it; it imports none of them.
"""

__all__: list[str] = []
