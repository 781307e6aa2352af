"""A BabyAI episode's engine state as plain data (:class:`BabyAIState`), and its checks against the task's layout.

Nothing in a BabyAI episode is created after ``reset``: objects move, are carried, doors open and close and a
box opened by ``toggle`` disappears. So a state is the agent's place, the step counter, each object's place
and door state (objects in the order of :attr:`Layout.kinds`), the verifier's memory (what each instruction
of the mission saw) and the expert's remaining plan. Restoring puts the same objects back; a state read
from outside is checked field by field against the layout of its task first (:func:`check_state`), so an
edited snapshot is refused (typed error) or is a legal state of that task.

Example:
    >>> layout = Layout(size=(5, 5), kinds=((6, 0),), walls=frozenset({0}), doors={}, verifier=(("act", True),), descs=1)
    >>> state = BabyAIState((5, 5), (1, 1, 0), 0, -1, ((6, 0),), ((2, 2, 0, 0),), ((False, -1),), (((2, 2),),), None, 0)
    >>> check_state(state, layout)
    >>> check_state(BabyAIState((5, 5), (1, 1, 0), 0, -1, ((6, 0),), ((9, 2, 0, 0),), ((False, -1),), ((),), None, 0), layout)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.SnapshotMismatchError: Malformed snapshot: the x of BabyAI object 0 is 9 (int); expected an integer from 0 to 4.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from agentgym_budget.snapshots import schema

__all__ = ["BabyAIState"]

COMMANDS: tuple[str, ...] = ("turn left", "turn right", "go forward", "pick up", "drop", "toggle")
"""The six commands, in the order of minigrid's actions 0-5."""

ON_GRID, CARRIED, GONE = 0, 1, 2
"""Where an object is: on the grid at (x, y), carried by the agent, or gone (a box opened by ``toggle``)."""

PLAN_LIMIT = 1_000
"""Longest expert plan a state may hold."""

_DOOR, _KEY, _BALL, _BOX = 4, 5, 6, 7
_CARRIABLE = frozenset({_KEY, _BALL, _BOX})
_SEQ_VALUES = (False, None, "continue", "success", "failure")


@dataclass(frozen=True)
class BabyAIState:
    """The engine state of a BabyAI episode (see the module docstring); immutable plain data.

    Attributes:
        size: The grid's width and height.
        agent: The agent's x, y and direction (0 east, 1 south, 2 west, 3 north).
        step_count: minigrid's step counter (turns played, invalid commands included).
        carrying: Index of the carried object, ``-1`` for none.
        kinds: Each object's minigrid type and colour codes (fixed by the task; checked, not restored).
        objects: Each object's ``(x, y, place, door)``: ``place`` is ``ON_GRID``, ``CARRIED`` or ``GONE``
            (x, y: its position, or its last one); ``door`` 0 open, 1 closed, 2 locked (0 for non-doors).
        verifier: For each instruction of the mission (pre-order), a pair: what a sequence has done of its
            two parts, or an action's last-step match and the object it saw carried (``-1``: none,
            ``None``: the instruction does not track it).
        positions: For each object description of the mission, the positions it tracks.
        plan: The expert's remaining commands (``None``: not computed yet).
        first_plan: The expert plan's length at reset (``0``: not computed), the scale of ``progress``.
    """

    __snapshot_record__: ClassVar[str] = "BabyAIState/1"
    __snapshot_libraries__: ClassVar[tuple[str, ...]] = ("minigrid",)

    size: tuple[int, int]
    agent: tuple[int, int, int]
    step_count: int
    carrying: int
    kinds: tuple[tuple[int, int], ...]
    objects: tuple[tuple[int, int, int, int], ...]
    verifier: tuple[tuple[Any, Any], ...]
    positions: tuple[tuple[tuple[int, int], ...], ...]
    plan: tuple[str, ...] | None
    first_plan: int


@dataclass(frozen=True)
class Layout:
    """What a task fixes at reset, against which states are checked.

    Attributes:
        size: The grid's width and height.
        kinds: Each object's type and colour codes.
        walls: Cells (``y * width + x``) holding a wall.
        doors: Cell of each door, by object index.
        verifier: Each instruction's shape: ``("seq", None)``, or ``("act", tracks_carried)``.
        descs: Number of object descriptions of the mission.
    """

    size: tuple[int, int]
    kinds: tuple[tuple[int, int], ...]
    walls: frozenset[int]
    doors: Mapping[int, int]
    verifier: tuple[tuple[str, bool | None], ...]
    descs: int


def check_state(state: object, layout: Layout) -> None:
    """Raise :class:`~agentgym_budget.errors.SnapshotMismatchError` unless ``state`` is a legal state of ``layout``.

    Every field is checked for its type and range: sizes and object codes equal the layout's, positions lie
    inside the grid on cells that are not walls, no two things share a cell (the agent may stand in an open
    door), doors stay where they are, only keys, balls and boxes are carried (one at a time) and only boxes
    disappear, and the verifier's memory has the mission's shape.
    """
    if not isinstance(state, BabyAIState):
        raise schema.mismatch("the BabyAI engine state", state, "a BabyAIState")
    size = tuple(schema.sequence(state.size, "the BabyAI grid size", 2))
    if size != layout.size:
        raise schema.mismatch("the BabyAI grid size", state.size, f"{layout.size} (this task's grid)")
    kinds = schema.sequence(state.kinds, "the BabyAI object codes", len(layout.kinds))
    for index, (kind, expected) in enumerate(zip(kinds, layout.kinds, strict=True)):
        name = f"the codes of BabyAI object {index}"
        if tuple(schema.count(code, name, high=255) for code in schema.sequence(kind, name, 2)) != expected:
            raise schema.mismatch(name, kind, f"{expected} (this task's type and colour codes)")
    occupied = _check_objects(state, layout)
    _check_agent(state, layout, occupied)
    schema.count(state.step_count, "the BabyAI step count", high=2**31 - 1)
    _check_verifier(state, layout)
    for index, positions in enumerate(schema.sequence(state.positions, "the BabyAI tracked positions", layout.descs)):
        name = f"the positions tracked by BabyAI description {index}"
        cells = layout.size[0] * layout.size[1]  # a description without a type tracks walls too
        if len(schema.sequence(positions, name)) > cells:
            raise schema.mismatch(name, positions, f"at most {cells} positions (one per cell)")
        for position in positions:
            _cell(position, layout, f"a position of {name}")
    _check_plan(state)


def _cell(position: Any, layout: Layout, name: str) -> int:
    """The cell index of an ``(x, y)`` inside the grid."""
    x, y = schema.sequence(position, name, 2)
    width, height = layout.size
    return schema.count(y, f"the y of {name}", high=height - 1) * width + schema.count(
        x, f"the x of {name}", high=width - 1
    )


def _check_objects(state: BabyAIState, layout: Layout) -> dict[int, int]:
    """Check every object's place; return the occupied cells (cell -> object index)."""
    objects = schema.sequence(state.objects, "the BabyAI objects", len(layout.kinds))
    occupied: dict[int, int] = {}
    carried = []
    for index, (entry, (kind, _)) in enumerate(zip(objects, layout.kinds, strict=True)):
        name = f"BabyAI object {index}"
        x, y, place, door = schema.sequence(entry, name, 4)
        schema.count(place, f"the place of {name}", high=GONE)
        if place == CARRIED and (x, y) != (-1, -1):
            raise schema.mismatch(f"the position of {name}", (x, y), "(-1, -1) (it is carried)")
        cell = -1 if place == CARRIED else _cell((x, y), layout, name)
        schema.count(door, f"the door state of {name}", high=2 if kind == _DOOR else 0)
        if place == ON_GRID:
            if cell in layout.walls or cell in occupied:
                raise schema.mismatch(f"the cell of {name}", (x, y), "a free cell (no wall, no other object)")
            occupied[cell] = index
        elif place == CARRIED:
            carried.append(index)
        if (place == CARRIED and kind not in _CARRIABLE) or (place == GONE and kind != _BOX):
            raise schema.mismatch(f"the place of {name}", place, "on the grid (only keys, balls, boxes are carried)")
        if kind == _DOOR and (place != ON_GRID or cell != layout.doors.get(index)):
            raise schema.mismatch(f"the cell of {name}", (x, y), "the door's own cell")
    carrying = schema.count(state.carrying, "the carried object", low=-1, high=len(objects) - 1)
    if carried != ([carrying] if carrying >= 0 else []):
        raise schema.mismatch("the carried object", state.carrying, f"the one object placed as carried ({carried})")
    return occupied


def _check_agent(state: BabyAIState, layout: Layout, occupied: dict[int, int]) -> None:
    x, y, direction = schema.sequence(state.agent, "the BabyAI agent", 3)
    cell = _cell((x, y), layout, "the BabyAI agent")
    schema.count(direction, "the BabyAI agent's direction", high=3)
    under = occupied.get(cell)
    door_open = under is not None and layout.kinds[under][0] == _DOOR and state.objects[under][3] == 0
    if cell in layout.walls or (under is not None and not door_open):
        raise schema.mismatch("the BabyAI agent's cell", (x, y), "a free cell or an open door")


def _check_verifier(state: BabyAIState, layout: Layout) -> None:
    nodes = schema.sequence(state.verifier, "the BabyAI verifier", len(layout.verifier))
    for index, (node, (shape, tracks)) in enumerate(zip(nodes, layout.verifier, strict=True)):
        name = f"BabyAI instruction {index}"
        first, second = schema.sequence(node, name, 2)
        if shape == "seq":
            for value in (first, second):
                if not (value is False or value is None or (isinstance(value, str) and value in _SEQ_VALUES)):
                    raise schema.mismatch(f"the progress of {name}", value, f"one of {_SEQ_VALUES}")
            continue
        schema.boolean(first, f"the last-step match of {name}")
        if not tracks:
            if second is not None:
                raise schema.mismatch(f"the carried object seen by {name}", second, "None (not tracked)")
            continue
        seen = schema.count(second, f"the carried object seen by {name}", low=-1, high=len(layout.kinds) - 1)
        if seen >= 0 and layout.kinds[seen][0] not in _CARRIABLE:
            raise schema.mismatch(f"the carried object seen by {name}", second, "a key, ball or box (or -1)")


def _check_plan(state: BabyAIState) -> None:
    schema.count(state.first_plan, "the BabyAI first plan length", high=PLAN_LIMIT)
    if state.plan is None:
        return
    plan = schema.sequence(state.plan, "the BabyAI expert plan")
    if len(plan) > PLAN_LIMIT or any(command not in COMMANDS for command in plan):
        raise schema.mismatch("the BabyAI expert plan", state.plan, f"at most {PLAN_LIMIT} of {COMMANDS}")
