"""On-disk cache for generated tasks and indexes, safe under concurrent processes.

The cache lives in ``$AGENTGYM_BUDGET_CACHE`` if set, else in
``$XDG_CACHE_HOME/agentgym-budget`` (``~/.cache/agentgym-budget`` by default).
Each entry is a directory named by a hash of every parameter that produced it
(plus the versions of the generating libraries, which the caller includes in the
key). :func:`cached_directory` builds an entry at most once: under a file lock,
into a temporary directory that is renamed into place atomically, so a crash
never leaves a half-written entry and concurrent processes never build it twice.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> calls = []
    >>> def build(path):
    ...     calls.append(1)
    ...     (path / "data.txt").write_text("hello")
    >>> entry = cached_directory("demo", {"size": 3}, build, root=root)
    >>> entry == cached_directory("demo", {"size": 3}, build, root=root), (entry / "data.txt").read_text(), len(calls)
    (True, 'hello', 1)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock

__all__ = ["CACHE_ENV_VAR", "cache_key", "cache_root", "cached_directory"]

CACHE_ENV_VAR = "AGENTGYM_BUDGET_CACHE"
"""Environment variable that overrides the cache location."""

_MANIFEST = "key.json"


def cache_root() -> Path:
    """The cache directory (see the module docstring); created if missing."""
    override = os.environ.get(CACHE_ENV_VAR)
    if override:
        root = Path(override).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        root = Path(base) / "agentgym-budget"
    root.mkdir(parents=True, exist_ok=True)
    return root


def cache_key(params: Mapping[str, Any]) -> str:
    """A short stable hash of ``params`` (JSON-serialisable, order-insensitive)."""
    blob = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def cached_directory(
    namespace: str,
    params: Mapping[str, Any],
    build: Callable[[Path], None],
    *,
    root: Path | None = None,
) -> Path:
    """Return the cache directory for ``params``, calling ``build(tmp_dir)`` only if it is missing.

    Args:
        namespace: Sub-directory of the cache (e.g. ``"textworld"``).
        params: Every parameter the content depends on; stored beside it as ``key.json``.
        build: Writes the entry's files into the (empty) directory it receives.
        root: Cache root; defaults to :func:`cache_root`.

    Returns:
        The path of the complete entry.
    """
    folder = (root or cache_root()) / namespace
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / cache_key(params)
    if (target / _MANIFEST).is_file():
        return target
    with FileLock(str(target) + ".lock"):
        if (target / _MANIFEST).is_file():
            return target
        scratch = Path(tempfile.mkdtemp(prefix=target.name + ".tmp-", dir=folder))
        try:
            build(scratch)
            (scratch / _MANIFEST).write_text(json.dumps(params, sort_keys=True, indent=1, default=str))
            if target.exists():
                shutil.rmtree(target)
            os.replace(scratch, target)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
    return target
