"""Bounded z-machine calls: a time limit per call and a typed error when the interpreter halts.

Jericho runs the z-machine in C until the game asks for input, with no instruction limit: a story
whose code jumps to itself makes ``reset`` (or ``FrotzEnv``'s constructor, which starts the game)
run forever, and an illegal opcode halts the interpreter, after which every step returns the text
``"Emulator halted due to runtime error."`` as if it were the game's answer.

:class:`GuardedFrotzEnv` is a ``FrotzEnv`` whose game-running calls (``load``, ``reset``, ``step``)
run under one watchdog thread per process. Jericho's interpreter loop stops at the next instruction
once its library's global ``emulator_halted`` is set, and ctypes releases the GIL during the call, so
the watchdog sets that flag when a call outlives its deadline; the call then returns, and the guard
raises :class:`~agentgym_budget.errors.InterpreterHaltedError`. It raises the same error when the
interpreter halted by itself (an illegal opcode, a bad address), and keeps raising it on ``step``
until the game is restarted: the env never returns a fake observation.

One kind of loop runs inside a single instruction, where the flag is never read: frotz's
``unlink_object`` (``@remove_obj``, ``@insert_obj``) walks the parent's child list until it meets the
object, and code that moves an object whose parent does not list it walks that list forever. If a
call has not returned :data:`BREAK_AFTER` seconds after the flag was set, the watchdog ends that walk:
the walk reads 16-bit object numbers at 16-bit addresses, so it writes the object being unlinked
(the instruction's first operand, ``zargs[0]``) into every word of the first 64 KiB of the game's
memory that such a read can reach; the walk meets it at its next read and the instruction returns,
after which the interpreter stops on the flag. The game's memory is garbage afterwards, which the
halt already says: the env refuses to go on until it is reset, and a reset reloads the story. A story
smaller than 64 KiB (TextWorld's are larger) can make the walk read past its memory, where nothing is
written: such a loop may go on.

Division by zero is the last way a story ends the process: frotz's ``@div`` and ``@mod`` report it
as a runtime error and then divide anyway (``SIGFPE``). :func:`guard_division` replaces those two
entries of the interpreter's opcode table (``var_opcodes``, which also serves the 2OP forms) with
ones that halt the interpreter instead; every other quotient is the same (truncated, 16-bit).

Cost: a guarded call takes a lock and pushes a deadline on a heap; the watchdog thread is woken only
when a deadline is earlier than every pending one (and drops the deadlines of finished calls when
it wakes), so it sleeps while steps run. Measured cost per step: see the README's trust section.

Example:
    >>> import warnings
    >>> from agentgym_budget.tasks.textworld import games
    >>> path = str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     frotz = GuardedFrotzEnv(path, seed=1)
    >>> frotz.step("look")[0] != ""
    True
    >>> frotz.close()
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import threading
import time
from typing import Any

import jericho
import numpy as np

from agentgym_budget.errors import InterpreterHaltedError

__all__ = ["BREAK_AFTER", "CALL_TIME_LIMIT", "GuardedFrotzEnv", "Watchdog", "break_object_walk", "guard_division"]

CALL_TIME_LIMIT = 10.0
"""Seconds (wall clock) one ``load``/``reset``/``step`` may run; real TextWorld steps take milliseconds."""

BREAK_AFTER = 0.5
"""Seconds after the halt flag before the watchdog ends a loop inside one instruction (then again every as long)."""

_WALK_BYTES = 0x10001  # a 16-bit address plus the second byte of the word read there


def break_object_walk(lib: Any) -> bool:
    """End an ``unlink_object`` walk running in ``lib``: write its target into every word it may read.

    Returns:
        Whether the game's memory holds every address the walk reads (64 KiB; a smaller story's walk can
        also read past its memory, where nothing is written, so a loop there may go on).
    """
    size = min(ctypes.c_long.in_dll(lib, "story_size").value, _WALK_BYTES)
    address = ctypes.c_void_p.in_dll(lib, "zmp").value
    if not address or size < 2:
        return False
    target = ctypes.c_uint16.in_dll(lib, "zargs").value
    memory = np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(address))
    if ctypes.c_uint8.in_dll(lib, "h_version").value <= 3:  # one-byte object numbers
        memory[:] = target & 0xFF
    else:
        parity = ctypes.c_uint16.in_dll(lib, "h_objects").value & 1  # 14-byte entries: every read has this parity
        memory[parity::2] = target >> 8
        memory[1 - parity :: 2] = target & 0xFF
    return size == _WALK_BYTES


_OPCODE = ctypes.CFUNCTYPE(None)
_DIV, _MOD = 0x17, 0x18  # 2OP opcode numbers (Z-machine Standard 1.1, section 14)


def _division(lib: Any, modulo: bool) -> Any:
    """An ``@div`` (or ``@mod``) for ``lib`` that halts the interpreter on a zero divisor."""
    zargs = (ctypes.c_uint16 * 2).in_dll(lib, "zargs")
    halted = ctypes.c_int.in_dll(lib, "emulator_halted")
    store = lib.store
    store.argtypes, store.restype = [ctypes.c_uint16], None

    def opcode() -> None:
        a, b = ctypes.c_int16(zargs[0]).value, ctypes.c_int16(zargs[1]).value
        if b == 0:
            halted.value = 1
            store(0)
            return
        quotient = abs(a) // abs(b) * (-1 if (a < 0) != (b < 0) else 1)  # C truncates toward zero
        store((a - b * quotient if modulo else quotient) & 0xFFFF)

    return _OPCODE(opcode)


def guard_division(lib: Any) -> list[Any]:
    """Make ``@div`` and ``@mod`` in ``lib`` halt on a zero divisor instead of raising ``SIGFPE``.

    Returns:
        The installed callbacks (keep them alive as long as ``lib``); empty if ``lib``'s opcode table is not
        the expected one (another build of jericho), which is then left alone.
    """
    table = (ctypes.c_void_p * 0x40).in_dll(lib, "var_opcodes")
    originals = {_DIV: lib.z_div, _MOD: lib.z_mod}
    if any(table[number] != ctypes.cast(function, ctypes.c_void_p).value for number, function in originals.items()):
        return []
    callbacks = [_division(lib, modulo=False), _division(lib, modulo=True)]
    table[_DIV], table[_MOD] = (ctypes.cast(callback, ctypes.c_void_p).value for callback in callbacks)
    return callbacks


class Watchdog:
    """One thread that sets a jericho library's ``emulator_halted`` flag when a call passes its deadline."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._deadlines: list[tuple[float, int]] = []
        self._active: dict[int, tuple[Any, ctypes.c_int, list[bool]]] = {}
        self._tickets = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, lib: Any, flag: ctypes.c_int, seconds: float) -> tuple[int, list[bool]]:
        """Watch a call into ``lib``: ``flag`` is set after ``seconds``; the returned list's item says whether it was.

        If the call still runs :data:`BREAK_AFTER` seconds later, :func:`break_object_walk` ends the loop it is in.
        """
        fired = [False]
        with self._condition:
            ticket = next(self._tickets)
            self._active[ticket] = (lib, flag, fired)
            entry = (time.monotonic() + seconds, ticket)
            heapq.heappush(self._deadlines, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="z-machine watchdog", daemon=True)
                self._thread.start()
            if self._deadlines[0] == entry:  # only an earlier deadline needs the thread to wake up
                self._condition.notify()
        return ticket, fired

    def disarm(self, ticket: int) -> None:
        """Stop watching the call of ``ticket`` (its deadline entry is dropped when it comes up)."""
        with self._condition:
            self._active.pop(ticket, None)

    def _run(self) -> None:
        with self._condition:
            while True:
                while self._deadlines and self._deadlines[0][1] not in self._active:
                    heapq.heappop(self._deadlines)
                if not self._deadlines:
                    self._condition.wait()
                    continue
                deadline, ticket = self._deadlines[0]
                remaining = deadline - time.monotonic()
                if remaining > 0:
                    self._condition.wait(remaining)
                    continue
                heapq.heappop(self._deadlines)
                lib, flag, fired = self._active[ticket]
                if fired[0]:  # the flag did not stop it: a loop inside one instruction
                    break_object_walk(lib)
                fired[0] = True
                flag.value = 1
                heapq.heappush(self._deadlines, (time.monotonic() + BREAK_AFTER, ticket))


_WATCHDOG = Watchdog()


class GuardedFrotzEnv(jericho.FrotzEnv):
    """A ``FrotzEnv`` whose game-running calls are time-limited and refuse to go on after a halt.

    Args:
        story_file: The story file to run.
        seed: The interpreter's seed.
        time_limit: Seconds one call may run (:data:`CALL_TIME_LIMIT`).

    Raises:
        InterpreterHaltedError: The story halted or ran past ``time_limit`` while starting.
    """

    def __init__(self, story_file: str, seed: int | None = None, time_limit: float = CALL_TIME_LIMIT) -> None:
        self.time_limit = time_limit
        self.halted_reason: str | None = None
        super().__init__(story_file, seed)

    def load(self, story_file: str, seed: int | None = None) -> None:
        """``FrotzEnv.load`` (which starts the game), time-limited, with division by zero a halt."""
        if "_division_guards" not in self.__dict__:
            self._division_guards = guard_division(self.frotz_lib)
        self._guarded("starting the story", super().load, story_file, seed)

    def reset(self) -> tuple[str, dict[str, Any]]:
        """``FrotzEnv.reset``, time-limited; clears a previous halt."""
        self.halted_reason = None
        return self._guarded("restarting the story", super().reset)

    def step(self, action: str) -> tuple[Any, ...]:
        """``FrotzEnv.step``, time-limited; refused after a halt until :meth:`reset`."""
        if self.halted_reason is not None:
            raise InterpreterHaltedError(f"{self.halted_reason} The game cannot go on: reset it.")
        return self._guarded(f"the command {action[:60]!r}", super().step, action)

    def _guarded(self, what: str, call: Any, *args: Any) -> Any:
        flag = self.__dict__.get("_halted_flag")
        if flag is None:
            flag = self._halted_flag = ctypes.c_int.in_dll(self.frotz_lib, "emulator_halted")
        ticket, fired = _WATCHDOG.arm(self.frotz_lib, flag, self.time_limit)
        try:
            result = call(*args)
        finally:
            _WATCHDOG.disarm(ticket)
        if fired[0] or flag.value > 0:
            story = self.story_file.decode("utf-8", "replace")
            self.halted_reason = (
                f"The z-machine ran {what} for over {self.time_limit:g} s and was stopped (the story {story} "
                "loops without asking for input)."
                if fired[0]
                else f"The z-machine halted on a runtime error (an illegal opcode, a bad address, a division by zero) in the story {story} "
                f"while running {what}."
            )
            raise InterpreterHaltedError(self.halted_reason)
        return result
