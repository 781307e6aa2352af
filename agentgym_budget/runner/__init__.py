"""What every evaluation run shares: environments, episodes, workers, the run's files.

* :mod:`~agentgym_budget.runner.env_args` and :mod:`~agentgym_budget.runner.rollout`: environment
  references (:class:`~agentgym_budget.runner.env_ref.EnvRef`), env pools, playing one episode;
* :mod:`~agentgym_budget.runner.seeds`: the seed of every episode of a run;
* :mod:`~agentgym_budget.runner.skeleton`: the one course every analysis's run takes;
* :mod:`~agentgym_budget.runner.pool` (worker processes), :mod:`~agentgym_budget.runner.ray_executor`
  and :mod:`~agentgym_budget.runner.ray_cluster` (Ray actors), :mod:`~agentgym_budget.runner.parent_watch`;
* :mod:`~agentgym_budget.runner.store` (the crash-safe JSONL log), :mod:`~agentgym_budget.runner.run_lock`,
  :mod:`~agentgym_budget.runner.records`, :mod:`~agentgym_budget.runner.validation` and
  :mod:`~agentgym_budget.runner.outputs` (summary files and plots written as one set, CSV).

The analyses of :mod:`agentgym_budget.eval` (Pass@(K,T), probes, recovery) plug into it; it imports none of them.

May import: :mod:`agentgym_budget.agents`, the wrappers, :mod:`agentgym_budget.registration`,
:mod:`agentgym_budget.storage`, :mod:`agentgym_budget.dependencies`, :mod:`agentgym_budget.errors` and the
layers below (it shares its layer with :mod:`agentgym_budget.prepare`).
"""

from agentgym_budget.runner.env_ref import EnvPool as EnvPool
from agentgym_budget.runner.env_ref import EnvRef as EnvRef
from agentgym_budget.runner.rollout import (
    EpisodeResult as EpisodeResult,
)
from agentgym_budget.runner.rollout import (
    play_episode as play_episode,
)
from agentgym_budget.runner.rollout import (
    run_episode as run_episode,
)
from agentgym_budget.runner.seeds import episode_seed as episode_seed
from agentgym_budget.runner.skeleton import Analysis as Analysis
from agentgym_budget.runner.skeleton import JobPlan as JobPlan
from agentgym_budget.runner.skeleton import run_analysis as run_analysis
from agentgym_budget.runner.store import JsonlStore as JsonlStore

__all__: list[str] = []
