"""ScienceWorld's simulator in one JVM per process: :class:`World`, one simulation each, and the gold paths.

ScienceWorld (Wang et al., EMNLP 2022) is a Scala simulator reached through py4j. Its documented
``ScienceWorldEnv`` starts a JVM per env (1.3 s and 160-195 MB each); here every env of a process makes
its own simulation (a ``scienceworld.runtime.pythonapi.PythonInterface``) in one shared JVM,
:data:`JVM`, and three things keep the simulations apart and reproducible:

* **Object order.** The simulator keeps objects in hash sets keyed by the JVM's identity hash codes,
  which differ from one load to the next: the same variation listed its objects (and answered
  ambiguous commands) in another order after a second load in the same JVM, on 29 of 30 tasks (and its
  gold paths differed). The JVM runs with ``-XX:hashCode=2`` (every identity hash is the same), which
  makes iteration follow insertion order: the same task, variation and actions give byte-identical
  observations across loads, envs and processes (``tests/test_sciworld_env.py``, ``tests/test_sciworld_jvm.py``).
* **Object ids.** Objects take their ids from one global counter of the JVM, which every load resets to
  0 (``util.UniqueIdentifier``), and objects compare equal by id. Two simulations in one JVM therefore
  hand out the same ids, and an object made during a step (steam, a mixture) can equal an older object
  of its own world: measured, ``chemistry-mix`` variation 1 played after another load in the same JVM
  ends at score 42 instead of 100. Each :class:`World` keeps its own counter and swaps it in before it
  runs (two py4j calls, only when another world ran in between), under the JVM's lock: calls of
  different worlds never interleave.
* **Randomness.** Bees, wandering animals and genetics draw from one global ``scala.util.Random``; each
  :class:`World` swaps its own generator in with its counter. The valid-action listing draws from it
  too, so reads (:meth:`World.read`) run with a scratch generator and put the counter back: asking for
  an ``info`` key never changes how an episode goes on.
* **Heap.** The JVM's heap is bounded (:func:`java_options`; a simulation holds about 11 MiB), not a
  quarter of the machine's memory.

Gold paths are generated in a second JVM, :data:`GOLD_JVM`, started on first need, so that generating
one (0.1 s to tens of seconds for ``mendelian-genetics-*``) does not hold the playing JVM's lock, and are
kept in the cache directory (``sciworld-gold``, one small JSON file per task, variation and
simplifications) and in memory.

A JVM that died (killed, out of memory) makes the next call of its worlds raise
:class:`~agentgym_budget.errors.InterpreterHaltedError` at once, and the next :class:`World` starts a
new JVM.

Example:
    >>> world = World()
    >>> world.load("find-animal", 0, "").startswith("This room is called")
    True
    >>> world.step("zzqx").observation
    'No known action matches that input.'
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.errors import DataError, GenerationError, InterpreterHaltedError, InvalidOptionError
from agentgym_budget.storage.cache import cached_directory
from agentgym_budget.storage.memory_cache import MemoryCache
from agentgym_budget.storage.safe_json import read_json_file
from agentgym_budget.tasks._jvm import JvmProcess, SharedJvm

__all__ = ["World", "gold_path"]

HEAP_ENV_VAR = "AGENTGYM_BUDGET_SCIWORLD_HEAP"
"""Environment variable bounding the JVM's heap (``-Xmx``), e.g. ``4g``; default :data:`DEFAULT_HEAP`."""

DEFAULT_HEAP = "2g"
"""Default heap bound: about 170 simulations (a process's envs) at 11 MiB each."""

NO_MATCH = "No known action matches that input."
"""The simulator's answer to input that names no action: nothing in the world changes."""

AMBIGUOUS = "Ambiguous request"
"""How the simulator's question starts when a command fits several objects (the next input answers it)."""

_FEATURE = "ScienceWorld (the ScienceWorld ids)"
_MAX_GOLD_ACTIONS = 2_000
_MAX_GOLD_ACTION_LENGTH = 500
_GOLD_FORMAT = 1


def java_options() -> list[str]:
    """The ``java`` options of the ScienceWorld JVMs (heap from :data:`HEAP_ENV_VAR`).

    Raises:
        InvalidOptionError: :data:`HEAP_ENV_VAR` is not a size such as ``512m`` or ``4g``.
    """
    heap = os.environ.get(HEAP_ENV_VAR) or DEFAULT_HEAP
    if not re.fullmatch(r"[1-9][0-9]{0,5}[mMgG]", heap):
        raise InvalidOptionError(f"{HEAP_ENV_VAR}={heap!r} is not a heap size; expected e.g. '512m' or '4g'.")
    return ["-Xms32m", f"-Xmx{heap}", "-XX:+UseSerialGC", "-XX:+UnlockExperimentalVMOptions", "-XX:hashCode=2"]


def _classpath() -> tuple[str, str]:
    from scienceworld.constants import BASEPATH, JAR_PATH

    return JAR_PATH, BASEPATH


@dataclass(frozen=True)
class _Globals:
    """The simulator's process-wide state, reached by reflection: its object-id counter and random generator
    (and a scratch generator for reads)."""

    ids: Any
    random_field: Any
    random_module: Any
    scratch: Any


def _globals(jvm: JvmProcess) -> _Globals:
    found = jvm.data.get("globals")
    if found is None:
        gateway = jvm.gateway.jvm
        field = gateway.java.lang.Class.forName("scala.util.Random").getDeclaredField("self")
        field.setAccessible(True)
        module = gateway.java.lang.Class.forName("scala.util.Random$").getField("MODULE$").get(None)
        found = jvm.data["globals"] = _Globals(gateway.util.UniqueIdentifier, field, module, gateway.java.util.Random())
    return found


def _silence(jvm: JvmProcess) -> None:
    """Send the simulator's console output (a line per task at every load) nowhere, before it first prints.

    py4j otherwise pipes it to a thread of this process that reads and discards it line by line.
    """
    system = jvm.gateway.jvm.java.lang.System
    system.setOut(jvm.gateway.jvm.java.io.PrintStream(jvm.gateway.jvm.java.io.OutputStream.nullOutputStream()))


def _jvm(feature: str) -> SharedJvm:
    return SharedJvm(
        feature, extra="sciworld", package="scienceworld", module="scienceworld", classpath=_classpath,
        options=java_options, on_start=_silence,
    )  # fmt: skip


JVM = _jvm(_FEATURE)
"""The JVM the envs of this process play in."""

GOLD_JVM = _jvm("ScienceWorld's gold paths (the expert of the ScienceWorld ids)")
"""The JVM that generates gold paths, started on first need."""


@dataclass(frozen=True)
class StepResult:
    """What one command did: the simulator's answer, score and completion, and whether the world changed.

    Attributes:
        observation: The simulator's answer.
        score: Its score, -1 to 1 (-1: the task failed, after a wrong ``focus on``).
        completed: The simulator reports the task completed.
        changed: The command may have changed the world (``False`` only for input that matched no
            action while no question was pending).
    """

    observation: str
    score: float
    completed: bool
    changed: bool


class World:
    """One ScienceWorld simulation in this process's JVM (see the module docstring).

    Every method raises :class:`~agentgym_budget.errors.InterpreterHaltedError` when the JVM died, and
    :class:`~agentgym_budget.errors.MissingDependencyError` (at construction) without the extra or Java.
    """

    def __init__(self, jvm: SharedJvm = JVM) -> None:
        self.jvm: JvmProcess = jvm.current()
        self._counter = 0
        self._random: Any = None
        self._asking = False
        with self._calling("start a simulation"):
            self.interface = self.jvm.gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()
            self._step = self.interface.step  # py4j builds a method object at every attribute access
            self._score = self.interface.getScore
            self._completed = self.interface.getCompleted

    @property
    def alive(self) -> bool:
        """The JVM this world lives in still runs."""
        return self.jvm.alive

    def load(self, task: str, variation: int, simplifications: str, *, gold: bool = False) -> str:
        """Load ``task``'s ``variation`` and return the room's description (``look around``).

        Raises:
            InvalidOptionError: The simulator refused the task, variation or simplifications.
        """
        with self._calling(f"load {task} variation {variation}"):
            self._take_counter()
            message = self.interface.load(task, variation, simplifications, gold)
            if message:
                raise InvalidOptionError(f"ScienceWorld refused {task!r} variation {variation}: {message.strip()}")
            self._asking = False
            return self._step("look around")

    def step(self, command: str) -> StepResult:
        """Play one command."""
        with self._calling("step"):
            self._take_counter()
            observation = self._step(command)
            changed = observation != NO_MATCH or self._asking
            self._asking = observation.startswith(AMBIGUOUS)
            return StepResult(observation, float(self._score()), bool(self._completed()), changed)

    def replay(self, commands: Sequence[str]) -> list[bool]:
        """Play ``commands`` (a restore); whether each may have changed the world (:attr:`StepResult.changed`)."""
        changed = []
        with self._calling("replay"):
            self._take_counter()
            for command in commands:
                observation = self._step(command)
                changed.append(observation != NO_MATCH or self._asking)
                self._asking = observation.startswith(AMBIGUOUS)
        return changed

    def ensure_alive(self, what: str) -> None:
        """Raise :class:`~agentgym_budget.errors.InterpreterHaltedError` if this world's JVM died."""
        if not self.jvm.alive:
            raise self._halted(what, None)

    def score(self) -> float:
        """The current score, -1 to 1."""
        with self._calling("read the score"):
            return float(self._score())

    def read(self, what: str) -> Any:
        """The result of the simulator's method ``what`` that reads the world (e.g. ``freeActionLook``).

        Such reads run engine code that draws from the random generator (the valid-action listing does,
        and names some objects after its draws): they run with a scratch generator seeded the same every
        time, and the object-id counter put back after, so that asking for an ``info`` key never changes how
        the episode goes on and the same state always lists the same commands.
        """
        with self._calling(what):
            self._take_counter()
            shared = _globals(self.jvm)
            counter = int(shared.ids.count())
            shared.scratch.setSeed(0)  # the listing's referents depend on its draws: the same every time
            shared.random_field.set(shared.random_module, shared.scratch)
            try:
                return getattr(self.interface, what)()
            finally:
                shared.random_field.set(shared.random_module, self._random)
                getattr(shared.ids, "count_$eq")(counter)

    def valid_actions(self) -> list[dict[str, Any]]:
        """The simulator's valid action-object combinations: ``action``, ``template_id``, ``obj_ids``, ``type_ids``."""
        data = self.read("getValidActionObjectCombinationsJSON")
        return json.loads(data)["validActions"]

    def gold_sequence(self) -> list[str]:
        """The gold path of a world loaded with ``gold=True``, one command per item."""
        with self._calling("read the gold path"):
            joined = self.jvm.gateway.jvm.java.lang.String.join("\n", self.interface.getGoldActionSequence())
        return joined.split("\n") if joined else []

    def close(self) -> None:
        """Let the JVM free this simulation (idempotent)."""
        if self.jvm.alive:
            with contextlib.suppress(Exception):  # the connection is gone at interpreter exit: nothing to free
                self.jvm.gateway.detach(self.interface)

    # ------------------------------------------------------------------ internals
    def _take_counter(self) -> None:
        """Swap this world's object-id counter and random generator into the JVM (the caller holds its lock)."""
        owner_ref = self.jvm.data.get("owner")
        owner = owner_ref() if owner_ref is not None else None
        if owner is self:
            return
        shared = _globals(self.jvm)
        if owner is not None:
            owner._counter = int(shared.ids.count())
        getattr(shared.ids, "count_$eq")(self._counter)
        if self._random is None:
            self._random = self.jvm.gateway.jvm.java.util.Random()
        shared.random_field.set(shared.random_module, self._random)
        self.jvm.data["owner"] = weakref.ref(self)

    @contextlib.contextmanager
    def _calling(self, what: str) -> Any:
        if not self.jvm.alive:
            raise self._halted(what, None)
        with self.jvm.lock:
            try:
                yield
            except Exception as err:
                if type(err).__module__.startswith("py4j"):
                    raise self._halted(what, err) from err
                raise

    def _halted(self, what: str, err: Exception | None) -> InterpreterHaltedError:
        code = self.jvm.exit_code(wait=1.0 if err is not None else 0.0)
        if code is not None or err is None or type(err).__name__ == "Py4JNetworkError":
            where = f"exited with code {code}" if code is not None else "stopped answering"
            return InterpreterHaltedError(
                f"ScienceWorld's JVM (pid {self.jvm.process.pid}) {where}, so this episode cannot go on ({what}). "
                "reset() starts a new JVM and replays nothing; restoring a snapshot replays its actions there."
            )
        detail = next((line.strip() for line in str(err).splitlines() if "Exception" in line or "Error" in line), "")
        hint = f" Raise {HEAP_ENV_VAR} (now {java_options()[1][4:]})." if "OutOfMemoryError" in detail else ""
        return InterpreterHaltedError(f"ScienceWorld failed to {what}: {detail or str(err)[:300]}.{hint}")


# ---------------------------------------------------------------------------------------------- gold paths
_GOLD_MEMORY: MemoryCache[tuple[str, ...]] = MemoryCache(capacity=4096)


def gold_path(task: str, variation: int, simplifications: str) -> tuple[str, ...]:
    """The gold path of ``task``'s ``variation`` (generated once, then read from the caches).

    Raises:
        GenerationError: The simulator produced no gold path.
        InterpreterHaltedError: The gold JVM died while generating it.
    """
    key = (task, variation, simplifications)
    return _GOLD_MEMORY.get(key, lambda: _cached_gold(task, variation, simplifications))


def gold_params(task: str, variation: int, simplifications: str) -> dict[str, Any]:
    """The cache key of a gold path (what it depends on)."""
    return {
        "task": task,
        "variation": variation,
        "simplifications": simplifications,
        "scienceworld": _engine_version(),
        "format": _GOLD_FORMAT,
    }


def _cached_gold(task: str, variation: int, simplifications: str) -> tuple[str, ...]:
    params = gold_params(task, variation, simplifications)

    def build(folder: Path) -> None:
        (folder / "gold.json").write_text(json.dumps(_generate_gold(task, variation, simplifications)))

    entry = cached_directory("sciworld-gold", params, build)
    return _checked_gold(read_json_file(entry / "gold.json", what="a ScienceWorld gold path", expected=list))


def _generate_gold(task: str, variation: int, simplifications: str) -> list[str]:
    world = World(GOLD_JVM)
    try:
        world.load(task, variation, simplifications, gold=True)
        path = world.gold_sequence()
    finally:
        world.close()
    if not path:
        raise GenerationError(f"ScienceWorld generated no gold path for {task!r} variation {variation}.")
    return path


def _checked_gold(value: list[Any]) -> tuple[str, ...]:
    if len(value) > _MAX_GOLD_ACTIONS or not all(
        isinstance(action, str) and len(action) <= _MAX_GOLD_ACTION_LENGTH for action in value
    ):
        raise DataError(
            f"A cached ScienceWorld gold path is not a list of at most {_MAX_GOLD_ACTIONS} commands of at most "
            f"{_MAX_GOLD_ACTION_LENGTH} characters; delete the cache's sciworld-gold folder to regenerate it."
        )
    return tuple(value)


@functools.cache
def _engine_version() -> str:
    from scienceworld.version import __version__

    return __version__
