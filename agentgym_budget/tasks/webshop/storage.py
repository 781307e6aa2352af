"""Code-free, validated storage of WebShop's cache entries (catalog records, search index).

Every WebShop cache entry is JSON or ``.npy`` arrays of plain numbers, read with
``json.load`` / ``np.load(allow_pickle=False)`` and checked field by field, so a file
planted in a shared cache directory can at worst make the loader fail, never run code.
An entry that fails its checks (truncated, junk, bit flips that break the structure) is
deleted and built again by :func:`load_or_rebuild`; its build is deterministic, so the
rebuilt entry is the one the caller expected.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> def build(folder):
    ...     (folder / "v.json").write_text('{"n": 3}')
    >>> def load(folder):
    ...     return check_int(read_json(folder / "v.json", dict).get("n"), "n", folder)
    >>> load_or_rebuild("demo", {"k": 1}, build, load, root=root)
    3
    >>> next((root / "demo").glob("*/v.json")).write_text("{junk")
    5
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as repairs:
    ...     warnings.simplefilter("always")
    ...     load_or_rebuild("demo", {"k": 1}, build, load, root=root)
    3
    >>> [type(repair.message).__name__ for repair in repairs]
    ['CacheRepairWarning']
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from filelock import FileLock

from agentgym_budget.errors import DataError
from agentgym_budget.storage.cache import cached_directory
from agentgym_budget.storage.safe_json import read_json_file

__all__: list[str] = []

T = TypeVar("T")


def read_json(path: Path, expected: type) -> Any:
    """``json.load`` of ``path``, which must hold a JSON value of type ``expected`` at the top level.

    Raises:
        DataError: The file is missing, unreadable, not JSON or of another type (names the file).
    """
    return read_json_file(path, what="WebShop cache", expected=expected, max_bytes=2**40)


def load_array(path: Path, dtype: str, ndim: int = 1) -> np.ndarray:
    """A memory-mapped ``.npy`` array of ``dtype`` (never unpickled).

    Raises:
        DataError: The file is missing, not an ``.npy`` file, or holds another dtype or rank.
    """
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as err:
        raise DataError(f"WebShop cache: cannot read the array {path} ({err}).") from err
    if array.dtype != np.dtype(dtype) or array.ndim != ndim:
        raise DataError(f"WebShop cache: {path} holds a {array.dtype} array of rank {array.ndim}, expected {dtype}.")
    return array


def _fail(kind: str, value: Any, where: str, source: Path) -> DataError:
    return DataError(f"WebShop cache: {source}: {where} must be {kind}, got {value!r:.60}.")


def check_str(value: Any, where: str, source: Path) -> str:
    """``value`` if it is a string (else :class:`DataError`)."""
    if not isinstance(value, str):
        raise _fail("a string", value, where, source)
    return value


def check_strs(value: Any, where: str, source: Path) -> tuple[str, ...]:
    """``value`` as a tuple if it is a list of strings (else :class:`DataError`)."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail("a list of strings", value, where, source)
    return tuple(value)


def check_float(value: Any, where: str, source: Path) -> float:
    """``value`` as a float if it is a finite JSON number (else :class:`DataError`)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise _fail("a number", value, where, source)
    return float(value)


def check_int(value: Any, where: str, source: Path) -> int:
    """``value`` if it is a JSON integer (else :class:`DataError`)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail("an integer", value, where, source)
    return value


def load_or_rebuild(
    namespace: str,
    params: Mapping[str, Any],
    build: Callable[[Path], None],
    load: Callable[[Path], T],
    *,
    root: Path | None = None,
) -> T:
    """``load(entry)`` of the cache entry for ``params``, building it first if needed.

    When ``load`` raises :class:`DataError` (a corrupt entry), the entry is deleted and built
    again, once; a second failure is raised.
    """
    folder = cached_directory(namespace, params, build, root=root)
    try:
        return load(folder)
    except DataError:
        with FileLock(str(folder) + ".lock"):
            try:
                return load(folder)
            except DataError:
                shutil.rmtree(folder, ignore_errors=True)
    return load(cached_directory(namespace, params, build, root=root))
