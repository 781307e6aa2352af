"""One z-machine interpreter shared by the forks of a TextWorld game, each with its own state.

Jericho runs a game in a private copy of its frotz library (the interpreter keeps the game in
global variables), and starting one costs about 20 ms: copying and loading the library, checking
the story file, and running the game up to its first prompt. Forks of an env all play the same
story file, so they share one interpreter instead: an :class:`InterpreterLease` is what TextWorld's
``JerichoEnv`` sees as its ``FrotzEnv``, and before any call it makes sure the interpreter holds
*its* z-machine state (RAM, stack, registers, random generator: what ``FrotzEnv.get_state``
captures), parking the previous holder's state (about 0.1 ms per switch, 40 KB per parked
state instead of a 1.7 MB interpreter). A holder that has not acted since its state was set
parks that state without reading the interpreter, so restoring a state into many fresh forks
costs one ``set_state`` each.

Every call is made under the interpreter's lock, so leases may be used from different threads;
calls of envs sharing an interpreter then run one at a time.

Example:
    >>> import jericho, warnings
    >>> from agentgym_budget.tasks.textworld import games
    >>> path = str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     first = InterpreterLease.start(path, seed=1)
    >>> intro, _ = first.reset()
    >>> second = first.share()
    >>> second.set_state(first.get_state())
    >>> first.step("go north")[0] == second.step("go north")[0]
    True
    >>> first.close(); second.close()
"""

from __future__ import annotations

import threading
from typing import Any

import jericho
import numpy as np

from agentgym_budget.tasks.textworld.watchdog import GuardedFrotzEnv
from agentgym_budget.tasks.textworld.zstate import StoryLayout, check_zstate

__all__: list[str] = []


class SharedInterpreter:
    """A jericho ``FrotzEnv`` and the bookkeeping of the leases that share it."""

    def __init__(self, frotz: jericho.FrotzEnv) -> None:
        self.frotz = frotz
        self.story_file = frotz.story_file.decode("utf-8")
        self.lock = threading.RLock()
        self.holder: InterpreterLease | None = None
        self.users = 0
        self.layout = StoryLayout.of(self.story_file, stack_bytes=frotz.frotz_lib.getStackSize())


def _writable(state: tuple[Any, ...]) -> tuple[Any, ...]:
    """``state`` with read-only arrays copied (jericho passes them to C through ``as_ctypes``)."""
    ram, stack, *rest = state
    if not ram.flags.writeable:
        ram = np.array(ram, dtype=np.uint8)
    if not stack.flags.writeable:
        stack = np.array(stack, dtype=np.uint8)
    return (ram, stack, *rest)


class InterpreterLease:
    """A ``FrotzEnv`` interface over a :class:`SharedInterpreter`, with its own z-machine state and seed."""

    def __init__(self, shared: SharedInterpreter) -> None:
        with shared.lock:
            shared.users += 1
        self._shared: SharedInterpreter | None = shared
        self._parked: tuple[Any, ...] | None = None
        self._set_to: tuple[Any, ...] | None = None  # the state last set, while nothing has changed it
        self._seed = shared.frotz._seed
        self.is_fully_supported = shared.frotz.is_fully_supported

    @classmethod
    def start(cls, story_file: str, seed: int | None = None) -> InterpreterLease:
        """A lease on a new interpreter running ``story_file`` (time-limited: :mod:`.watchdog`).

        Raises:
            InterpreterHaltedError: The story halted or looped while starting.
        """
        return cls(SharedInterpreter(GuardedFrotzEnv(story_file, seed)))

    @property
    def story_file(self) -> str:
        """The story file the interpreter runs."""
        return self._frotz_shared().story_file

    @property
    def users(self) -> int:
        """How many open leases share the interpreter."""
        return self._frotz_shared().users

    def share(self) -> InterpreterLease:
        """Another lease on the same interpreter (holding no state until it is set or reset)."""
        return InterpreterLease(self._frotz_shared())

    # ------------------------------------------------------------------ FrotzEnv interface
    def load(self, story_file: str, seed: int | None = None) -> None:
        """``FrotzEnv.load``: only the interpreter's own story file can be loaded (TextWorld reloads it)."""
        if story_file != self.story_file:
            raise ValueError(f"This interpreter runs {self.story_file}, not {story_file}; start another one.")
        if seed is not None:
            self.seed(seed)

    def seed(self, seed: int | None = None) -> int:
        """Set the seed used by the next :meth:`reset` (as ``FrotzEnv.seed``)."""
        self._seed = seed or self._frotz_shared().frotz.bindings.get("seed", -1)
        return self._seed

    def reset(self) -> tuple[str, dict[str, Any]]:
        """Restart the game with this lease's seed."""
        shared = self._frotz_shared()
        with shared.lock:
            self._hold(shared)
            self._set_to = None
            shared.frotz.seed(self._seed)
            return shared.frotz.reset()

    def step(self, action: str) -> tuple[Any, ...]:
        """Send ``action`` to the game (``FrotzEnv.step``)."""
        shared = self._frotz_shared()
        with shared.lock:
            self._hold(shared)
            self._set_to = None
            return shared.frotz.step(action)

    def get_state(self) -> tuple[Any, ...]:
        """This lease's z-machine state (``FrotzEnv.get_state``)."""
        shared = self._frotz_shared()
        with shared.lock:
            self._hold(shared)
            return shared.frotz.get_state()

    def set_state(self, state: tuple[Any, ...]) -> None:
        """Put this lease in ``state`` (read-only buffers are accepted).

        Raises:
            SnapshotMismatchError: ``state`` does not fit the story (:func:`.zstate.check_zstate`).
        """
        shared = self._frotz_shared()
        check_zstate(tuple(state), shared.layout)
        state = _writable(state)
        with shared.lock:
            self._hold(shared)
            shared.frotz.set_state(state)
            self._set_to = state

    def close(self) -> None:
        """Release the lease (idempotent); the interpreter stops when its last lease is released."""
        shared, self._shared = self._shared, None
        if shared is None:
            return
        with shared.lock:
            if shared.holder is self:
                shared.holder = None
            shared.users -= 1
            last = shared.users == 0
        self._parked = None
        if last:
            shared.frotz.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        attribute = getattr(self._frotz_shared().frotz, name)
        if not callable(attribute):
            return attribute
        return lambda *args, **kwargs: self._call(name, *args, **kwargs)

    # ------------------------------------------------------------------ internals
    def _frotz_shared(self) -> SharedInterpreter:
        shared = self.__dict__.get("_shared")
        if shared is None:
            raise RuntimeError("This interpreter lease was closed.")
        return shared

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        shared = self._frotz_shared()
        with shared.lock:
            self._hold(shared)
            self._set_to = None
            return getattr(shared.frotz, name)(*args, **kwargs)

    def _hold(self, shared: SharedInterpreter) -> None:
        """Make the interpreter hold this lease's state (caller holds the lock)."""
        holder = shared.holder
        if holder is self:
            return
        if holder is not None:
            holder._parked = holder._set_to if holder._set_to is not None else shared.frotz.get_state()
        if self._parked is not None:
            shared.frotz.set_state(_writable(self._parked))
            self._parked = None
        shared.holder = self
