"""Crash-safe result files: an append-only JSONL log of records, and atomic writes for summaries.

:class:`JsonlStore` is the log every evaluation command writes: one JSON object per line, appended
with ``flush`` + ``fsync`` as soon as a record is finished, so a killed run loses at most the record
being written. A record is *committed* once its line ends with ``"\\n"``; when the store is opened
again, a trailing line without one (the write that was cut) is removed from the file, and records
whose key was already seen are ignored, so a resumed run never loses or duplicates a record.
A malformed line in the middle of the file is corruption, not a crash, and raises
:class:`~agentgym_budget.errors.DataError`.

:func:`atomic_write_text` and :func:`atomic_path` write summaries and plots through a temporary file
in the same directory that is renamed over the target, so readers never see half a file.
:func:`pin_settings` keeps a run directory's settings file (``run.json``) and refuses a rerun that
changes the settings a resumed run must keep.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "episodes.jsonl"
    >>> with JsonlStore(path, key=lambda r: r["id"]) as store:
    ...     store.append({"id": 1, "won": True}), store.append({"id": 2, "won": False})
    (True, True)
    >>> with open(path, "a") as f:
    ...     _ = f.write('{"id": 3, "wo')  # a write cut by a crash
    >>> store = JsonlStore(path, key=lambda r: r["id"])
    >>> sorted(store.keys), store.append({"id": 1, "won": True})
    ([1, 2], False)
    >>> store.close(); path.read_text().count("\\n")
    2
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from agentgym_budget.errors import DataError, RunConfigError
from agentgym_budget.runner.scrub import scrub
from agentgym_budget.storage.safe_json import read_json_file, read_regular_file

__all__ = ["JsonlStore", "read_jsonl"]


_MAX_LOG_BYTES = 1 << 40

Check = Callable[[Mapping[str, Any]], str | None]
"""A record check: ``None`` when a record is usable, else the problem (see :mod:`agentgym_budget.runner.records`)."""


def numbered_jsonl(
    path: str | Path, *, repair: bool = False, check: Check | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` of every committed record of a JSONL log (see :func:`read_jsonl`)."""
    path = Path(path)
    if not path.exists():
        return []
    data = read_regular_file(path, what="log", max_bytes=_MAX_LOG_BYTES)  # a FIFO or device is refused, never read
    end = data.rfind(b"\n") + 1
    if end < len(data) and repair:
        with open(path, "r+b") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())
    records = []
    for number, line in enumerate(data[:end].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except RecursionError:
            raise DataError(f"{path}:{number} is nested too deeply to be a record; the log is corrupt.") from None
        except ValueError as err:
            raise DataError(f"{path}:{number} is not valid JSON ({err}); the log is corrupt.") from err
        if not isinstance(record, dict):
            raise DataError(f"{path}:{number} is not a JSON object; the log is corrupt.")
        problem = check(record) if check is not None else None
        if problem:
            raise DataError(f"{path}:{number} is not a usable record: {problem}.")
        records.append((number, record))
    return records


def read_jsonl(path: str | Path, *, repair: bool = False, check: Check | None = None) -> list[dict[str, Any]]:
    """Read the committed records of a JSONL log (a cut last line is skipped, or removed if ``repair``).

    Args:
        path: The log (a missing file holds no record).
        repair: Remove a cut last line from the file.
        check: Returns the problem of a record that is valid JSON but unusable (e.g. a missing field).

    Raises:
        DataError: A committed line is not a JSON object, or ``check`` finds a problem; the message
            names the file and line.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
        >>> _ = path.write_text('{"id": 1}\\n{"name": "x"}\\n')
        >>> read_jsonl(path, check=lambda r: None if "id" in r else "field 'id' is missing")
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.DataError: ...log.jsonl:2 is not a usable record: field 'id' is missing.
    """
    return [record for _, record in numbered_jsonl(path, repair=repair, check=check)]


class JsonlStore:
    """An append-only JSONL log with resume (see the module docstring).

    Args:
        path: The log file (created with its directory if missing).
        key: Identity of a record; a record whose key is already in the log is not appended again.
        check: Checks every logged record (see :func:`read_jsonl`).

    Raises:
        DataError: A committed line is corrupt, fails ``check``, or has no key (a missing field); the
            message names the file and line.

    Attributes:
        records: Every committed record, in file order (first occurrence of each key).
        keys: The keys of :attr:`records`.
    """

    def __init__(
        self, path: str | Path, key: Callable[[Mapping[str, Any]], Hashable], *, check: Check | None = None
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._key = key
        self.records: list[dict[str, Any]] = []
        self.keys: set[Hashable] = set()
        for number, record in numbered_jsonl(self.path, repair=True, check=check):
            try:
                identity = key(record)
            except KeyError as err:
                raise DataError(f"{self.path}:{number} is not a usable record: field {err} is missing.") from None
            except (TypeError, ValueError, OverflowError) as err:
                raise DataError(f"{self.path}:{number} is not a usable record: {err}.") from None
            if identity not in self.keys:
                self.keys.add(identity)
                self.records.append(record)
        self._handle: IO[str] | None = None

    def append(self, record: Mapping[str, Any]) -> bool:
        """Append ``record`` durably (flush + fsync); return ``False`` if its key was already logged."""
        identity = self._key(record)
        if identity in self.keys:
            return False
        record = scrub(record)  # no API key or Authorization value is ever written
        if self._handle is None:
            self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open across appends
        self._handle.write(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self.keys.add(identity)
        self.records.append(dict(record))
        return True

    def close(self) -> None:
        """Close the file (appending reopens it)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> JsonlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it is fsynced and renamed over ``path``.

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
        >>> with atomic_path(target) as tmp:
        ...     _ = tmp.write_text("done")
        >>> target.read_text()
        'done'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp" + path.suffix, dir=path.parent)
    os.close(descriptor)
    tmp = Path(name)
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o666 & ~umask)
    try:
        yield tmp
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically; return the path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def atomic_write_json(path: str | Path, data: Any) -> Path:
    """Write ``data`` as indented JSON to ``path`` atomically; return the path."""
    return atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False, allow_nan=True) + "\n")


def pin_settings(
    path: str | Path, settings: Mapping[str, Any], pinned: Sequence[str], *, keep: str, files: Sequence[str] = ()
) -> Path:
    """Write a run's ``settings`` to ``path``; if a previous run left one, its ``pinned`` keys must be equal.

    Args:
        path: The settings file (``DIR/run.json``).
        settings: JSON-serialisable settings of this run.
        pinned: Keys a rerun into the same directory must not change.
        keep: How to name the pinned settings in the error (e.g. ``"the env, seed and mode"``).
        files: Keys whose value may be the path of an existing file (a probe run's ``reference`` log): such a
            path is stored relative to the run directory, so a run moved together with that file resumes (a
            previous value as given still matches when it names the same file).

    Raises:
        RunConfigError: The previous settings differ on a pinned key, or the file is not a regular file holding a
            JSON object within the size and nesting limits of :mod:`agentgym_budget.storage.safe_json`.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.json"
        >>> _ = pin_settings(path, {"seed": 0, "agents": ["a"]}, ["seed"], keep="the seed")
        >>> _ = pin_settings(path, {"seed": 0, "agents": ["a", "b"]}, ["seed"], keep="the seed")
        >>> pin_settings(path, {"seed": 1, "agents": ["a"]}, ["seed"], keep="the seed")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.RunConfigError: ... holds a run with other settings (seed: 0 -> 1). A rerun into the same directory resumes it and must keep the seed; use another --out for a new run.
    """
    path = Path(path)
    current = json.loads(json.dumps(settings))
    given = {key: current[key] for key in files if isinstance(current.get(key), str) and Path(current[key]).is_file()}
    current |= {key: os.path.relpath(Path(value).resolve(), path.parent.resolve()) for key, value in given.items()}
    if path.exists():
        try:  # a regular file holding a JSON object, within the size and nesting limits (.safe_json)
            previous = read_json_file(path, what="run settings", expected=dict)
        except DataError as err:
            raise RunConfigError(f"{err} Remove it or use another --out.") from err
        changed = [
            key
            for key in pinned
            if previous.get(key) != current.get(key) and not same_path(previous.get(key), given.get(key))
        ]
        if changed:
            details = ", ".join(f"{k}: {previous.get(k)!r} -> {current.get(k)!r}" for k in changed)
            raise RunConfigError(
                f"{path.parent} holds a run with other settings ({details}). A rerun into the same directory resumes "
                f"it and must keep {keep}; use another --out for a new run."
            )
    return atomic_write_json(path, current)


def same_path(stored: Any, given: str | None) -> bool:
    """Whether a path setting stored by an earlier run (as given then) names the same file or directory as ``given``.

    Example:
        >>> same_path("runs/a/../a/final", "runs/a/final"), same_path(None, "runs/a/final")
        (True, False)
    """
    return isinstance(stored, str) and given is not None and Path(stored).resolve() == Path(given).resolve()
