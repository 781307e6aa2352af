"""One writer per output directory: an operating-system file lock on ``DIR/.lock``.

Two runs into the same ``--out`` at once would both play every missing episode (each reads the log
before the other appends) and write duplicates. :func:`lock_directory` takes an exclusive,
non-blocking lock (``flock`` on POSIX, ``filelock`` elsewhere) for as long as a command writes
into a directory; a second command is refused at once with a :class:`~agentgym_budget.errors.RunConfigError`
naming the process that holds it. The lock belongs to the open file, so the operating system
releases it when the holder exits, however it exits (``kill -9`` included): a ``.lock`` file left
behind never blocks anyone.

Example:
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> with lock_directory(out, "passkt"):
    ...     with lock_directory(out, "report"):
    ...         pass  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.RunConfigError: ... is in use by another command (passkt, pid ...); wait for it to finish, or write elsewhere (--out).
    >>> with lock_directory(out, "report"):
    ...     pass
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from agentgym_budget.errors import RunConfigError

__all__ = ["lock_directory"]

LOCK_FILE = ".lock"
"""Name of the lock file inside a locked directory."""


def _refuse(directory: Path, holder: str) -> RunConfigError:
    return RunConfigError(
        f"{directory} is in use by another command ({holder or 'unknown process'}); wait for it to finish, "
        "or write elsewhere (--out)."
    )


@contextlib.contextmanager
def _posix_lock(directory: Path, command: str) -> Iterator[None]:
    import fcntl

    descriptor = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 200, 0).decode("utf-8", "replace").strip()
            raise _refuse(directory, holder) from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{command}, pid {os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(descriptor, 0)
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def _portable_lock(directory: Path, command: str) -> Iterator[None]:
    from filelock import FileLock, Timeout

    lock = FileLock(str(directory / LOCK_FILE), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise _refuse(directory, "") from None
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def lock_directory(directory: str | Path, command: str) -> Iterator[None]:
    """Hold the write lock of ``directory`` (created if missing) while the block runs.

    Args:
        directory: The output directory.
        command: What is writing (shown to a command that is refused).

    Raises:
        RunConfigError: Another process (or another block of this one) holds the lock.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    locker = _posix_lock if sys.platform != "win32" else _portable_lock
    with locker(directory, command):
        yield
