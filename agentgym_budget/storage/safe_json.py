"""Reading JSON from disk with limits: regular files only, a size cap, a nesting cap, typed errors.

Every loader of user-provided JSON files (WebShop's data and cache, ALFWorld's games, prompt
templates, chat formats, training runs) reads through :func:`read_json_file`, which raises
:class:`~agentgym_budget.errors.DataError` naming the file and the problem instead of hanging
(a FIFO), recursing (``[[[[...`` nested past Python's limit) or leaking ``OSError``/``RecursionError``
(a symlink loop, a device):

* the file is opened without blocking and must be a regular file (not a FIFO, socket or device);
* it holds at most ``max_bytes`` bytes (:data:`MAX_BYTES` by default) and is UTF-8;
* its arrays and objects nest at most ``max_depth`` levels (:data:`MAX_DEPTH`);
* the top-level value has the ``expected`` type, if given.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "ok.json").write_text('{"a": [1, 2]}')
    >>> read_json_file(folder / "ok.json", what="test data", expected=dict)
    {'a': [1, 2]}
    >>> _ = (folder / "deep.json").write_text("[" * 500 + "]" * 500)
    >>> read_json_file(folder / "deep.json", what="test data")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.DataError: test data: .../deep.json nests arrays and objects 500 levels deep; at most 100 are read.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_budget.errors import DataError

__all__ = ["read_json_file"]

MAX_BYTES = 256 * 2**20
"""Default size cap of a JSON file (256 MiB); loaders of bigger data (WebShop's catalogue) raise it."""

MAX_DEPTH = 100
"""Default nesting cap: no file this library reads nests deeper than about 10 levels."""

_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_DEPTH_SCAN_BYTES = 256 * 2**20  # above this, Python's parser's own recursion limit is the cap


def check_depth(data: bytes, max_depth: int) -> int:
    """The nesting depth of the JSON text ``data`` (strings skipped); raises ``ValueError`` past ``max_depth``."""
    tokens = _TOKENS.findall(data)
    steps = np.fromiter(
        (1 if t in (b"[", b"{") else -1 if t in (b"]", b"}") else 0 for t in tokens), dtype=np.int64, count=len(tokens)
    )
    depth = int(np.cumsum(steps).max(initial=0))
    if depth > max_depth:
        raise ValueError(f"nests arrays and objects {depth} levels deep; at most {max_depth} are read")
    return depth


def loads_bounded(data: bytes | str, *, what: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(data)`` with the nesting cap; :class:`DataError` (starting with ``what``) on any problem."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if len(raw) <= _DEPTH_SCAN_BYTES:
            check_depth(raw, max_depth)
        return json.loads(raw.decode("utf-8"))
    except RecursionError as err:
        raise DataError(f"{what}: the JSON nests deeper than Python can read.") from err
    except json.JSONDecodeError as err:
        raise DataError(f"{what}: is not valid JSON ({err}).") from err
    except UnicodeDecodeError as err:
        raise DataError(f"{what}: is not UTF-8 text ({err}).") from err
    except ValueError as err:
        raise DataError(f"{what}: {err}.") from err


def resolve_user_path(path: str | os.PathLike[str], *, what: str) -> Path:
    """``path`` made absolute with ``~`` and symlinks resolved; a symlink loop is a :class:`DataError`.

    Example:
        >>> resolve_user_path("/", what="a data folder")
        PosixPath('/')
    """
    try:
        return Path(path).expanduser().resolve()
    except RuntimeError as err:  # Python 3.11-3.12 report a symlink loop so
        raise DataError(f"{what}: {path} is a symlink loop; expected a file or folder.") from err
    except OSError as err:
        reason = "a symlink loop" if err.errno == errno.ELOOP else err.strerror or type(err).__name__
        raise DataError(f"{what}: cannot resolve {path} ({reason}).") from err


def stat_regular_file(path: str | os.PathLike[str], *, what: str) -> os.stat_result:
    """``os.stat(path)`` of a regular file; a missing file, symlink loop, FIFO, device or folder is a :class:`DataError`.

    Example:
        >>> stat_regular_file("/dev/null", what="test data")
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.DataError: test data: /dev/null is not a regular file (a FIFO, socket, device or folder); expected a file.
    """
    try:
        info = os.stat(path)
    except OSError as err:
        reason = "a symlink loop" if err.errno == errno.ELOOP else err.strerror or type(err).__name__
        raise DataError(f"{what}: cannot open {path} ({reason}).") from err
    if not stat.S_ISREG(info.st_mode):
        raise DataError(f"{what}: {path} is not a regular file (a FIFO, socket, device or folder); expected a file.")
    return info


def read_regular_file(path: str | os.PathLike[str], *, what: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes`` bytes (never blocks on a FIFO).

    Raises:
        DataError: The file is missing, a symlink loop, not a regular file or too big (the message names it).
    """
    return _read_regular(Path(path), what, max_bytes)


def _read_regular(path: Path, what: str, max_bytes: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        reason = "a symlink loop" if err.errno == errno.ELOOP else err.strerror or type(err).__name__
        raise DataError(f"{what}: cannot open {path} ({reason}).") from err
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise DataError(
                f"{what}: {path} is not a regular file (a FIFO, socket, device or folder); expected a file."
            )
        if info.st_size > max_bytes:
            raise DataError(f"{what}: {path} holds {info.st_size:,} bytes; at most {max_bytes:,} are read.")
        try:
            data = handle.read(min(max_bytes, info.st_size) + 1)
        except OSError as err:
            raise DataError(f"{what}: cannot read {path} ({err}).") from err
    if len(data) > max_bytes:
        raise DataError(f"{what}: {path} holds over {max_bytes:,} bytes; at most {max_bytes:,} are read.")
    return data


def read_json_file(
    path: str | os.PathLike[str],
    *,
    what: str,
    expected: type | None = None,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """The JSON value in the file ``path``, read within the limits of the module docstring.

    Args:
        path: The file.
        what: What the file is, for messages (e.g. ``"WebShop data"``).
        expected: The top-level type required (``dict`` or ``list``), or ``None`` for any.
        max_bytes: Size cap.
        max_depth: Nesting cap.

    Raises:
        DataError: The file is missing, not a regular file, too big, too deep, not UTF-8 JSON, or of
            another top-level type (the message names the file).
    """
    path = Path(path)
    data = _read_regular(path, what, max_bytes)
    try:
        value = loads_bounded(data, what=what, max_depth=max_depth)
    except DataError as err:
        raise DataError(f"{what}: {path} {str(err).removeprefix(what + ': ')}") from err.__cause__
    if expected is not None and not isinstance(value, expected):
        raise DataError(
            f"{what}: {path} holds a JSON {type(value).__name__}; expected a JSON "
            f"{'object' if expected is dict else 'list' if expected is list else expected.__name__} at the top level."
        )
    return value
