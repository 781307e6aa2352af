"""GLAM's text for a BabyAI view: one sentence per wall line and per visible object.

The agent sees a 7x7 square ahead of it (minigrid's egocentric ``image``: ``[x, y]`` cells of
``[type, colour, state]`` codes, the agent at the middle of the bottom row, facing up). The sentences are
those of GLAM's BabyAI-Text (Carta et al., 2023), in its order:

* ``You carry a {colour} {type}`` when the agent carries something;
* ``You see a wall N step(s) forward|left|right`` when the first non-empty cell straight ahead, straight left
  or straight right of the agent is a wall (walls elsewhere are not described);
* ``You see a {colour} {type} ...`` for every other visible object, column by column from the left and
  from the farthest cell, with its place as ``X step(s) left|right and Y step(s) forward`` (one part when it
  lies on the agent's row or column); a door says its state: ``You see a closed red door 2 steps forward``
  (``an open``, ``a closed``, ``a locked``).

Unseen cells (behind walls and closed doors) are never described. A view with nothing to say gives
:data:`NOTHING`.

Example:
    >>> import numpy as np
    >>> view = np.zeros((7, 7, 3), dtype=np.uint8)
    >>> view[:, :, 0] = 1  # empty, all visible
    >>> view[3, 3] = (2, 5, 0)  # a wall 3 steps ahead
    >>> view[1, 4] = (6, 0, 0)  # a red ball 2 left and 2 ahead
    >>> view[5, 6] = (4, 2, 2)  # a locked blue door 2 steps right
    >>> print("\\n".join(describe(view, ("green", "key"))))
    You carry a green key
    You see a wall 3 steps forward
    You see a red ball 2 steps left and 2 steps forward
    You see a locked blue door 2 steps right
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

__all__: list[str] = []  # used by the family: the text is documented in the module docstring

TYPE_NAMES: tuple[str, ...] = (
    "unseen",
    "empty",
    "wall",
    "floor",
    "door",
    "key",
    "ball",
    "box",
    "goal",
    "lava",
    "agent",
)
"""minigrid's object type codes (``OBJECT_TO_IDX``), by code."""

COLOR_NAMES: tuple[str, ...] = ("red", "green", "blue", "purple", "yellow", "grey")
"""minigrid's colour codes (``COLOR_TO_IDX``), by code."""

DOOR_STATES: tuple[str, ...] = ("an open", "a closed", "a locked")
"""A door's state code (0 open, 1 closed, 2 locked) as the sentence says it."""

NOTHING = "You see nothing but the floor around you"
"""The text of a view with no wall line and no object."""

_EMPTY, _WALL, _DOOR, _AGENT = 1, 2, 4, 10


def _steps(count: int, direction: str) -> str:
    return f"{count} step {direction}" if count == 1 else f"{count} steps {direction}"


def offset_text(right: int, forward: int) -> str:
    """Where a cell ``right`` cells to the right (negative: left) and ``forward`` cells ahead lies, in words.

    Example:
        >>> offset_text(-1, 3), offset_text(2, 0), offset_text(0, 1)
        ('1 step left and 3 steps forward', '2 steps right', '1 step forward')
    """
    parts = []
    if right:
        parts.append(_steps(abs(right), "left" if right < 0 else "right"))
    if forward:
        parts.append(_steps(forward, "forward"))
    return " and ".join(parts)


def _wall_line(cells: list, places: list[tuple[int, int]], direction: str) -> str | None:
    """The wall sentence for a line of cells leaving the agent (nearest first), if it ends at a wall."""
    for distance, (x, y) in enumerate(places, start=1):
        code = cells[x][y][0]
        if code == _EMPTY:
            continue
        return f"You see a wall {_steps(distance, direction)}" if code == _WALL else None
    return None


def describe(image: Any, carrying: tuple[str, str] | None) -> list[str]:
    """The sentences for minigrid's egocentric ``image`` and the carried object's ``(colour, type)``.

    Args:
        image: ``(size, size, 3)`` codes, ``[x][y]`` (an array or nested lists, :func:`~.view.egocentric_view`);
            the agent is at ``(size // 2, size - 1)`` facing ``y = 0``.
        carrying: The carried object's colour and type, or ``None``.

    Returns:
        The sentences in the module docstring's order (``[NOTHING]`` when there is none).
    """
    cells = image.tolist() if isinstance(image, np.ndarray) else image
    size = len(cells)
    ax, ay = size // 2, size - 1
    lines = [f"You carry a {carrying[0]} {carrying[1]}"] if carrying is not None else []
    for direction, places in _lines(size):
        line = _wall_line(cells, places, direction)
        if line is not None:
            lines.append(line)
    for x, column in enumerate(cells):
        for y, (code, color, state) in enumerate(column):
            if code <= _WALL or code == _AGENT or (x == ax and y == ay):  # the agent's cell shows what it carries
                continue
            where = offset_text(x - ax, ay - y)
            if code == _DOOR:
                lines.append(f"You see {DOOR_STATES[state]} {COLOR_NAMES[color]} door {where}")
            else:
                lines.append(f"You see a {COLOR_NAMES[color]} {TYPE_NAMES[code]} {where}")
    return lines or [NOTHING]


@functools.cache
def _lines(size: int) -> tuple[tuple[str, tuple[tuple[int, int], ...]], ...]:
    """The cells straight ahead, left and right of the agent in a view of ``size``, nearest first."""
    ax, ay = size // 2, size - 1
    return (
        ("forward", tuple((ax, y) for y in range(ay - 1, -1, -1))),
        ("left", tuple((x, ay) for x in range(ax - 1, -1, -1))),
        ("right", tuple((x, ay) for x in range(ax + 1, size))),
    )
