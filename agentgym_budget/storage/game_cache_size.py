"""One setting for the per-process caches of parsed games (TextWorld and ALFWorld): megabytes kept.

Each game family keeps the games a process played in a :class:`~agentgym_budget.storage.memory_cache.MemoryCache`
bounded by an estimate of their bytes, so a process sampling thousands of tasks stays flat in
memory and reloads an evicted game from disk. ``$AGENTGYM_BUDGET_GAME_CACHE_MB`` sets the bound
of each family's cache (default 128); ``$AGENTGYM_BUDGET_ALFWORLD_CACHE_MB``, the older ALFWorld-only
name, is still read when the shared one is not set.

Example:
    >>> game_cache_bytes({"AGENTGYM_BUDGET_GAME_CACHE_MB": "64"}) == 64 * 2**20
    True
    >>> game_cache_bytes({}) == DEFAULT_GAME_CACHE_MB * 2**20
    True
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agentgym_budget.errors import InvalidOptionError

__all__ = ["GAME_CACHE_ENV_VAR", "game_cache_bytes"]

GAME_CACHE_ENV_VAR = "AGENTGYM_BUDGET_GAME_CACHE_MB"
"""Environment variable: megabytes of parsed games each family's cache keeps per process."""

LEGACY_ALFWORLD_CACHE_ENV_VAR = "AGENTGYM_BUDGET_ALFWORLD_CACHE_MB"
"""The former ALFWorld-only name of :data:`GAME_CACHE_ENV_VAR`, read when that one is unset."""

DEFAULT_GAME_CACHE_MB = 128.0


def game_cache_bytes(environ: Mapping[str, str] | None = None) -> int:
    """The bound of a game cache in bytes, from the environment (``os.environ`` by default).

    Raises:
        InvalidOptionError: The variable is set to something other than a non-negative number.
    """
    environ = os.environ if environ is None else environ
    for name in (GAME_CACHE_ENV_VAR, LEGACY_ALFWORLD_CACHE_ENV_VAR):
        text = environ.get(name, "").strip()
        if text:
            break
    else:
        return int(DEFAULT_GAME_CACHE_MB * 2**20)
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = -1.0
    if not megabytes >= 0:  # also rejects nan
        raise InvalidOptionError(f"${name} must be a non-negative number of megabytes, got {text!r}.")
    return int(megabytes * 2**20)
