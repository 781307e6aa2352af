"""The seed of every episode of a run: one function of the run's seed, the task and the sample.

Every analysis (Pass@(K,T), probes, recovery) and the training data seed their episodes with
:func:`episode_seed`, so the same run seed plays the same episodes whatever the budget, the agent, the
backend or the order in which workers take the jobs.
"""

from __future__ import annotations

import hashlib

__all__ = ["episode_seed"]


def episode_seed(seed: int, task_id: str, sample: int) -> int:
    """Seed of sample ``sample`` of ``task_id`` in a run seeded with ``seed`` (independent of T and agent).

    Example:
        >>> episode_seed(0, "coin-l1-3", 2) == episode_seed(0, "coin-l1-3", 2) != episode_seed(1, "coin-l1-3", 2)
        True
    """
    digest = hashlib.sha256(f"{seed}|{task_id}|{sample}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % (2**31 - 1)
