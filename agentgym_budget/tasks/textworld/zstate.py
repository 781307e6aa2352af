"""Checks of a z-machine state against its story file, before the state reaches the interpreter.

Jericho's ``FrotzEnv.set_state`` copies the state into the C interpreter without any check: a
program counter outside the story, a stack or RAM buffer of the wrong length, or stack and frame
pointers outside the stack make the interpreter read or write out of bounds (a crash, a hang, or
a corrupted interpreter that later restores genuine states wrongly). :func:`check_zstate` refuses
such a state with :class:`~agentgym_budget.errors.SnapshotMismatchError`:

* RAM is a 1-D ``uint8`` array of exactly the story's dynamic memory size, the stack exactly the
  interpreter's stack size;
* ``0x40 <= pc <`` the story's length; ``0 <= sp <= fp <=`` the stack's length in words; the call
  frames chained from ``fp`` (``frame_count`` of them, 4 words each at least) each hold a return
  address inside the story and end exactly at the stack's top;
* the narrative text fits jericho's buffer (at most 8,191 bytes); the opcode is a byte; the random generator's fields fit the C types jericho passes them as;
* the header words the game cannot change (version, memory map, table addresses, length and
  checksum) equal the story's; every object's property-table address and every property's
  size byte equal the story's, every parent, sibling and child number names an object, and no
  object's child list loops (frotz walks them inside one instruction, where no watchdog reaches).

Example:
    >>> import warnings
    >>> from agentgym_budget.tasks.textworld import games
    >>> from agentgym_budget.tasks.textworld.interpreter import InterpreterLease
    >>> path = str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     lease = InterpreterLease.start(path, seed=1)
    >>> _ = lease.reset()
    >>> layout = StoryLayout.of(path, stack_bytes=2048)
    >>> state = lease.get_state()
    >>> check_zstate(state, layout)
    >>> check_zstate((state[0], state[1], 2**31 - 1, *state[3:]), layout)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.SnapshotMismatchError: Invalid z-machine state: program counter 2147483647 is out of range (expected 64 <= pc < 382352).
    >>> lease.close()
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentgym_budget.errors import DataError, SnapshotMismatchError
from agentgym_budget.storage.safe_json import read_regular_file
from agentgym_budget.tasks.textworld.story_file import MAX_STORY_BYTES

__all__: list[str] = []

_CONSTANT_HEADER_BYTES = (0, *range(4, 16), *range(0x18, 0x1E))  # version, memory map, tables, length, checksum
_FRAME_WORDS = 4
_MAX_OBJECTS = 65535
_NARRATIVE_BYTES = 8191  # jericho's narrative buffer: 8,500 bytes crash it (measured), 8,192 do not
_INT32 = 2**31
_INT64 = 2**63


@dataclass(frozen=True)
class StoryLayout:
    """What a state of a story must agree with (read once per story file).

    Attributes:
        ram_bytes: The dynamic memory's size (the header's static-memory base).
        story_bytes: The story's length (from its header).
        stack_bytes: The interpreter's stack size in bytes.
        fixed_offsets: RAM offsets whose bytes no running game changes.
        fixed_values: The story's bytes at ``fixed_offsets``.
        relation_offsets: RAM offsets of every object's parent, sibling and child numbers.
        relation_width: 1 (versions 1-3) or 2 bytes (big-endian) per object number.
        objects: How many objects the story defines.
    """

    ram_bytes: int
    story_bytes: int
    stack_bytes: int
    fixed_offsets: np.ndarray
    fixed_values: np.ndarray
    relation_offsets: np.ndarray
    relation_width: int
    objects: int

    @classmethod
    def of(cls, story_path: str, stack_bytes: int) -> StoryLayout:
        """The layout of the story file ``story_path`` (cached while the file is unchanged)."""
        stat = os.stat(story_path)
        return _layout(os.path.abspath(story_path), (stat.st_mtime_ns, stat.st_size), stack_bytes)


def _word(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 2], "big")


def _property_header_offsets(data: bytes, address: int, version: int, end: int) -> list[int]:
    """Offsets of the text-length byte, every property's size byte(s) and the terminator of one table."""
    offsets = [address]
    at = address + 1 + 2 * data[address]
    while at < end:
        size = data[at]
        offsets.append(at)
        if size == 0:
            return offsets
        if version <= 3:
            at += 1 + (size >> 5) + 1
        elif size & 0x80:
            offsets.append(at + 1)
            length = data[at + 1] & 0x3F if at + 1 < end else 0
            at += 2 + (length or 64)
        else:
            at += 1 + (1 if size & 0x40 == 0 else 2)
    raise ValueError("property table runs past dynamic memory")


@functools.lru_cache(maxsize=64)
def _layout(path: str, stamp: tuple[int, int], stack_bytes: int) -> StoryLayout:
    try:
        data = read_regular_file(path, what="TextWorld story file", max_bytes=MAX_STORY_BYTES)
    except DataError as err:
        raise SnapshotMismatchError(f"Cannot check the state against its story: {err}") from err
    if len(data) < 64:
        raise SnapshotMismatchError(f"The story file {path} is {len(data)} bytes long: not a z-machine story.")
    version, ram_bytes = data[0], _word(data, 0x0E)
    scale = 2 if version <= 3 else 4 if version <= 5 else 8
    story_bytes = min(len(data), _word(data, 0x1A) * scale or len(data))
    fixed = list(_CONSTANT_HEADER_BYTES)
    relations: list[int] = []
    width, entry, defaults = (1, 9, 31) if version <= 3 else (2, 14, 63)
    first = _word(data, 0x0A) + 2 * defaults
    lowest, objects = ram_bytes, 0
    try:
        while objects < _MAX_OBJECTS and first + (objects + 1) * entry <= min(lowest, ram_bytes):
            at = first + objects * entry
            relation_at = at + (4 if version <= 3 else 6)
            pointer_at = relation_at + 3 * width
            pointer = _word(data, pointer_at)
            if not first < pointer < ram_bytes:
                break
            lowest = min(lowest, pointer)
            relations.extend(range(relation_at, pointer_at))
            fixed.extend((pointer_at, pointer_at + 1, *_property_header_offsets(data, pointer, version, ram_bytes)))
            objects += 1
    except (ValueError, IndexError):
        pass  # a story whose tables this reader cannot follow: check what was read
    fixed_offsets = np.array(sorted(set(o for o in fixed if o < ram_bytes)), dtype=np.int64)
    return StoryLayout(
        ram_bytes=ram_bytes,
        story_bytes=story_bytes,
        stack_bytes=stack_bytes,
        fixed_offsets=fixed_offsets,
        fixed_values=np.frombuffer(data, dtype=np.uint8)[fixed_offsets].copy(),
        relation_offsets=np.array(relations, dtype=np.int64),
        relation_width=width,
        objects=objects,
    )


def _invalid(message: str) -> SnapshotMismatchError:
    return SnapshotMismatchError(f"Invalid z-machine state: {message}.")


def _buffer(value: Any, name: str, size: int) -> np.ndarray:
    if not isinstance(value, np.ndarray) or value.dtype != np.uint8 or value.ndim != 1:
        shown = f"{value.dtype} array of shape {value.shape}" if isinstance(value, np.ndarray) else type(value).__name__
        raise _invalid(f"{name} is a {shown} (expected a 1-D uint8 array)")
    if value.size != size:
        raise _invalid(f"{name} holds {value.size} bytes where the story's interpreter has {size}")
    return value


def _integer(value: Any, name: str, symbol: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not low <= int(value) < high:
        raise _invalid(f"{name} {value!r} is out of range (expected {low} <= {symbol} < {high})")
    return int(value)


def _check_frames(stack: np.ndarray, fp: int, frames: int, layout: StoryLayout) -> None:
    words = stack.view("<u2")
    top = layout.stack_bytes // 2
    for _ in range(frames):
        if fp + _FRAME_WORDS > top:
            raise _invalid(f"a call frame at stack word {fp} runs past the stack's top ({top} words)")
        _, saved_fp, pc_low, pc_high = (int(w) for w in words[fp : fp + _FRAME_WORDS])
        return_pc = (pc_high << 9) | pc_low
        if not 0x40 <= return_pc < layout.story_bytes:
            raise _invalid(f"a call frame returns to {return_pc}, outside the story")
        if not fp < saved_fp + 1 <= top:
            raise _invalid(f"a call frame at stack word {fp} links to word {saved_fp + 1} (expected above it)")
        fp = saved_fp + 1
    if fp != top:
        raise _invalid(f"the call frames end at stack word {fp}, not at the stack's top ({top})")


def _check_memory(ram: np.ndarray, layout: StoryLayout) -> None:
    changed = np.flatnonzero(ram[layout.fixed_offsets] != layout.fixed_values)
    if changed.size:
        at = int(layout.fixed_offsets[changed[0]])
        raise _invalid(
            f"{changed.size} header, object-table or property-table bytes differ from the story's (first at "
            f"offset {at}: {int(ram[at])} where the story has {int(layout.fixed_values[changed[0]])})"
        )
    if layout.relation_offsets.size:
        numbers = ram[layout.relation_offsets].astype(np.int64)
        if layout.relation_width == 2:
            numbers = numbers[0::2] * 256 + numbers[1::2]
        if int(numbers.max()) > layout.objects:
            raise _invalid(
                f"an object's parent, sibling or child is object {int(numbers.max())} (the story has {layout.objects})"
            )


def _check_tree(ram: np.ndarray, layout: StoryLayout) -> None:
    """Every object sits in at most one parent's child list, and no child list loops.

    Frotz walks these lists inside single instructions (``remove_obj``, ``insert_obj``), where the
    watchdog cannot stop it: a looping list would hang the process.
    """
    numbers = ram[layout.relation_offsets].astype(np.int64)
    if layout.relation_width == 2:
        numbers = numbers[0::2] * 256 + numbers[1::2]
    relations = numbers.reshape(-1, 3).tolist()  # parent, sibling, child of objects 1..n
    listed = bytearray(layout.objects + 1)
    for holder in range(1, layout.objects + 1):
        member = relations[holder - 1][2]
        while member:
            if listed[member]:
                raise _invalid(f"object {member} appears twice in the object tree's child lists (a loop)")
            listed[member] = 1
            member = relations[member - 1][1]


def check_zstate(state: Any, layout: StoryLayout) -> None:
    """Raise :class:`SnapshotMismatchError` unless ``state`` (``FrotzEnv.get_state``'s tuple) fits ``layout``."""
    if not isinstance(state, tuple | list) or len(state) != 9:
        raise _invalid(
            f"expected a tuple of 9 fields (ram, stack, pc, sp, fp, frames, opcode, rng, narrative), "
            f"got {type(state).__name__}"
        )
    ram, stack, pc, sp, fp, frames, opcode, rng, narrative = state
    ram = _buffer(ram, "RAM", layout.ram_bytes)
    stack = _buffer(stack, "the stack", layout.stack_bytes)
    _integer(pc, "program counter", "pc", 0x40, layout.story_bytes)
    top = layout.stack_bytes // 2
    fp = _integer(fp, "frame pointer", "fp", 0, top + 1)
    _integer(sp, "stack pointer", "sp", 0, fp + 1)
    frames = _integer(frames, "frame count", "frames", 0, (top - fp) // _FRAME_WORDS + 1)
    _integer(opcode, "opcode", "opcode", 0, 256)
    if not isinstance(rng, tuple | list) or len(rng) != 3:
        raise _invalid(f"the random generator is {rng!r:.60} (expected (a, interval, counter))")
    _integer(rng[0], "random seed", "a", -_INT64, _INT64)
    _integer(rng[1], "random interval", "interval", 0, _INT32)
    _integer(rng[2], "random counter", "counter", 0, _INT32)
    if not isinstance(narrative, bytes) or len(narrative) > _NARRATIVE_BYTES:
        shown = f"{len(narrative)} bytes" if isinstance(narrative, bytes) else type(narrative).__name__
        raise _invalid(f"the narrative is {shown} (expected bytes, at most {_NARRATIVE_BYTES})")
    _check_frames(stack, fp, frames, layout)
    _check_memory(ram, layout)
    if layout.relation_offsets.size:
        _check_tree(ram, layout)
