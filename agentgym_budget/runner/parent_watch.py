"""Worker processes that die with their parent, however the parent dies.

A worker of :func:`~agentgym_budget.runner.pool.run_jobs` whose parent is killed (``kill -9``, OOM
killer, a closed terminal) would otherwise keep playing episodes nobody will record, burning CPU
for minutes. :func:`exit_with_parent` is called first thing in each worker:

* on Linux it asks the kernel to send the worker ``SIGKILL`` when its parent exits
  (``prctl(PR_SET_PDEATHSIG)``), so it dies at once;
* everywhere, a daemon thread checks every ``interval`` seconds whether the worker has been
  reparented (``os.getppid()`` is no longer the parent's pid) and ends the process if so.

Both guards also cover a parent that died before the worker got to install them.

Example:
    >>> import multiprocessing, os
    >>> child = multiprocessing.get_context("spawn").Process(target=exit_with_parent, args=(os.getpid(),))
    >>> child.start(); child.join(); child.exitcode  # the parent is alive: the guards are set, nothing happens
    0
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

__all__: list[str] = []

_PR_SET_PDEATHSIG = 1
_EXIT_STATUS = 70
"""Exit status of a worker that ended because its parent died."""


def set_parent_death_signal(signum: int = signal.SIGKILL if hasattr(signal, "SIGKILL") else 9) -> bool:
    """Ask Linux to send ``signum`` to this process when its parent exits; ``False`` where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int, interval: float) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(_EXIT_STATUS)
        time.sleep(interval)


def exit_with_parent(parent: int, *, interval: float = 0.5) -> bool:
    """End this process as soon as the process ``parent`` (its parent) is gone (see the module docstring).

    Returns whether the kernel's parent-death signal is in place (``False``: the watchdog thread alone).
    """
    armed = set_parent_death_signal()
    if os.getppid() != parent:
        os._exit(_EXIT_STATUS)
    threading.Thread(target=_watch, args=(parent, interval), name="parent-watch", daemon=True).start()
    return armed
