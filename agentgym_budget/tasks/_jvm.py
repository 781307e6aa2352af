"""One Java virtual machine per process and engine, shared by the envs of that engine: :class:`SharedJvm`.

TextWorldExpress and ScienceWorld are simulators written in Scala, reached through py4j. Their documented
Python envs start one JVM each (about a second and 80-200 MB); here each engine has one :class:`SharedJvm`,
started by the first env of a process that needs it, and every env of the process makes its own engine
object in it. py4j gives each thread its own connection, so envs stepped from several threads do not wait
for each other's replies (an engine whose calls must not interleave takes :attr:`JvmProcess.lock`).

Lifetime: the JVM is started with ``die_on_exit`` (it exits when its standard input, a pipe from this
process, closes) and is shut down at interpreter exit, so none outlives the process. A JVM that died
(killed, out of memory) is replaced by a new one at the next :meth:`SharedJvm.current`; engine objects
of the dead one fail with a py4j error, which the families turn into a typed error. A process made by
``fork`` never talks to its parent's JVM: it drops the inherited connection (and its copy of the pipe, so
the parent's JVM still ends with the parent) and starts its own on first use.

:func:`java_command` finds ``java`` (``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``); without one,
:class:`~agentgym_budget.errors.MissingDependencyError` says how to install it.

Example:
    >>> JAVA_INSTALL_HINT.startswith("Install a Java runtime")
    True
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_budget.dependencies import require
from agentgym_budget.errors import MissingDependencyError

__all__ = ["JAVA_INSTALL_HINT", "JvmProcess", "SharedJvm", "java_command", "java_runtime"]

JAVA_INSTALL_HINT = (
    "Install a Java runtime (11 or newer), e.g. `apt-get install default-jre-headless` on Debian/Ubuntu "
    "(or set JAVA_HOME to one), then check it with `java -version`."
)
"""What to do when no Java runtime is found (part of the error that says so)."""

_SHUTDOWN_WAIT = 5.0
"""Seconds a JVM is given to exit after the shutdown command, before it is killed."""


@dataclass
class JvmProcess:
    """One started JVM: its py4j gateway, the ``java`` process, and what its engine keeps per JVM.

    Attributes:
        gateway: The ``py4j.java_gateway.JavaGateway`` connected to it.
        process: The ``java`` child process.
        owner: Process id of the Python process that started it.
        lock: A lock for engines whose calls must not interleave across threads.
        data: Per-JVM state of the engine (e.g. TextWorldExpress's loaded generators); dropped with the JVM.
    """

    gateway: Any
    process: subprocess.Popen[bytes]
    owner: int
    lock: threading.RLock = field(default_factory=threading.RLock)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def alive(self) -> bool:
        """Started by this process and still running."""
        return self.owner == os.getpid() and self.process.poll() is None

    def exit_code(self, wait: float = 0.0) -> int | None:
        """The JVM's exit code (``None`` while it runs), waiting up to ``wait`` seconds for it to end."""
        if wait > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=wait)
        return self.process.poll()


def java_command(feature: str) -> str:
    """The ``java`` launcher this process starts its engines with.

    Args:
        feature: What needs Java, for the error message (e.g. ``"TextWorldExpress (the TWX ids)"``).

    Raises:
        MissingDependencyError: No Java runtime was found (the message says how to install one).
    """
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("java")
    if found is None:
        raise MissingDependencyError(
            f"{feature} runs in a Java virtual machine, and no Java runtime was found "
            f"(no java on PATH{' or in JAVA_HOME' if home else ''}). {JAVA_INSTALL_HINT}"
        )
    return found


def java_runtime(feature: str) -> dict[str, str | None]:
    """The Java runtime ``feature`` starts (its ``java -version`` line and path), for run provenance."""
    from agentgym_budget._internal.program_version import program_version

    try:
        java = java_command(feature)
    except MissingDependencyError:
        return {"java": None}
    return {"java": program_version([java, "-version"]), "java_path": java}


class SharedJvm:
    """The JVM of one engine in this process, started on first use and replaced if it died.

    Args:
        feature: What runs in it, for messages (e.g. ``"ScienceWorld (the ScienceWorld ids)"``).
        extra: The agentgym-budget extra that installs the engine.
        package: The engine's distribution on PyPI; ``module`` is imported to check it is installed.
        module: The engine's Python module.
        classpath: Returns ``(jar, working directory)`` once the engine's module imports.
        options: Options for the ``java`` command (heap bounds, ...), or a function returning them.
        on_start: Called with each new JVM before anything else uses it.
    """

    def __init__(
        self,
        feature: str,
        *,
        extra: str,
        package: str,
        module: str,
        classpath: Callable[[], tuple[str, str]],
        options: Sequence[str] | Callable[[], Sequence[str]] = (),
        on_start: Callable[[JvmProcess], None] | None = None,
    ) -> None:
        self.feature = feature
        self.extra = extra
        self.package = package
        self.module = module
        self._classpath = classpath
        self._options = options
        self._on_start = on_start
        self._lock = threading.Lock()
        self._current: JvmProcess | None = None
        _ALL.append(self)

    def current(self) -> JvmProcess:
        """This process's running JVM, started now if there is none (or it died).

        Raises:
            MissingDependencyError: The engine's extra or a Java runtime is missing, or ``java`` does not start.
        """
        current = self._current
        if current is not None and current.alive:
            return current
        with self._lock:
            current = self._current
            if current is None or not current.alive:
                if current is not None:
                    _disconnect(current)
                current = self._current = self._launch()
            return current

    def started(self) -> JvmProcess | None:
        """This process's JVM if it was started and still runs (never starts one)."""
        current = self._current
        return current if current is not None and current.alive else None

    def pid(self) -> int | None:
        """Process id of this process's JVM (``None`` before it is started), e.g. to count its CPU time."""
        current = self._current
        return current.process.pid if current is not None and current.owner == os.getpid() else None

    def shutdown(self) -> None:
        """Stop this process's JVM (the next :meth:`current` starts a new one)."""
        with self._lock:
            current, self._current = self._current, None
        if current is not None and current.owner == os.getpid():
            _stop(current)

    def check_installed(self) -> str:
        """Check, without starting anything, that the engine's extra and a Java runtime are installed.

        Returns:
            The ``java`` launcher the JVM would start with.

        Raises:
            MissingDependencyError: The engine's extra or a Java runtime is missing (the message says how to
                install it).
        """
        require(self.module, extra=self.extra, feature=self.feature, package=self.package)
        require("py4j.java_gateway", extra=self.extra, feature=self.feature, package="py4j")
        return java_command(self.feature)

    def _launch(self) -> JvmProcess:
        java = self.check_installed()
        java_gateway = require("py4j.java_gateway", extra=self.extra, feature=self.feature, package="py4j")
        jar, cwd = self._classpath()
        options = list(self._options() if callable(self._options) else self._options)
        try:
            port, process = java_gateway.launch_gateway(
                classpath=jar, die_on_exit=True, cwd=cwd, java_path=java, return_proc=True, javaopts=options
            )
        except (OSError, ValueError) as err:  # not executable, bad options, or no port printed: no working JVM
            raise MissingDependencyError(
                f"{self.feature} could not start its engine with {java} {' '.join(options)} "
                f"({type(err).__name__}: {err}). {JAVA_INSTALL_HINT}"
            ) from err
        gateway = java_gateway.JavaGateway(
            gateway_parameters=java_gateway.GatewayParameters(port=port, auto_close=True), java_process=process
        )
        started = JvmProcess(gateway, process, os.getpid())
        if self._on_start is not None:
            try:
                self._on_start(started)
            except BaseException:
                _stop(started)
                raise
        return started


_ALL: list[SharedJvm] = []


def _disconnect(jvm: JvmProcess) -> None:
    """Make ``jvm``'s gateway refuse every call from here on (a dead JVM, or one of the parent process)."""
    client = getattr(jvm.gateway, "_gateway_client", None)
    if client is not None:
        client.is_connected = False  # also keeps py4j's finalizers from writing to a shared socket


def _stop(jvm: JvmProcess) -> None:
    with contextlib.suppress(Exception):  # best effort: the connection may already be gone
        jvm.gateway.shutdown()
    with contextlib.suppress(Exception):
        if jvm.process.stdin is not None:
            jvm.process.stdin.close()  # die_on_exit: the JVM exits when its stdin closes
    with contextlib.suppress(Exception):
        jvm.process.wait(timeout=_SHUTDOWN_WAIT)
    if jvm.process.poll() is None:
        jvm.process.kill()
        with contextlib.suppress(Exception):
            jvm.process.wait(timeout=_SHUTDOWN_WAIT)


def _forget_after_fork() -> None:
    """In a child made by ``fork``: let go of the parent's JVMs without touching them."""
    for shared in _ALL:
        inherited, shared._current = shared._current, None
        shared._lock = threading.Lock()
        if inherited is not None:
            _disconnect(inherited)
            with contextlib.suppress(Exception):
                if inherited.process.stdin is not None:
                    inherited.process.stdin.close()  # our copy only: the parent keeps its JVM's pipe


@atexit.register
def _shutdown_all() -> None:
    for shared in _ALL:
        shared.shutdown()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
