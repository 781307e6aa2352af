"""The study (``agentgym-budget study``): train an SFT base and RL arms, evaluate them on held-out tasks, decide claims.

It trains *and* evaluates and writes one report, so it stands on its own floor above :mod:`agentgym_budget.train`
and :mod:`agentgym_budget.eval`, one module per step:

* :mod:`~agentgym_budget.study.run`: :class:`~agentgym_budget.study.run.StudyConfig` and
  :func:`~agentgym_budget.study.run.run_study`, the stages in order, resumable, with their time;
* :mod:`~agentgym_budget.study.presets`: the named sizes (``smoke``, ``quick``, ``tiny``, ``default``, ...);
* :mod:`~agentgym_budget.study.arms`: the RL arms and the training recipe of each;
* :mod:`~agentgym_budget.study.evaluation`: Pass@(K,T), probes and recovery of every checkpoint on test tasks,
  and the tables ``study.json`` takes from them;
* :mod:`~agentgym_budget.study.claims`: the method's claims decided over training seeds, tasks and episodes;
* :mod:`~agentgym_budget.study.report` and :mod:`~agentgym_budget.study.figures`: ``study.md`` and its figures.

May import: :mod:`agentgym_budget.train`, :mod:`agentgym_budget.integrations`, :mod:`agentgym_budget.eval`,
:mod:`agentgym_budget.runner`, :mod:`agentgym_budget.agents`, :mod:`agentgym_budget.stats`,
:mod:`agentgym_budget.tasks` and the layers below. Only the CLI imports it. Nothing is re-exported here, so
``import agentgym_budget.study.presets`` (what the command line reads at start) loads neither torch nor TRL.
"""

__all__: list[str] = []
