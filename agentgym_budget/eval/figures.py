"""Figure helpers shared by every evaluation plot (matplotlib's Agg canvas; no display, no global backend change).

:func:`new_figure` lays out panels, :func:`save_figure` writes a figure atomically in the format its
file suffix names (``png``, ``pdf``, ``svg``), :func:`figure_legend` puts one legend below the panels,
:func:`add_caption` a caption below it,
and :func:`series_style` with :func:`shifted` keep the curves of different agents apart, so equal
series stay visible.

Example:
    >>> import tempfile, pathlib
    >>> figure, [axis] = new_figure(1)
    >>> _ = axis.plot(shifted([1, 2], 0, 2, step=0.1), [0, 1], label="a", **series_style(0))
    >>> figure_legend(figure, [axis])
    >>> [path] = save_figure(figure, [pathlib.Path(tempfile.mkdtemp()) / "a.svg"])
    >>> path.read_text()[:5]
    '<?xml'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_budget.runner.outputs import output_set, plot_names, write_csv
from agentgym_budget.runner.store import atomic_path, atomic_write_json

__all__ = ["shifted"]

_DPI = 110
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
_STYLES = ("-", "--", ":", "-.")


def new_figure(panels: int, *, width: float = 4.2, height: float = 3.4, columns: int = 4) -> tuple[Any, list[Any]]:
    """A figure with ``panels`` axes in a grid of at most ``columns`` columns (Agg canvas, no global state)."""
    from matplotlib.figure import Figure

    columns = max(1, min(columns, panels))
    rows = math.ceil(panels / columns)
    figure = Figure(figsize=(width * columns, height * rows + 0.4), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel().tolist()
    for extra in axes[panels:]:
        extra.set_visible(False)
    return figure, axes[:panels]


def save_figure(figure: Any, paths: Path | Sequence[Path]) -> list[Path]:
    """Render ``figure`` to each path, atomically, in the format its suffix names; return the paths."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    paths = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    for path in paths:
        with atomic_path(path) as tmp:
            figure.savefig(tmp, dpi=_DPI, format=path.suffix.lstrip(".") or "png", bbox_inches="tight")
    return paths


def figure_legend(figure: Any, axes: list[Any]) -> None:
    """One legend below the panels, from the labelled artists of every axis (each label once).

    The legend hangs from the figure's bottom edge (figure coordinates, outside the layout), so the
    panels keep their space and a tight save grows the image around it instead of moving it.
    """
    seen: dict[str, Any] = {}
    for axis in axes:
        for handle, label in zip(*axis.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    if seen:
        figure.legend(
            list(seen.values()),
            list(seen),
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            bbox_transform=figure.transFigure,
            ncols=min(len(seen), 3),
            fontsize=8,
        )


def add_caption(figure: Any, caption: str) -> Any:
    """Put ``caption`` below everything: under the figure legend if there is one, else under the panels.

    Returns the caption's text artist (an annotation placed relative to the legend when there is one).
    """
    if not figure.legends:
        return figure.text(0.5, 0.0, caption, ha="center", va="top", fontsize=8)
    from matplotlib.text import Annotation

    below = Annotation(caption, (0.5, 0.0), xycoords=figure.legends[0], xytext=(0, -6), textcoords="offset points",
                       ha="center", va="top", fontsize=8, annotation_clip=False)  # fmt: skip
    return figure.add_artist(below)


def series_style(index: int) -> dict[str, str]:
    """Marker and line style of the ``index``-th series (distinct for the first seven)."""
    return {"marker": _MARKERS[index % len(_MARKERS)], "linestyle": _STYLES[index % len(_STYLES)]}


def shifted(xs: Sequence[float], index: int, count: int, *, step: float, log: bool = False) -> np.ndarray:
    """``xs`` shifted for the ``index``-th of ``count`` series, so equal series stay visible side by side.

    The shift is ``step`` per series around 0 (in units of x, or of log2 x with ``log``).

    Example:
        >>> shifted([1, 2], 0, 2, step=0.2).tolist(), shifted([1, 2], 1, 2, step=0.2).tolist()
        ([0.9, 1.9], [1.1, 2.1])
    """
    offset = (index - (count - 1) / 2) * step
    values = np.asarray(xs, dtype=float)
    return values * 2.0**offset if log else values + offset


def write_summary_set(
    out: Path,
    summary_json: Mapping[str, Any],
    csv_rows: Sequence[Mapping[str, Any]],
    stem: str,
    draw: Callable[[], Any] | None,
    formats: Sequence[str],
) -> list[Path]:
    """Write ``summary.json``, ``summary.csv`` and the figure ``stem`` (``draw()``, in ``formats``) as one set.

    The files are one :func:`~agentgym_budget.runner.outputs.output_set` (a figure of an earlier
    write is removed when ``draw`` is ``None``). Returns the paths written.
    """
    with output_set(out, ["summary.json", "summary.csv", *plot_names([stem])]) as outputs:
        atomic_write_json(outputs.path("summary.json"), summary_json)
        write_csv(outputs.path("summary.csv"), csv_rows)
        if draw is not None:
            save_figure(draw(), [outputs.path(f"{stem}.{fmt}") for fmt in formats])
    return outputs.written
