"""One Java virtual machine per process for every TextWorldExpress env: :func:`new_game_interface`.

TextWorldExpress runs in a JVM reached through py4j. Its documented ``TextWorldExpressEnv`` starts one
JVM per env (about 1 s and 78 MB each); here the first env of a process starts one JVM and every env
of the process (of any TWX game, in any thread) gets its own game object in it,
``textworldexpress.runtime.PythonInterface``, which holds one game. py4j gives each thread its own
connection, so envs stepped from several threads do not wait for each other's replies. A process
made by ``fork`` does not use its parent's JVM: the first env it makes starts its own.

The JVM is :data:`JVM`, a :class:`~agentgym_budget.tasks._jvm.SharedJvm`: it dies with the process,
and without a Java runtime :class:`~agentgym_budget.errors.MissingDependencyError` says how to install one.

Example:
    >>> game = new_game_interface()
    >>> game.load("coin", "numLocations=3")
    ''
    >>> jvm_pid() == jvm_pid() and jvm_pid() is not None
    True
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from agentgym_budget.tasks._jvm import JvmProcess, SharedJvm

__all__ = ["jvm_pid", "new_game_interface"]

_MAX_GENERATORS = 256
_GOLD_ATTEMPTS = 50
_FEATURE = "TextWorldExpress (the TWX ids)"


def _classpath() -> tuple[str, str]:
    from textworld_express.constants import BASEPATH, JAR_PATH

    return JAR_PATH, BASEPATH


JVM = SharedJvm(_FEATURE, extra="twx", package="textworld-express", module="textworld_express", classpath=_classpath)
"""The TextWorldExpress JVM of this process (:class:`~agentgym_budget.tasks._jvm.SharedJvm`)."""

_LOCK = threading.Lock()


def _gateway() -> JvmProcess:
    return JVM.current()


def new_game_interface() -> Any:
    """A new TextWorldExpress game object (``PythonInterface``) in this process's JVM, started if needed.

    Raises:
        MissingDependencyError: The ``twx`` extra or a Java runtime is missing.
    """
    return _gateway().gateway.jvm.textworldexpress.runtime.PythonInterface()


def _generators(current: JvmProcess) -> dict[tuple[str, str], tuple[Any, Any, threading.Lock]]:
    return current.data.setdefault("generators", {})


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
    generators = _generators(current)
    key = (game, params)
    entry = generators.get(key)
    if entry is None:
        with _LOCK:
            entry = generators.get(key)
            if entry is None:
                template = current.gateway.jvm.textworldexpress.runtime.PythonInterface()
                message = template.load(game, params)
                if message:
                    return template, message
                if len(generators) >= _MAX_GENERATORS:
                    generators.clear()
                entry = generators[key] = (template.gameGenerator(), template.properties(), threading.Lock())
    generator, properties, lock = entry
    interface = current.gateway.jvm.textworldexpress.runtime.PythonInterface()
    getattr(interface, "gameGenerator_$eq")(generator)
    getattr(interface, "properties_$eq")(properties)
    return interface, lock


def detach(game: Any) -> None:
    """Let the JVM free ``game`` (idempotent; a game of another process's JVM is left alone)."""
    current = JVM.started()
    if current is not None:
        with contextlib.suppress(Exception):  # the connection is gone at interpreter exit: nothing to free
            current.gateway.detach(game)


def jvm_pid() -> int | None:
    """Process id of this process's JVM (``None`` before the first TWX env), e.g. to count its CPU time."""
    return JVM.pid()


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
