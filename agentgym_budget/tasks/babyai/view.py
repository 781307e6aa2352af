"""What the agent sees: minigrid's egocentric view and its visible cells, computed straight from the grid.

minigrid builds the view (``gen_obs``) by slicing the grid into a new ``Grid``, rotating it up to four
times (each a new ``Grid``), spreading visibility over it and encoding it: about two thirds of a step.
:func:`egocentric_view` gives the same codes without building any grid: the view's cell ``(i, j)`` is the
grid cell ``top_left - j * forward + i * right`` (as minigrid's bot maps it; cells outside the grid are
walls), visibility spreads from the agent exactly as minigrid's ``Grid.process_vis`` spreads it, and the
agent's own cell shows what it carries. :func:`visible_cells` is the visibility alone (the bot's
``gen_obs_grid`` use). Both are tested equal to minigrid's on random states of every level.

The level is read duck-typed (``grid``, ``agent_pos``, ``agent_dir``, ``carrying``, ``agent_view_size``):
this module does not import minigrid.
"""

from __future__ import annotations

from typing import Any

__all__: list[str] = []  # used by the engine and the planner

DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (0, 1), (-1, 0), (0, -1))
"""minigrid's ``DIR_TO_VEC``: east, south, west, north."""

UNSEEN, EMPTY, OUTSIDE = (0, 0, 0), (1, 0, 0), (2, 5, 0)
"""Codes of a cell not seen, an empty cell, and a cell outside the grid (minigrid puts a grey wall there)."""


def _cells(level: Any) -> tuple[list[list[tuple[int, int]]], list[list[Any]], list[list[bool]]]:
    """The view's grid cells, their objects (``OUTSIDE`` outside the grid) and which of them are seen."""
    size = level.agent_view_size
    fx, fy = DIRECTIONS[level.agent_dir]
    rx, ry = -fy, fx
    ax, ay = level.agent_pos
    left_x, left_y = ax + fx * (size - 1) - rx * (size // 2), ay + fy * (size - 1) - ry * (size // 2)
    grid = level.grid
    cells, width, height = grid.grid, grid.width, grid.height
    places = [[(left_x - fx * j + rx * i, left_y - fy * j + ry * i) for j in range(size)] for i in range(size)]
    objects = [
        [cells[y * width + x] if 0 <= x < width and 0 <= y < height else OUTSIDE for x, y in column]
        for column in places
    ]
    clear = [[obj is None or (obj is not OUTSIDE and obj.see_behind()) for obj in column] for column in objects]
    seen = [[False] * size for _ in range(size)]
    seen[size // 2][size - 1] = True
    for j in range(size - 1, -1, -1):  # minigrid's Grid.process_vis, on plain lists
        for i in range(size - 1):
            if seen[i][j] and clear[i][j]:
                seen[i + 1][j] = True
                if j > 0:
                    seen[i + 1][j - 1] = seen[i][j - 1] = True
        for i in range(size - 1, 0, -1):
            if seen[i][j] and clear[i][j]:
                seen[i - 1][j] = True
                if j > 0:
                    seen[i - 1][j - 1] = seen[i][j - 1] = True
    return places, objects, seen


def visible_cells(level: Any) -> list[tuple[int, int]]:
    """The grid cells the agent sees (cells outside the grid included, as minigrid's view has them)."""
    places, _, seen = _cells(level)
    size = len(places)
    return [places[i][j] for i in range(size) for j in range(size) if seen[i][j]]


def egocentric_view(level: Any) -> list[list[tuple[int, int, int]]]:
    """minigrid's ``gen_obs()["image"]`` as nested lists: ``view[x][y] = (type, colour, state)`` codes."""
    _, objects, seen = _cells(level)
    size = len(objects)
    view = [
        [
            (UNSEEN if not visible else EMPTY if obj is None else OUTSIDE if obj is OUTSIDE else tuple(obj.encode()))
            for obj, visible in zip(column, seen_column, strict=True)
        ]
        for column, seen_column in zip(objects, seen, strict=True)
    ]
    carried = level.carrying
    view[size // 2][size - 1] = EMPTY if carried is None else tuple(carried.encode())
    return view
