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

Some runtime errors frotz reports and then carries on from, ending the process: ``@div`` and ``@mod``
by zero divide anyway (``SIGFPE``), ``@set_window`` with an illegal window writes past the window
table, a call or jump past the story's end reads on from there (``SIGSEGV``). :func:`_guard_runtime_errors` hooks that report (the library's jump slot for
``runtime_error``) so that the offending operand becomes harmless (or, past the end, the instruction
reads a zeroed scratch copy, swapped back for the game's memory when the call returns) and the
interpreter halts after the instruction; instructions that do not fail run exactly as before, at the same cost.

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
import dataclasses
import functools
import heapq
import itertools
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar, NoReturn

import jericho
import numpy as np

from agentgym_budget.errors import InterpreterHaltedError

__all__: list[str] = []

_CALL_TIME_LIMIT = 10.0
"""CPU seconds of its thread one ``load``/``reset``/``step`` may use; real TextWorld steps take milliseconds.

Counted on the calling thread's CPU clock, not the wall clock: on a machine so busy that a call waits for a
core (a 2-core machine at load 14 made a story's start take over 10 s of wall time), a call that has not
looped is never stopped. Where a thread's CPU clock cannot be read, the wall clock is used."""

BREAK_AFTER = 0.5
"""Seconds after the halt flag before the watchdog ends a loop inside one instruction (then again every as long)."""

_WALK_BYTES = 0x10001  # a 16-bit address plus the second byte of the word read there


def _break_object_walk(lib: Any) -> bool:
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


_RUNTIME_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_int)
_REPAIRS = {  # frotz error number -> (operand, value) set before the instruction goes on
    3: ((1, 1),),  # division by zero: the divisor becomes 1
    16: ((0, 0), (2, 0)),  # illegal window (@set_window 2853 writes past the window table): window 0
    17: ((1, 0),),  # illegal window property: property 0
}
_PAST_THE_END = (8, 13)  # a call or jump past the story's end: frotz reads on from there (SIGSEGV)
_SCRATCH_BYTES = 0xC0100  # every address a packed routine address or a jump can reach
_CHECKED = ("z_div", "z_mod", "store", "object_address")  # symbols that must sit where the file says


@functools.cache
def _jump_slot(library: str, symbol: str) -> tuple[int, dict[str, int]]:
    """The offset of ``symbol``'s PLT jump slot in the ELF shared library ``library``, and its symbols' offsets.

    Raises:
        ValueError: The file is not an x86-64 ELF file with that jump slot.
    """
    data = Path(library).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1 or struct.unpack_from("<H", data, 18)[0] != 62:
        raise ValueError(f"{library} is not an x86-64 ELF file")
    shoff, shentsize, shnum = struct.unpack_from("<Q", data, 0x28)[0], *struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynsym = next(section for section in sections if section[1] == 11)  # SHT_DYNSYM
    strings = sections[dynsym[6]]  # its string table (sh_link)

    def name(offset: int) -> str:
        at = strings[4] + offset
        return data[at : data.index(b"\0", at)].decode()

    symbols = [struct.unpack_from("<IBBHQQ", data, dynsym[4] + i * 24) for i in range(dynsym[5] // 24)]
    values = {name(entry[0]): entry[4] for entry in symbols if entry[4]}
    for section in sections:
        if section[1] != 4:  # SHT_RELA
            continue
        for i in range(section[5] // 24):
            offset, info, _ = struct.unpack_from("<QQq", data, section[4] + i * 24)
            if info & 0xFFFFFFFF == 7 and name(symbols[info >> 32][0]) == symbol:  # R_X86_64_JUMP_SLOT
                return offset, values
    raise ValueError(f"{library} has no jump slot for {symbol}")


def _guard_runtime_errors(lib: Any) -> Any:
    """Make runtime errors that frotz reports and then carries on from halt the interpreter instead of crashing it.

    frotz's ``z_div`` reports a zero divisor through ``runtime_error`` (called through the library's PLT),
    then reads the divisor again and divides (``SIGFPE``); ``@set_window`` with an illegal window reports
    it, then writes past the window table (``SIGSEGV``). The library's jump slot for ``runtime_error`` is
    pointed at a function that, for those errors (:data:`_REPAIRS`), sets the offending operand to a
    harmless value and the halt flag, then calls the real ``runtime_error``: the instruction ends
    without harm, the interpreter stops after it, and ordinary instructions cost nothing more.

    Returns:
        The installed callback (keep it alive as long as ``lib``), or ``None`` if ``lib`` is not the
        jericho build this expects (an unexpected layout is left alone).
    """
    try:
        slot, values = _jump_slot(str(Path(jericho.__file__).with_name("libfrotz.so")), "runtime_error")
    except (OSError, ValueError, IndexError, struct.error):
        return None
    real = ctypes.cast(lib.runtime_error, ctypes.c_void_p).value or 0
    base = real - values.get("runtime_error", -1)
    if any(base + values.get(name, -1) != ctypes.cast(getattr(lib, name), ctypes.c_void_p).value for name in _CHECKED):
        return None
    zargs = (ctypes.c_uint16 * 8).in_dll(lib, "zargs")
    halted = ctypes.c_int.in_dll(lib, "emulator_halted")
    memory = ctypes.c_void_p.in_dll(lib, "zmp")
    report = _RUNTIME_ERROR(real)
    guard = SimpleNamespace(saved=None, scratch=None, callback=None)

    def runtime_error(number: int) -> None:
        for operand, value in _REPAIRS.get(number, ()):
            zargs[operand] = value
            halted.value = 1
        if number in _PAST_THE_END and guard.saved is None:  # the instruction reads on from a zeroed copy
            guard.scratch = (ctypes.c_uint8 * _SCRATCH_BYTES)()
            guard.saved, memory.value = memory.value, ctypes.addressof(guard.scratch)
            halted.value = 1
        report(number)

    def restore() -> None:
        if guard.saved is not None:
            memory.value, guard.saved, guard.scratch = guard.saved, None, None

    guard.callback, guard.restore = _RUNTIME_ERROR(runtime_error), restore
    ctypes.c_void_p.from_address(base + slot).value = ctypes.cast(guard.callback, ctypes.c_void_p).value
    return guard


def _thread_cpu_clock() -> Callable[[], float] | None:
    """A function reading the calling thread's CPU time (from any thread), or ``None`` where there is none."""
    try:
        clock = time.pthread_getcpuclockid(threading.get_ident())
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return None
    return functools.partial(time.clock_gettime, clock)


@dataclasses.dataclass
class _Call:
    """A watched call: its library and halt flag, whether the flag was set, and its thread's CPU clock."""

    lib: Any
    flag: ctypes.c_int
    fired: list[bool]
    seconds: float
    cpu: Callable[[], float] | None
    cpu_start: float

    def cpu_left(self) -> float:
        """CPU seconds the call may still use (0 without a CPU clock: its wall-clock deadline decides)."""
        if self.cpu is None:
            return 0.0
        try:
            return self.seconds - (self.cpu() - self.cpu_start)
        except OSError:  # the thread has ended: the call is over
            return self.seconds


class Watchdog:
    """One thread that sets a jericho library's ``emulator_halted`` flag when a call uses up its CPU time."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._deadlines: list[tuple[float, int]] = []
        self._active: dict[int, _Call] = {}
        self._tickets = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, lib: Any, flag: ctypes.c_int, seconds: float) -> tuple[int, list[bool]]:
        """Watch a call into ``lib`` made by this thread: ``flag`` is set once the thread has used ``seconds`` of
        CPU time in it (:data:`_CALL_TIME_LIMIT`); the returned list's item says whether it was.

        If the call still runs :data:`BREAK_AFTER` seconds later, :func:`_break_object_walk` ends the loop it is in.
        """
        fired = [False]
        cpu = _thread_cpu_clock()
        with self._condition:
            ticket = next(self._tickets)
            self._active[ticket] = _Call(lib, flag, fired, seconds, cpu, cpu() if cpu is not None else 0.0)
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
                call = self._active[ticket]
                left = 0.0 if call.fired[0] else call.cpu_left()
                if left > 0:  # the thread waited for a core: it gets the CPU time it has not used yet
                    heapq.heappush(self._deadlines, (time.monotonic() + left, ticket))
                    continue
                if call.fired[0]:  # the flag did not stop it: a loop inside one instruction
                    _break_object_walk(call.lib)
                call.fired[0] = True
                call.flag.value = 1
                heapq.heappush(self._deadlines, (time.monotonic() + BREAK_AFTER, ticket))


_WATCHDOG = Watchdog()


class _UnloadedLibrary:
    """What ``GuardedFrotzEnv.frotz_lib`` becomes once the library is unloaded: any use raises."""

    def __init__(self, story_file: bytes) -> None:
        self.story_file = story_file.decode("utf-8", "replace")

    def refuse(self) -> NoReturn:
        raise InterpreterHaltedError(
            f"The interpreter of {self.story_file} was finalized and its library unloaded; make a new env."
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self.refuse()


class GuardedFrotzEnv(jericho.FrotzEnv):
    """A ``FrotzEnv`` whose game-running calls are time-limited and refuse to go on after a halt.

    Args:
        story_file: The story file to run.
        seed: The interpreter's seed.
        time_limit: CPU seconds one call may use (:data:`_CALL_TIME_LIMIT`).

    Raises:
        InterpreterHaltedError: The story halted or ran past ``time_limit`` while starting.
    """

    _UNLOADED: ClassVar[type[_UnloadedLibrary]] = _UnloadedLibrary
    _DLCLOSE: ClassVar[Any] = staticmethod(jericho.jericho.dlclose_func)
    """Held by the class: finalizers that run at interpreter exit may find this module's globals cleared."""

    def __init__(self, story_file: str, seed: int | None = None, time_limit: float = _CALL_TIME_LIMIT) -> None:
        self.time_limit = time_limit
        self.halted_reason: str | None = None
        super().__init__(story_file, seed)

    def load(self, story_file: str, seed: int | None = None) -> None:
        """``FrotzEnv.load`` (which starts the game), time-limited, with runtime errors halts (:func:`_guard_runtime_errors`)."""
        if "_error_guards" not in self.__dict__:
            self._error_guards = _guard_runtime_errors(self.frotz_lib)
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

    def close(self) -> None:
        """Stop the game and free its memory (``FrotzEnv.close``); a no-op once the library is unloaded."""
        if not self._library_unloaded():
            super().close()

    def __del__(self) -> None:
        """Stop the game and unload the library copy, once, whatever order a garbage collection finalizes in.

        Jericho's own ``__del__`` unloads the library even if the env holding this interpreter (TextWorld's
        ``JerichoEnv``, whose ``__del__`` calls :meth:`close`) is finalized after it, as happens when
        both are in unreachable reference cycles: that ``close`` then jumped into unmapped memory.
        """
        lib = self.__dict__.get("frotz_lib")
        if lib is None or self._library_unloaded():
            return
        self.__dict__.pop("_halted_flag", None)  # views into the library's memory
        self.__dict__.pop("_error_guards", None)
        self.frotz_lib = self._UNLOADED(self.story_file)
        lib.shutdown()
        self._DLCLOSE(lib._handle)

    def _library_unloaded(self) -> bool:
        return isinstance(self.__dict__.get("frotz_lib"), self._UNLOADED)

    def _guarded(self, what: str, call: Any, *args: Any) -> Any:
        if self._library_unloaded():
            self.frotz_lib.refuse()
        flag = self.__dict__.get("_halted_flag")
        if flag is None:
            flag = self._halted_flag = ctypes.c_int.in_dll(self.frotz_lib, "emulator_halted")
        ticket, fired = _WATCHDOG.arm(self.frotz_lib, flag, self.time_limit)
        try:
            result = call(*args)
        finally:
            _WATCHDOG.disarm(ticket)
            if self.__dict__.get("_error_guards") is not None:
                self._error_guards.restore()  # the game's memory again, after a call or jump past its end
        if fired[0] or flag.value > 0:
            story = self.story_file.decode("utf-8", "replace")
            self.halted_reason = (
                f"The z-machine ran {what} for over {self.time_limit:g} s of CPU time and was stopped (the story {story} "
                "loops without asking for input)."
                if fired[0]
                else f"The z-machine halted on a runtime error (an illegal opcode, a bad address, a division by zero) in the story {story} "
                f"while running {what}."
            )
            raise InterpreterHaltedError(self.halted_reason)
        return result
