"""Evaluation: Pass@(K,T) runs and the pieces other evaluation commands share.

* :mod:`.estimator`: unbiased pass@k, bootstrap intervals over tasks (plain and paired);
* :mod:`.rollout`: environment references, env pools, playing one episode (sync or async agents);
* :mod:`.store`: the crash-safe JSONL log with resume, atomic summary writes;
* :mod:`.pool`: parallel worker processes streaming results back one by one;
* :mod:`.passkt` (with :mod:`.passkt_worker`): the Pass@(K,T) grid, its modes and resume;
* :mod:`.summary`, :mod:`.tables`, :mod:`.plots`, :mod:`.report`: grids, text tables, figures, reports;
* :mod:`.probe` (with :mod:`.probe_states`, :mod:`.judge`, :mod:`.probe_worker`, :mod:`.probe_summary`):
  single-step decision probes from shared states;
* :mod:`.recovery` (with :mod:`.recovery_worker`, :mod:`.recovery_summary`, :mod:`.natural_recovery`):
  forced-error and natural recovery probes; :mod:`.process_signal`: how informative ``progress`` is;
  :mod:`.probe_plots`: their figures.

Example:
    >>> from agentgym_budget.eval import pass_at_k
    >>> round(pass_at_k(n=8, c=2, k=4), 4)
    0.7857
"""

from __future__ import annotations

from agentgym_budget.eval.estimator import bootstrap_ci, mean_pass_at_k, paired_bootstrap_ci, pass_at_k
from agentgym_budget.eval.passkt import MODES, PassKTConfig, PassKTRun, episode_seed, run_passkt
from agentgym_budget.eval.probe import ProbeConfig, ProbeRun, run_probe
from agentgym_budget.eval.recovery import RecoveryConfig, RecoveryRun, run_recovery
from agentgym_budget.eval.report import report
from agentgym_budget.eval.rollout import EnvPool, EnvRef, EpisodeResult, play_episode, run_episode
from agentgym_budget.eval.store import JsonlStore, atomic_write_json, atomic_write_text
from agentgym_budget.eval.summary import DEFINITION, Summary, summarize

__all__ = [
    "DEFINITION",
    "MODES",
    "EnvPool",
    "EnvRef",
    "EpisodeResult",
    "JsonlStore",
    "PassKTConfig",
    "PassKTRun",
    "ProbeConfig",
    "ProbeRun",
    "RecoveryConfig",
    "RecoveryRun",
    "Summary",
    "atomic_write_json",
    "atomic_write_text",
    "bootstrap_ci",
    "episode_seed",
    "mean_pass_at_k",
    "paired_bootstrap_ci",
    "pass_at_k",
    "play_episode",
    "report",
    "run_episode",
    "run_passkt",
    "run_probe",
    "run_recovery",
    "summarize",
]
