"""Keyed integrity for snapshots that cross a trust boundary (an HMAC with a key the user supplies).

The digest in every snapshot (:mod:`~agentgym_budget.snapshots.codec`) is an *unkeyed* BLAKE2b: it
catches truncation and accidental corruption in transit, but anyone who edits a snapshot can
recompute it, so it does not say who wrote the bytes. Restoring never runs code from a snapshot and
every layer checks its part before anything is set (a TextWorld state against its story,
:mod:`~agentgym_budget.tasks.textworld.zstate`, and against a replay of its own actions,
:mod:`~agentgym_budget.tasks.textworld.verify`), so an edited snapshot is refused or yields some
*legal* state of the game, but a legal state chosen by someone else (a won game, a high score) is
still possible. When snapshots travel through storage or a network you do not control, set a key:

* :func:`use_key` (in every process), or the environment variable ``AGENTGYM_BUDGET_SNAPSHOT_KEY``
  (e.g. in a Ray job's ``runtime_env``), read at each call. An empty variable means no key (a warning
  says so, once per process).

With a key, every snapshot written is sealed: ``b"AGBSEAL\\0"``, an HMAC-SHA256 of the snapshot under
the key (32 bytes), then the snapshot. Reading then requires a seal made with the same key; an
unsealed or wrongly sealed snapshot raises :class:`~agentgym_budget.errors.SnapshotMismatchError`.
Without a key, unsealed snapshots are read as before and sealed ones are refused (with a hint).
States cache their bytes (``to_bytes``), so set the key before taking snapshots.

Example:
    >>> sealed = seal(b"AGBSNAP\\0...", key=b"job-42 secret")
    >>> bytes(unseal(sealed, key=b"job-42 secret"))
    b'AGBSNAP\\x00...'
    >>> unseal(sealed, key=b"another key")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.SnapshotMismatchError: This snapshot's seal does not match the configured snapshot key (edited, or sealed with another key).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import warnings

from agentgym_budget.errors import InvalidOptionError, SnapshotMismatchError

__all__ = ["seal", "unseal", "use_key"]

ENV_VAR = "AGENTGYM_BUDGET_SNAPSHOT_KEY"
"""The environment variable whose value, when set, is the key that seals and checks snapshots."""
SEAL_MAGIC = b"AGBSEAL\x00"
"""The first bytes of a sealed snapshot (an HMAC over the snapshot follows them)."""
_MAC_BYTES = 32
_key: bytes | None = None


def use_key(key: bytes | str | None) -> None:
    """Seal and require seals on snapshots with ``key`` in this process (``None``: back to the variable).

    Raises:
        InvalidOptionError: ``key`` is empty or not ``bytes``/``str``.
    """
    global _key
    if key is not None and (not isinstance(key, bytes | str) or not key):
        raise InvalidOptionError(f"A snapshot key must be non-empty bytes or str, got {type(key).__name__}.")
    _key = key.encode("utf-8") if isinstance(key, str) else key


def current_key() -> bytes | None:
    """The key set by :func:`use_key`, else ``AGENTGYM_BUDGET_SNAPSHOT_KEY``'s value, else ``None``."""
    if _key is not None:
        return _key
    value = os.environ.get(ENV_VAR)
    if value == "":
        _warn_empty()
    return value.encode("utf-8") if value else None


@functools.cache
def _warn_empty() -> None:
    warnings.warn(
        f"{ENV_VAR} is set but empty: an empty key means no key, so snapshots are neither sealed nor required to "
        "be (unset it, or give it a secret value).",
        UserWarning,
        stacklevel=4,
    )


def _mac(data: bytes | memoryview, key: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


def seal(data: bytes, key: bytes | None = None) -> bytes:
    """``data`` sealed with ``key`` (default: :func:`current_key`); unchanged when there is no key."""
    key = key if key is not None else current_key()
    return data if key is None else SEAL_MAGIC + _mac(data, key) + data


def unseal(data: bytes | memoryview, key: bytes | None = None) -> bytes | memoryview:
    """The snapshot inside ``data``, after checking its seal against ``key`` (default: :func:`current_key`).

    Raises:
        SnapshotMismatchError: A key is set and ``data`` is unsealed or sealed otherwise, or no key is set
            and ``data`` is sealed.
    """
    key = key if key is not None else current_key()
    view = memoryview(data).cast("B")
    sealed = bytes(view[: len(SEAL_MAGIC)]) == SEAL_MAGIC
    if key is None:
        if sealed:
            raise SnapshotMismatchError(
                f"This snapshot is sealed with a key, and none is configured: call "
                f"agentgym_budget.snapshots.keys.use_key(KEY) or set {ENV_VAR}."
            )
        return data
    if not sealed:
        raise SnapshotMismatchError(
            "This snapshot is not sealed, and a snapshot key is configured: only snapshots sealed with the key "
            "are restored (take it again in a process with the key)."
        )
    start = len(SEAL_MAGIC) + _MAC_BYTES
    if len(view) < start or not hmac.compare_digest(bytes(view[len(SEAL_MAGIC) : start]), _mac(view[start:], key)):
        raise SnapshotMismatchError(
            "This snapshot's seal does not match the configured snapshot key (edited, or sealed with another key)."
        )
    return view[start:]
