"""The mixed levels: five BabyAI mission kinds in one room, with held-out (type, colour) combinations.

``minigrid`` 3.2.0 has no ``MixedTrainLocal`` / ``MixedTestLocal`` (GLAM's and BALROG's levels; they are only
on minigrid's main branch), so they are built here from minigrid's own pieces, in their spirit:

* a task's kind is its seed modulo 5 (:data:`~.levels.MIXED_KINDS`): ``goto`` ("go to the red ball",
  as ``GoToLocal``), ``pickup`` ("pick up the red ball", as ``PickupLoc`` without locations),
  ``open`` ("open the red door", as ``OpenDoorColor``: the agent's room of a 3x3 grid, four doors of
  distinct colours), ``putnext`` ("put the red ball next to the blue key", as ``PutNextLocal``) and
  ``pickup_then_goto`` ("pick up the red ball, then go to the blue key", or "go to the blue key after
  you pick up the red ball", one of the two at random);
* the held-out combinations are one colour per type (key, ball, box, door), four distinct colours drawn
  from ``holdout_seed`` (:func:`~.levels.held_out_combinations`; with the default seed 0: purple key, grey
  ball, yellow box, red door);
* ``missions="train"``: a layout with a held-out object anywhere (a distractor included) is rejected and
  drawn again, so training never shows one; ``missions="test"``: a layout is rejected unless its mission
  names a held-out combination by type and colour.

Rejection sampling draws from the level's own generator, so a seed gives the same layout every time (in any
process). This module imports ``minigrid``: the engine imports it once the ``babyai`` extra is checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from minigrid.core.constants import COLOR_NAMES
from minigrid.envs.babyai.core.roomgrid_level import RejectSampling, RoomGridLevel
from minigrid.envs.babyai.core.verifier import (
    AfterInstr,
    BeforeInstr,
    GoToInstr,
    ObjDesc,
    OpenInstr,
    PickupInstr,
    PutNextInstr,
    SeqInstr,
)

__all__: list[str] = []  # used by the engine


def descriptions(instr: Any) -> Iterator[ObjDesc]:
    """Every object description of an instruction tree."""
    if isinstance(instr, SeqInstr):
        yield from descriptions(instr.instr_a)
        yield from descriptions(instr.instr_b)
        return
    for name in ("desc", "desc_move", "desc_fixed"):
        desc = getattr(instr, name, None)
        if desc is not None:
            yield desc


class MixedLevel(RoomGridLevel):
    """Base of the mixed levels: the held-out rule (see the module docstring) over a kind's ``make_mission``.

    Args:
        held_out: The held-out (type, colour) pairs.
        missions: ``"train"`` (no held-out object) or ``"test"`` (the mission names one).
        **kwargs: ``RoomGridLevel``'s arguments (room size and grid).
    """

    def __init__(self, *, held_out: frozenset[tuple[str, str]], missions: str, **kwargs: Any) -> None:
        self.held_out = held_out
        self.missions = missions
        super().__init__(**kwargs)

    def make_mission(self) -> None:
        """Place the agent and the objects and set ``self.instrs`` (each kind's own)."""
        raise NotImplementedError

    def gen_mission(self) -> None:
        self.make_mission()
        if self.missions == "train":
            if any(cell is not None and (cell.type, cell.color) in self.held_out for cell in self.grid.grid):
                raise RejectSampling("a held-out object in a training layout")
        elif not any((desc.type, desc.color) in self.held_out for desc in descriptions(self.instrs)):
            raise RejectSampling("a test mission that names no held-out object")

    def _one_room_objects(self, *, unique: bool) -> list[Any]:
        self.place_agent()
        objs = self.add_distractors(num_distractors=8, all_unique=unique)
        self.check_objs_reachable()
        return objs


class _GoTo(MixedLevel):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(num_rows=1, num_cols=1, room_size=8, **kwargs)

    def make_mission(self) -> None:
        obj = self._rand_elem(self._one_room_objects(unique=False))
        self.instrs = GoToInstr(ObjDesc(obj.type, obj.color))


class _Pickup(MixedLevel):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(num_rows=1, num_cols=1, room_size=8, **kwargs)

    def make_mission(self) -> None:
        obj = self._rand_elem(self._one_room_objects(unique=False))
        self.instrs = PickupInstr(ObjDesc(obj.type, obj.color))


class _PutNext(MixedLevel):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(num_rows=1, num_cols=1, room_size=8, **kwargs)

    def make_mission(self) -> None:
        moved, fixed = self._rand_subset(self._one_room_objects(unique=True), 2)
        self.instrs = PutNextInstr(ObjDesc(moved.type, moved.color), ObjDesc(fixed.type, fixed.color))


class _PickupThenGoTo(MixedLevel):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(num_rows=1, num_cols=1, room_size=8, **kwargs)

    def make_mission(self) -> None:
        taken, reached = self._rand_subset(self._one_room_objects(unique=True), 2)
        pickup = PickupInstr(ObjDesc(taken.type, taken.color))
        goto = GoToInstr(ObjDesc(reached.type, reached.color))
        self.instrs = BeforeInstr(pickup, goto) if self._rand_bool() else AfterInstr(goto, pickup)


class _Open(MixedLevel):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(room_size=8, **kwargs)  # RoomGrid's default 3x3 rooms: the agent's room is the middle one

    def make_mission(self) -> None:
        doors = [
            self.add_door(1, 1, door_idx=i, color=color, locked=False)[0]
            for i, color in enumerate(self._rand_subset(COLOR_NAMES, 4))
        ]
        self.place_agent(1, 1)
        self.instrs = OpenInstr(ObjDesc("door", doors[0].color))


MIXED_LEVELS: dict[str, type[MixedLevel]] = {
    "goto": _GoTo,
    "pickup": _Pickup,
    "open": _Open,
    "putnext": _PutNext,
    "pickup_then_goto": _PickupThenGoTo,
}
"""The level class of each mission kind (:data:`~.levels.MIXED_KINDS`, in that order)."""
