"""The result files of a run or report, written as one consistent set, and the plot formats.

A command's summary files and plots belong together: ``summary.json`` and ``heatmap.png`` must
describe the same grid. :func:`output_set` stages every file of a new set in a hidden directory
beside them; only when all were written does it move them into place and remove the files of the
set that this write did not produce (a ``difference.csv`` from an earlier run with two agents, PNGs
after ``--no-plots``, a PDF after ``--plot-format png``). If writing fails, the directory keeps the
previous set untouched. Logs (``episodes.jsonl``) and settings (``run.json``) are never part of a set.

Example:
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (out / "stale.csv").write_text("old")
    >>> with output_set(out, ["summary.json", "stale.csv"]) as outputs:
    ...     _ = outputs.path("summary.json").write_text("{}")
    >>> sorted(p.name for p in out.iterdir()), [p.name for p in outputs.written]
    (['summary.json'], ['summary.json'])
    >>> parse_plot_formats("png,svg"), plot_names(["heatmap"])
    (('png', 'svg'), ['heatmap.png', 'heatmap.pdf', 'heatmap.svg'])
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentgym_budget.errors import InvalidOptionError, did_you_mean
from agentgym_budget.runner.store import atomic_write_text

__all__: list[str] = []

PLOT_FORMATS = ("png", "pdf", "svg")
"""File formats plots can be written in (``--plot-format``)."""

_STAGING_PREFIX = ".outputs-"


def parse_plot_formats(formats: str | Sequence[str]) -> tuple[str, ...]:
    """``"png,pdf"`` (or a sequence) as a tuple of distinct formats from :data:`PLOT_FORMATS`.

    Raises:
        InvalidOptionError: An unknown or no format.

    Example:
        >>> parse_plot_formats("jpg")
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: Unknown plot format 'jpg'. Did you mean 'png'? Expected one or more of png, pdf, svg separated by commas, e.g. png,pdf.
    """
    parts = formats.split(",") if isinstance(formats, str) else list(formats)
    chosen = tuple(dict.fromkeys(str(part).strip().lower().lstrip(".") for part in parts if str(part).strip()))
    for fmt in chosen:
        if fmt not in PLOT_FORMATS:
            raise InvalidOptionError(
                f"Unknown plot format {fmt!r}.{did_you_mean(fmt, PLOT_FORMATS)} Expected one or more of "
                f"{', '.join(PLOT_FORMATS)} separated by commas, e.g. png,pdf."
            )
    if not chosen:
        raise InvalidOptionError(f"No plot format given; expected one or more of {', '.join(PLOT_FORMATS)}.")
    return chosen


def plot_names(stems: Iterable[str]) -> list[str]:
    """Every file name a plot called ``stem`` can have (one per format in :data:`PLOT_FORMATS`)."""
    return [f"{stem}.{fmt}" for stem in stems for fmt in PLOT_FORMATS]


class OutputSet:
    """Files staged for :func:`output_set`.

    Attributes:
        directory: Where the set lives.
        written: The final paths of the files written, in the order they were staged (after commit).
    """

    def __init__(self, directory: Path, names: Iterable[str], staging: Path) -> None:
        self.directory = directory
        self.names = list(dict.fromkeys(names))
        self.written: list[Path] = []
        self._staging = staging
        self._staged: list[str] = []

    def path(self, name: str) -> Path:
        """Where to write the file ``name`` of the set now (it lands in :attr:`directory` on commit)."""
        if name not in self.names:
            raise ValueError(f"{name!r} is not a file of this output set ({', '.join(self.names)}).")
        if name not in self._staged:
            self._staged.append(name)
        return self._staging / name

    def _commit(self) -> None:
        produced = [name for name in self._staged if (self._staging / name).exists()]
        for name in self.names:
            if name not in produced:
                (self.directory / name).unlink(missing_ok=True)
        for name in produced:
            os.replace(self._staging / name, self.directory / name)
        self.written = [self.directory / name for name in produced]


@contextlib.contextmanager
def output_set(directory: str | Path, names: Iterable[str]) -> Iterator[OutputSet]:
    """Stage a new set of the files ``names`` in ``directory`` (see the module docstring).

    Staging directories left behind by a killed process are removed first.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for leftover in directory.glob(_STAGING_PREFIX + "*"):
        shutil.rmtree(leftover, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=directory))
    try:
        outputs = OutputSet(directory, names, staging)
        yield outputs
        outputs._commit()
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_csv(path: str | Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    """Write ``rows`` (mappings with the same keys, in order) as CSV, atomically; no rows, an empty file.

    Example:
        >>> import tempfile, pathlib
        >>> path = write_csv(pathlib.Path(tempfile.mkdtemp()) / "a.csv", [{"k": 1, "won": True}])
        >>> path.read_text().splitlines()
        ['k,won', '1,True']
    """
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return atomic_write_text(path, buffer.getvalue())
