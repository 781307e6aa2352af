"""On-disk cache for generated tasks and indexes: safe under concurrent processes, verified on load.

The cache lives in ``$AGENTGYM_BUDGET_CACHE`` if set, else in
``$XDG_CACHE_HOME/agentgym-budget`` (``~/.cache/agentgym-budget`` by default).
Each entry is a directory named by a hash of every parameter that produced it
(plus the versions of the generating libraries, which the caller includes in the
key). :func:`cached_directory` builds an entry at most once: under a file lock,
into a temporary directory that is renamed into place atomically, so a crash
never leaves a half-written entry and concurrent processes never build it twice.

Integrity: every entry holds ``key.json`` (its parameters) and ``manifest.sha256`` (the
SHA-256 of every other file, in ``sha256sum`` format, written last). An entry is verified
against its manifest the first time a process uses it (hashing costs about 2 ms per MiB);
later uses in the same process only compare the files' ``stat`` (size, times, inode) with
what was verified. An entry that is missing a file, differs from its manifest or has no
manifest (made by an older version) is rebuilt, with a :class:`CacheRepairWarning` when it
was damaged. Scratch directories (``<entry>.tmp-*``) left by builds that were killed are
removed under the entry's lock, which a live builder holds for as long as it builds, so a
build in progress in another process or thread is never touched.

The manifest detects damage (truncation, junk, bit flips), not tampering: whoever can write
the cache can write a matching manifest. What protects against planted files is that no cache
entry is in a format whose loading runs code (see "Trust and safety" in the README).

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
    >>> _ = (entry / "data.txt").write_text("hellp")  # damaged: rebuilt on next use
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     entry = cached_directory("demo", {"size": 3}, build, root=root)
    >>> (entry / "data.txt").read_text(), len(calls), caught[0].category.__name__
    ('hello', 2, 'CacheRepairWarning')
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from agentgym_budget.errors import DataError, GenerationError
from agentgym_budget.storage.safe_json import read_regular_file

__all__ = ["CacheRepairWarning", "cache_key", "cache_root", "cached_directory", "check_entry"]

CACHE_ENV_VAR = "AGENTGYM_BUDGET_CACHE"
"""Environment variable that overrides the cache location."""

_KEY = "key.json"
_MANIFEST = "manifest.sha256"
_SCRATCH = ".tmp-"
_CHUNK = 1 << 20
_MANIFEST_BYTES = 16 * 2**20
_LINE = re.compile(r"([0-9a-f]{64})  (\S(?:.*\S)?)")

_Signature = tuple[tuple[str, int, int, int, int], ...]
_VERIFIED: dict[Path, _Signature] = {}
"""Entries verified by this process, with the ``stat`` of their files at that time."""
_SWEPT: set[Path] = set()
_SWEEP_LOCK = threading.Lock()
_BUILDS = threading.local()
"""Entries built by each thread (see :func:`build_count`)."""


class CacheRepairWarning(UserWarning):
    """A damaged cache entry was found and rebuilt."""


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


# ---------------------------------------------------------------------- integrity
def _sha256(path: Path) -> str:
    """The SHA-256 of the regular file ``path`` (``OSError`` for a FIFO, device or folder: never blocks)."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"{path.name} is not a regular file (a FIFO, device or folder)")
        remaining = info.st_size
        while remaining > 0 and (chunk := handle.read(min(_CHUNK, remaining))):
            digest.update(chunk)
            remaining -= len(chunk)
    return digest.hexdigest()


def _signature(entry: Path, names: list[str]) -> _Signature:
    stats = []
    for name in names:
        info = os.stat(entry / name)
        stats.append((name, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino))
    return tuple(stats)


def _write_manifest(entry: Path) -> None:
    names = sorted(
        str(Path(folder, name).relative_to(entry).as_posix()) for folder, _, files in os.walk(entry) for name in files
    )
    lines = [f"{_sha256(entry / name)}  {name}\n" for name in names if name != _MANIFEST]
    (entry / _MANIFEST).write_text("".join(lines))


def _read_manifest(entry: Path) -> dict[str, str]:
    checksums = {}
    try:
        text = read_regular_file(entry / _MANIFEST, what="cache manifest", max_bytes=_MANIFEST_BYTES).decode("utf-8")
    except DataError as err:
        raise ValueError(str(err)) from err
    for number, line in enumerate(text.splitlines(), 1):
        match = _LINE.fullmatch(line)
        name = match.group(2) if match else ""
        if not match or name.startswith("/") or ".." in Path(name).parts or name == _MANIFEST:
            raise ValueError(f"line {number} is not '<sha256>  <relative path>': {line[:120]!r}")
        checksums[name] = match.group(1)
    if _KEY not in checksums:
        raise ValueError(f"it does not list {_KEY}")
    return checksums


def check_entry(entry: str | os.PathLike[str]) -> str | None:
    """Why the cache entry ``entry`` cannot be used (``None`` if it is intact).

    Hashes every file the first time in a process; afterwards compares ``stat`` results only.

    Example:
        >>> import tempfile, pathlib
        >>> check_entry(pathlib.Path(tempfile.mkdtemp()) / "missing")
        'it does not exist'
    """
    entry = Path(entry)
    manifest = entry / _MANIFEST
    known = _VERIFIED.get(entry)
    if known is not None:
        try:
            if _signature(entry, [name for name, *_ in known]) == known:
                return None
        except OSError:
            pass
        _VERIFIED.pop(entry, None)
    if not entry.is_dir():
        return "it does not exist"
    if not manifest.is_file():
        return f"it has no {_MANIFEST} (made by an older version, or damaged)"
    try:
        checksums = _read_manifest(entry)
    except (OSError, UnicodeDecodeError, ValueError) as err:
        return f"its {_MANIFEST} is unreadable: {err}"
    names = sorted(checksums)
    try:
        before = _signature(entry, [*names, _MANIFEST])
        for name in names:
            if _sha256(entry / name) != checksums[name]:
                return f"{name} differs from its checksum in {_MANIFEST} (truncated, overwritten or bit-flipped)"
        if _signature(entry, [*names, _MANIFEST]) != before:
            return "it changed while it was being verified"
    except OSError as err:
        return f"a file it lists cannot be read ({err})"
    _VERIFIED[entry] = before
    return None


# ---------------------------------------------------------------------- scratch directories
def _remove_scratch(folder: Path, name: str) -> None:
    """Remove the scratch directories of entry ``name`` (call only while holding its lock)."""
    for scratch in folder.glob(name + _SCRATCH + "*"):
        shutil.rmtree(scratch, ignore_errors=True)


def _sweep(folder: Path) -> None:
    """Remove scratch directories of other entries of ``folder`` whose lock is free (their builder died)."""
    with _SWEEP_LOCK:
        if folder in _SWEPT:
            return
        _SWEPT.add(folder)
    for name in sorted({p.name.split(_SCRATCH, 1)[0] for p in folder.glob("*" + _SCRATCH + "*")}):
        lock = FileLock(str(folder / name) + ".lock")
        try:
            lock.acquire(timeout=0)
        except Timeout:
            continue  # being built right now
        try:
            _remove_scratch(folder, name)
        finally:
            lock.release()


# ---------------------------------------------------------------------- entries
def find_entry(namespace: str, params: Mapping[str, Any], *, root: Path | None = None) -> Path | None:
    """The intact cache entry for ``params`` if there is one (verified as :func:`check_entry` does), else ``None``.

    Nothing is built or locked: a cheap "is it cached?" for callers that prepare entries ahead of use.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> find_entry("demo", {"size": 3}, root=root) is None
        True
        >>> entry = cached_directory("demo", {"size": 3}, lambda path: None, root=root)
        >>> find_entry("demo", {"size": 3}, root=root) == entry
        True
    """
    target = (root or cache_root()) / namespace / cache_key(params)
    return target if check_entry(target) is None else None


def build_count() -> int:
    """How many entries :func:`cached_directory` built in the calling thread so far (not found: built)."""
    return getattr(_BUILDS, "count", 0)


def cached_directory(
    namespace: str,
    params: Mapping[str, Any],
    build: Callable[[Path], None],
    *,
    root: Path | None = None,
) -> Path:
    """Return the verified cache directory for ``params``, calling ``build(tmp_dir)`` only if it is missing or damaged.

    Args:
        namespace: Sub-directory of the cache (e.g. ``"textworld"``).
        params: Every parameter the content depends on; stored beside it as ``key.json``.
        build: Writes the entry's files into the (empty) directory it receives; it must be
            deterministic, since a damaged entry is rebuilt with it.
        root: Cache root; defaults to :func:`cache_root`.

    Returns:
        The path of the complete entry, whose files match their manifest.

    Warns:
        CacheRepairWarning: The entry existed but was damaged, and was rebuilt.
    """
    folder = (root or cache_root()) / namespace
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / cache_key(params)
    if check_entry(target) is None:
        return target
    with FileLock(str(target) + ".lock"):
        _remove_scratch(folder, target.name)  # we hold the lock: a scratch directory left here is an orphan
        problem = check_entry(target)
        if problem is None:
            return target
        _sweep(folder)
        if target.exists() and (target / _MANIFEST).exists():
            warnings.warn(
                f"agentgym-budget cache entry {target} is damaged ({problem}); rebuilding it.",
                CacheRepairWarning,
                stacklevel=2,
            )
        scratch = Path(tempfile.mkdtemp(prefix=target.name + _SCRATCH, dir=folder))
        try:
            build(scratch)
            (scratch / _KEY).write_text(json.dumps(params, sort_keys=True, indent=1, default=str))
            _write_manifest(scratch)
            if target.exists():
                shutil.rmtree(target)
            os.replace(scratch, target)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        problem = check_entry(target)
        _BUILDS.count = build_count() + 1
    if problem is not None:
        raise GenerationError(f"agentgym-budget cache entry {target} was just built, but {problem}.")
    return target
