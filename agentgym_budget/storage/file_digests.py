"""SHA-256 digests of files and folders, computed once per version of them (for run provenance).

:func:`path_digest` hashes a file, or a folder as a whole (every regular file below it, by relative
path, symbolic links to folders not followed). A model or data folder of gigabytes is read once:
the result is kept in the on-disk cache (:func:`~agentgym_budget.storage.cache.cached_directory`,
namespace ``file-sha256``) under the path, size and modification time of every file, and in memory
for the process, so the next run with the same files only reads their ``stat``. A file changed in
place gets a new modification time, so a new digest.

Example:
    >>> import tempfile, pathlib
    >>> cache, model = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp())
    >>> _ = (model / "weights.bin").write_text("hello")
    >>> path_digest(model / "weights.bin", root=cache)
    {'sha256': '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', 'bytes': 5}
    >>> folder = path_digest(model, root=cache)
    >>> folder["files"], folder["bytes"], len(folder["sha256"])
    (1, 5, 64)
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from agentgym_budget.storage.cache import _sha256, cached_directory

__all__: list[str] = []

_NAMESPACE = "file-sha256"
_MEMORY: dict[str, dict[str, Any]] = {}
_MAX_MEMORY = 256


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    """``(relative path, size, mtime_ns)`` of every regular file below ``folder``, sorted."""
    found = []
    for directory, names, files in os.walk(folder):
        names.sort()
        for name in files:
            path = Path(directory) / name
            try:
                info = path.stat()
            except OSError:
                continue  # a dangling link
            if stat.S_ISREG(info.st_mode):
                found.append((path.relative_to(folder).as_posix(), info.st_size, info.st_mtime_ns))
    return sorted(found)


def path_digest(path: str | os.PathLike[str], *, root: Path | None = None) -> dict[str, Any]:
    """The SHA-256 of the file ``path``, or of the folder ``path`` (see the module docstring).

    Returns:
        ``{"sha256", "bytes"}`` for a file; ``{"sha256", "bytes", "files"}`` for a folder, whose digest is the
        SHA-256 of its ``sha256sum``-style listing (``<digest>  <relative path>`` lines, sorted by path).

    Raises:
        OSError: ``path`` does not exist or is neither a regular file nor a folder.
    """
    path = Path(path).resolve()
    info = path.stat()
    folder = stat.S_ISDIR(info.st_mode)
    listing = _listing(path) if folder else []
    if folder:
        params: dict[str, Any] = {"folder": str(path), "files": listing}
    elif stat.S_ISREG(info.st_mode):
        params = {"file": str(path), "bytes": info.st_size, "mtime_ns": info.st_mtime_ns}
    else:
        raise OSError(f"{path} is neither a regular file nor a folder: it has no digest.")
    memo = hashlib.sha256(repr(sorted(params.items())).encode()).hexdigest()
    if memo not in _MEMORY:
        if len(_MEMORY) >= _MAX_MEMORY:
            _MEMORY.clear()

        def build(entry: Path) -> None:
            (entry / "digest").write_text(_compute(path, listing) if folder else _sha256(path))

        entry = cached_directory(_NAMESPACE, params, build, root=root)
        digest = {"sha256": (entry / "digest").read_text().strip(), "bytes": info.st_size}
        if folder:
            digest.update(bytes=sum(size for _, size, _ in listing), files=len(listing))
        _MEMORY[memo] = digest
    return dict(_MEMORY[memo])


def _compute(folder: Path, listing: list[tuple[str, int, int]]) -> str:
    lines = "".join(f"{_sha256(folder / name)}  {name}\n" for name, _, _ in listing)
    return hashlib.sha256(lines.encode()).hexdigest()
