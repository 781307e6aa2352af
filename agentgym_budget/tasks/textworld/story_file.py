"""Checking Z-machine story files (``.z8``) before the interpreter sees them.

Jericho's interpreter (frotz) does not raise on a story file it cannot read: it prints
``Fatal error: Story file read error`` and calls ``exit()``, ending the whole Python process,
and damaged code makes it stop the same way later. :func:`check_story_file` reads the file as
frotz would and raises :class:`~agentgym_budget.errors.DataError` naming the file instead.
It checks the header (Z-machine Standard 1.1, section 11):

* the version byte (1-8);
* the file length field (in units of 2, 4 or 8 bytes by version): the file must hold at least
  that many bytes (longer files are padded, which is allowed);
* the header addresses (dictionary, objects, globals, abbreviations, static and high memory,
  initial program counter) lie inside the story, the object and global variables tables in
  dynamic memory, high memory above it;
* the checksum at ``0x1C``: the sum of the bytes from ``0x40`` to the declared end, modulo
  ``0x10000`` (what the ``@verify`` opcode checks); any single flipped bit there changes it.

The checksum does not cover the 64-byte header itself: a damaged header field that still
passes these checks (an address moved within its valid range) is not detected. On a
TextWorld game, 19 of the 512 possible single-bit header flips pass and make the interpreter
loop; none ends the process. Cache entries are also covered by their SHA-256 manifest
(:mod:`agentgym_budget.storage.cache`), which catches every change.

A file that passed is remembered per process with its ``stat`` (size, times, inode), so checking
the same game again costs one ``stat``.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "game.z8"
    >>> _ = path.write_bytes(b"\\x08" + bytes(40))
    >>> check_story_file(path)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.DataError: ...game.z8 is not a complete Z-machine story file: it has 41 bytes, ...
"""

from __future__ import annotations

import os

import numpy as np

from agentgym_budget.errors import DataError
from agentgym_budget.storage.safe_json import read_regular_file

__all__ = ["check_story_file"]

_HEADER_SIZE = 0x40
_GLOBALS_SIZE = 240 * 2
_ADDRESSES = {  # header offset -> field (byte addresses that must lie inside the story)
    0x04: "high memory base",
    0x08: "dictionary address",
    0x0A: "object table address",
    0x0C: "global variables address",
    0x0E: "static memory base",
}
_OPTIONAL_TABLES = {  # version 5+: 0 (absent) or a byte address inside the story
    0x2E: "terminating characters table address",
    0x34: "alphabet table address",
    0x36: "header extension table address",
}
_CHECKED: dict[str, tuple[int, int, int, int]] = {}
MAX_STORY_BYTES = 512 * 2**10
"""The largest story a Z-machine can hold (version 8: 512 KiB); a bigger file is not a story."""


def _word(header: bytes, offset: int) -> int:
    return int.from_bytes(header[offset : offset + 2], "big")


def _scale(version: int) -> int:
    """Bytes per unit of the file length field (Standard 1.1, section 11.1.6)."""
    return 2 if version <= 3 else 4 if version <= 5 else 8


def _signature(path: str) -> tuple[int, int, int, int]:
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


def _problem(data: bytes) -> str | None:
    """Why ``data`` is not a usable story file (``None`` if it is)."""
    if len(data) < _HEADER_SIZE:
        return f"it has {len(data)} bytes, fewer than the {_HEADER_SIZE}-byte header"
    version = data[0]
    if not 1 <= version <= 8:
        return f"its version byte is {version}, expected 1-8 (TextWorld writes version 8, '.z8')"
    declared = _word(data, 0x1A) * _scale(version)
    if declared == 0 and version <= 3:  # some early games leave the length field empty
        declared = len(data)
    if declared < _HEADER_SIZE:
        return f"its header declares a length of {declared} bytes, less than the header itself"
    if len(data) < declared:
        return f"it has {len(data)} bytes but its header declares {declared} (the file is truncated)"
    for offset, field in _ADDRESSES.items():
        if not _HEADER_SIZE <= _word(data, offset) < declared:
            return f"its {field} ({_word(data, offset):#x}) lies outside the story ({declared} bytes)"
    static, high = _word(data, 0x0E), _word(data, 0x04)
    if high < static:
        return f"its high memory base ({high:#x}) lies below its static memory base ({static:#x})"
    for offset, field, size in ((0x0A, "object table", 0), (0x0C, "global variables table", _GLOBALS_SIZE)):
        if _word(data, offset) + size > static:
            return f"its {field} ({_word(data, offset):#x}) lies outside dynamic memory (below {static:#x})"
    if version >= 2 and not _HEADER_SIZE <= _word(data, 0x18) < declared:
        return f"its abbreviations table address ({_word(data, 0x18):#x}) lies outside the story"
    if version != 6 and not _HEADER_SIZE <= _word(data, 0x06) < declared:
        return f"its initial program counter ({_word(data, 0x06):#x}) lies outside the story"
    for offset, field in _OPTIONAL_TABLES.items():
        if version >= 5 and _word(data, offset) and not _HEADER_SIZE <= _word(data, offset) < declared:
            return f"its {field} ({_word(data, offset):#x}) lies outside the story"
    if version >= 3:
        expected = _word(data, 0x1C)
        total = int(np.frombuffer(data, dtype=np.uint8, count=declared - _HEADER_SIZE, offset=_HEADER_SIZE).sum())
        if total & 0xFFFF != expected:
            return (
                f"its checksum is {total & 0xFFFF:#06x} but its header says {expected:#06x} "
                "(the file is damaged: bit flips or overwritten bytes)"
            )
    return None


def check_story_file(path: str | os.PathLike[str]) -> None:
    """Raise :class:`~agentgym_budget.errors.DataError` unless ``path`` is a sound Z-machine story file.

    Raises:
        DataError: The file is missing, unreadable, truncated or damaged (the message says which check failed).
    """
    key = os.path.abspath(path)
    try:
        signature = _signature(key)
        if _CHECKED.get(key) == signature:
            return
        data = read_regular_file(key, what="TextWorld story file", max_bytes=MAX_STORY_BYTES)
        unchanged = _signature(key) == signature
    except OSError as err:
        raise DataError(f"Cannot read the story file {key}: {err}.") from err
    problem = _problem(data)
    if problem is not None:
        raise DataError(
            f"{key} is not a complete Z-machine story file: {problem}. Regenerate it with TextWorld "
            "(games in the agentgym-budget cache are rebuilt when their cache entry is damaged)."
        )
    if unchanged:
        _CHECKED[key] = signature
