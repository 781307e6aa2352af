"""Storage: what the package reads from and writes to disk, and what it keeps in memory between episodes.

* :mod:`~agentgym_budget.storage.cache`: the on-disk cache of generated games, catalogs and indexes
  (SHA-256 manifests, entries rebuilt when damaged, cross-process locks).
* :mod:`~agentgym_budget.storage.safe_json`: the size-capped, non-blocking reader for untrusted files.
* :mod:`~agentgym_budget.storage.memory_cache` and :mod:`~agentgym_budget.storage.game_cache_size`: the
  in-process caches of loaded games and how large they may grow.

May import: :mod:`agentgym_budget.errors` and :mod:`agentgym_budget._internal` only.
"""

__all__: list[str] = []
