"""One Java virtual machine per process for every TextWorldExpress env: :func:`new_game_interface`.

TextWorldExpress runs in a JVM reached through py4j. Its documented ``TextWorldExpressEnv`` starts one
JVM per env (about 1 s and 78 MB each); here the first env of a process starts one JVM and every env
of the process (of any TWX game, in any thread) gets its own game object in it,
``textworldexpress.runtime.PythonInterface``, which holds one game. py4j gives each thread its own
connection, so envs stepped from several threads do not wait for each other's replies. A process
made by ``fork`` does not use its parent's JVM: the first env it makes starts its own.

The JVM dies with the process (its stdin is the process's pipe). :func:`java_command` finds the
``java`` launcher (``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``); without one,
:class:`~agentgym_budget.errors.MissingDependencyError` says how to install it.

Example:
    >>> game = new_game_interface()
    >>> game.load("coin", "numLocations=3")
    ''
    >>> jvm_pid() == jvm_pid() and jvm_pid() is not None
    True
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_budget.dependencies import require
from agentgym_budget.errors import MissingDependencyError

__all__ = ["jvm_pid", "new_game_interface"]

_JAVA_INSTALL_HINT = (
    "Install a Java runtime (11 or newer), e.g. `apt-get install default-jre-headless` on Debian/Ubuntu "
    "(or set JAVA_HOME to one), then check it with `java -version`."
)
"""What to do when no Java runtime is found (part of the error that says so)."""


@dataclass
class _Gateway:
    gateway: Any
    process: subprocess.Popen[bytes]
    pid: int
    generators: dict[tuple[str, str], tuple[Any, Any, threading.Lock]] = field(default_factory=dict)


_MAX_GENERATORS = 256
_GOLD_ATTEMPTS = 50


_LOCK = threading.Lock()
_CURRENT: _Gateway | None = None


def java_command() -> str:
    """The ``java`` launcher this process starts TextWorldExpress with.

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
            "The TextWorldExpress ids (TWX-*) run the TextWorldExpress engine in a Java virtual machine, and no "
            f"Java runtime was found (no java on PATH{' or in JAVA_HOME' if home else ''}). {_JAVA_INSTALL_HINT}"
        )
    return found


def _launch() -> _Gateway:
    require("textworld_express", extra="twx", feature="TextWorldExpress (the TWX ids)", package="textworld-express")
    java_gateway = require("py4j.java_gateway", extra="twx", feature="TextWorldExpress (the TWX ids)", package="py4j")
    from textworld_express.constants import BASEPATH, JAR_PATH

    java = java_command()
    try:
        port, process = java_gateway.launch_gateway(
            classpath=JAR_PATH, die_on_exit=True, cwd=BASEPATH, java_path=java, return_proc=True
        )
    except (OSError, ValueError) as err:  # not executable, or no port printed: not a working JVM
        raise MissingDependencyError(
            f"The TWX ids could not start the TextWorldExpress engine with {java} ({type(err).__name__}: {err}). "
            f"{_JAVA_INSTALL_HINT}"
        ) from err
    gateway = java_gateway.JavaGateway(
        gateway_parameters=java_gateway.GatewayParameters(port=port, auto_close=True), java_process=process
    )
    return _Gateway(gateway, process, os.getpid())


def _gateway() -> _Gateway:
    global _CURRENT
    current = _CURRENT
    if current is not None and current.pid == os.getpid() and current.process.poll() is None:
        return current
    with _LOCK:
        current = _CURRENT
        if current is None or current.pid != os.getpid() or current.process.poll() is not None:
            current = _CURRENT = _launch()
        return current


def new_game_interface() -> Any:
    """A new TextWorldExpress game object (``PythonInterface``) in this process's JVM, started if needed.

    Raises:
        MissingDependencyError: The ``twx`` extra or a Java runtime is missing.
    """
    return _gateway().gateway.jvm.textworldexpress.runtime.PythonInterface()


def loaded_game_interface(game: str, params: str) -> tuple[Any, threading.Lock | str]:
    """A new game object ready to generate ``game`` with ``params``, and the lock its generations take.

    The engine's ``load`` (tens of milliseconds of JVM time: it reads the game's object lists) runs once
    per ``(game, params)`` and JVM; later game objects share its generator, which is why generating a game
    (``generateNewGameJSON``) must hold the returned lock. A refused ``params`` returns the engine's
    message instead of a lock.

    Raises:
        MissingDependencyError: The ``twx`` extra or a Java runtime is missing.
    """
    current = _gateway()
    key = (game, params)
    entry = current.generators.get(key)
    if entry is None:
        with _LOCK:
            entry = current.generators.get(key)
            if entry is None:
                template = current.gateway.jvm.textworldexpress.runtime.PythonInterface()
                message = template.load(game, params)
                if message:
                    return template, message
                if len(current.generators) >= _MAX_GENERATORS:
                    current.generators.clear()
                entry = current.generators[key] = (template.gameGenerator(), template.properties(), threading.Lock())
    generator, properties, lock = entry
    interface = current.gateway.jvm.textworldexpress.runtime.PythonInterface()
    getattr(interface, "gameGenerator_$eq")(generator)
    getattr(interface, "properties_$eq")(properties)
    return interface, lock


def detach(game: Any) -> None:
    """Let the JVM free ``game`` (idempotent; a game of another process's JVM is left alone)."""
    current = _CURRENT
    if current is not None and current.pid == os.getpid() and current.process.poll() is None:
        with contextlib.suppress(Exception):  # the connection is gone at interpreter exit: nothing to free
            current.gateway.detach(game)


def jvm_pid() -> int | None:
    """Process id of this process's JVM (``None`` before the first TWX env), e.g. to count its CPU time."""
    current = _CURRENT
    return current.process.pid if current is not None and current.pid == os.getpid() else None


def seeded_gold_path(interface: Any, agent: str, seed: int, fold: str) -> str:
    """The gold path of ``interface``'s loaded game for ``seed``, found by the engine's gold agent ``agent``
    (e.g. ``CoinGoldAgent``) with a random walk seeded by ``seed``, joined by newlines ('' if none was found);
    it also becomes ``interface``'s ``getGoldActionSequence()``.

    The engine's own ``generateNewGameJSON(..., generateGoldPath=True)`` seeds the random walk of its Coin
    Collector and TWC gold agents from the clock, so their gold paths differ from one call to the next; this
    runs the same agent the same way (up to 50 attempts on fresh copies of the game) with
    ``scala.util.Random(seed)``, as the engine does for Cooking World. Callers hold the game's generation lock.
    """
    jvm = _gateway().gateway.jvm
    generator = interface.gameGenerator()
    make_agent = getattr(jvm.textworldexpress.goldagent, agent)
    walk = jvm.scala.util.Random(seed)
    for _ in range(_GOLD_ATTEMPTS):
        result = make_agent(generator.mkGame(seed, fold)).mkGoldPath(walk)
        if result._1():  # py4j passes the path (a String[]) back only where exactly that type is taken
            getattr(interface, "goldPath_$eq")(result._2())
            return string_join("\n", interface.getGoldActionSequence())
    return ""


def world_view(interface: Any) -> list[str] | None:
    """Where the agent is and every room's description, as ``interface``'s game writes them (objects,
    containers and their contents, doors); ``None`` for a game without rooms (its one view is ``look``).

    Reads the game's own objects (``locations``, ``agentLocation``); changes nothing.
    """
    game = interface.game()
    kind = game.getClass().getName()
    if kind in _ROOMLESS:
        return None
    try:
        rooms = game.locations()
    except Exception:  # py4j's Py4JError: this game keeps no list of rooms
        _ROOMLESS.add(kind)
        return None
    return [game.agentLocation().name(), *(room.getDescription() for room in rooms)]


_ROOMLESS: set[str] = set()


def string_join(separator: str, values: Any) -> str:
    """``separator.join(values)`` computed in the JVM (one round trip for a Java array or list)."""
    return _gateway().gateway.jvm.java.lang.String.join(separator, values)


@atexit.register
def _shutdown() -> None:
    current = _CURRENT
    if current is not None and current.pid == os.getpid():
        with contextlib.suppress(Exception):  # best effort at exit; the JVM also dies with its stdin
            current.gateway.shutdown()
