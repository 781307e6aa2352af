"""A BabyAI level played command by command, with its state saved and restored as plain data.

:class:`LevelEngine` owns one ``minigrid`` level object per layout it plays (the mixed ids have two: one
room, and 3x3 rooms). It steps the level as minigrid's ``RoomGridLevel.step`` does, without minigrid's own
``max_steps`` truncation (the env's turn budget decides), and reads the mission's verdict from the verifier.
Levels are generated without printing: minigrid's rejection sampling prints ``Sampling rejected: ...`` to
stdout, so each level class is played through a subclass whose generation loop is the same without the
print (and gives up with :class:`~agentgym_budget.errors.GenerationError` after :data:`MAX_REJECTIONS`).

A state (:class:`~.state.BabyAIState`) names objects by their place in the task's object table: every
non-wall object of the grid at reset, in row-major order. Restoring into a level on the same task moves
those same objects back (a few dozen assignments); another task is generated first.

Needs the ``babyai`` extra (``minigrid==3.2.0``, Python >= 3.11); importing this module imports minigrid.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import gymnasium as gym

from agentgym_budget.dependencies import require
from agentgym_budget.errors import GenerationError, InvalidOptionError
from agentgym_budget.tasks.babyai.levels import MIXED_KINDS, Level, held_out_combinations
from agentgym_budget.tasks.babyai.state import CARRIED, GONE, ON_GRID, PLAN_LIMIT, BabyAIState, Layout
from agentgym_budget.tasks.babyai.view import DIRECTIONS, egocentric_view

require("minigrid", extra="babyai", feature="BabyAI (the BabyAI ids)", min_python=(3, 11))

from minigrid.core.roomgrid import RoomGrid  # noqa: E402  (after the check that names the extra)
from minigrid.envs.babyai.core import verifier  # noqa: E402
from minigrid.envs.babyai.core.roomgrid_level import RejectSampling, RoomGridLevel  # noqa: E402
from minigrid.minigrid_env import MiniGridEnv  # noqa: E402

from agentgym_budget.tasks.babyai.mixed import MIXED_LEVELS, descriptions  # noqa: E402
from agentgym_budget.tasks.babyai.planner import on_grid, pending_instructions, plan_actions  # noqa: E402

__all__: list[str] = []  # used by the env

MAX_REJECTIONS = 10_000
"""Layouts a level may reject in one reset before :class:`GenerationError` (minigrid itself loops forever)."""

DONE, DROP, PICKUP, FORWARD = 6, 4, 3, 2


def _no_view() -> None:
    return None


@contextlib.contextmanager
def _no_render(env: Any) -> Iterator[None]:
    """minigrid's ``gen_obs`` (called at the end of ``step`` and ``reset``) skipped: :mod:`.view` gives the view."""
    if "gen_obs" in env.__dict__:  # already skipped (a plan in progress)
        yield
        return
    env.gen_obs = _no_view
    try:
        yield
    finally:
        del env.gen_obs


def _quiet_gen_grid(self: RoomGridLevel, width: int, height: int) -> None:
    """``RoomGridLevel._gen_grid`` without its prints, and bounded."""
    for _ in range(MAX_REJECTIONS):
        try:
            RoomGrid._gen_grid(self, width, height)
            self.gen_mission()
            self.validate_instrs(self.instrs)
        except (RecursionError, RejectSampling):
            continue
        self.surface = self.instrs.surface(self)
        self.mission = self.surface
        return
    raise GenerationError(f"{type(self).__name__}: no layout passed the level's checks in {MAX_REJECTIONS} draws.")


_QUIET: dict[type, type] = {}


def _quiet(cls: type) -> type:
    """A subclass of the level class ``cls`` that generates without printing."""
    if cls not in _QUIET:
        _QUIET[cls] = type(cls.__name__, (cls,), {"_gen_grid": _quiet_gen_grid, "__module__": __name__})
    return _QUIET[cls]


def _level_factory(level: Level, holdout_seed: int) -> Any:
    """``make(seed) -> the level object that plays this seed`` (one minigrid class per level, per kind if mixed)."""
    if level.mixed is None:
        spec = gym.spec(level.minigrid_id)
        module, _, name = spec.entry_point.partition(":")
        cls = _quiet(getattr(__import__(module, fromlist=[name]), name))
        kwargs = dict(spec.kwargs)
        return lambda seed: ("level", lambda: cls(**kwargs))
    held_out = held_out_combinations(holdout_seed)

    def mixed(seed: int) -> tuple[str, Any]:
        kind = MIXED_KINDS[seed % len(MIXED_KINDS)]
        cls = _quiet(MIXED_LEVELS[kind])
        return kind, lambda: cls(held_out=held_out, missions=level.mixed)

    return mixed


def instructions(instr: Any) -> Iterator[Any]:
    """Every instruction of a mission's tree, pre-order."""
    yield instr
    if isinstance(instr, verifier.SeqInstr):
        yield from instructions(instr.instr_a)
        yield from instructions(instr.instr_b)


class LevelEngine:
    """Plays one registered level's tasks (see the module docstring).

    Args:
        level: The level (:data:`~.levels.LEVELS`).
        holdout_seed: Seed of the mixed ids' held-out combinations.
        max_steps: minigrid's ``max_steps`` for every task (``None``: the level's own); it scales the
            discounted reward only, it never ends an episode.

    Raises:
        MissingDependencyError: The ``babyai`` extra is not installed (or Python is older than 3.11).
    """

    def __init__(self, level: Level, holdout_seed: int = 0, max_steps: int | None = None) -> None:
        if verifier.use_done_actions:
            raise InvalidOptionError(
                "BABYAI_DONE_ACTIONS is set: minigrid's verifier then waits for a 'done' action, which the six "
                "BabyAI commands do not have. Unset it to play the BabyAI ids."
            )
        self._factory = _level_factory(level, holdout_seed)
        self._max_steps = max_steps
        self._levels: dict[str, Any] = {}
        self.env: Any = None
        self.seed: int | None = None
        self.objects: list[Any] = []
        self._index: dict[int, int] = {}
        self._nodes: list[Any] = []
        self._descs: list[Any] = []
        self.layout: Layout | None = None
        self._layouts: dict[int, Layout] = {}
        self._plan_limit = PLAN_LIMIT

    # ------------------------------------------------------------------ playing
    def begin(self, seed: int) -> list:
        """Generate the task of ``seed`` and return the agent's first view (minigrid's ``image``)."""
        kind, make = self._factory(seed)
        env = self._levels.get(kind)
        if env is None:
            env = self._levels[kind] = make()
        with _no_render(env):
            env.reset(seed=seed)
        self._plan_limit = min(int(env.max_steps), PLAN_LIMIT)
        if self._max_steps is not None:
            env.max_steps = self._max_steps
        env.agent_pos, env.agent_dir = (int(env.agent_pos[0]), int(env.agent_pos[1])), int(env.agent_dir)
        self.env, self.seed = env, seed
        self._index_objects()
        return self.view()

    def act(self, action: int) -> tuple[list, str, bool]:
        """Play minigrid action ``action`` (0-6); return the new view, the verifier's verdict and whether it changed anything.

        The verdict is ``"success"``, ``"failure"`` or ``"continue"``; minigrid's ``max_steps`` is not applied.
        Nothing changed when the agent's place, direction, load and the cell ahead are as before (a blocked
        step, picking up or toggling nothing): the step counter aside, the level is in the same state.
        """
        before = self._moment()
        verdict = self._advance(action)
        return self.view(), verdict, self._moment() != before

    def plan(self) -> list[int] | None:
        """The expert's actions from the current state to success (``None``: it finds none); the state is kept.

        A plan may take at most the level's own ``max_steps`` actions (:data:`~.state.PLAN_LIMIT` at most).
        """
        saved = self.save(None, 0)
        try:
            return plan_actions(self.env, self._advance, self._plan_limit)
        finally:
            self.load(self.seed, saved)

    def view(self) -> list:
        """The agent's current view: minigrid's ``gen_obs()['image']`` as nested lists (:mod:`.view`)."""
        return egocentric_view(self.env)

    def mission_impossible(self) -> bool:
        """Whether an instruction still to do can no longer succeed: an object it needs is gone (a box opened).

        A "pick up" needs one of its objects (on the grid or carried); a "put next to" needs one object to
        move and one to put it next to (its positions are refreshed at every drop, so a gone one is never
        next to anything again); a "go to" succeeds at the positions its description tracks, which forget a
        gone object at the next drop: it is lost once none is left and none of its objects is present.
        """
        env = self.env

        def present(desc: Any) -> bool:  # walls (a description without a type) have no position and never go
            return any(obj.cur_pos is None or obj is env.carrying or on_grid(env, obj) for obj in desc.obj_set)

        for instr in pending_instructions(env.instrs):
            if isinstance(instr, verifier.PickupInstr) and not present(instr.desc):
                return True
            if isinstance(instr, verifier.PutNextInstr) and not (
                present(instr.desc_move) and present(instr.desc_fixed)
            ):
                return True
            if isinstance(instr, verifier.GoToInstr) and not instr.desc.obj_poss and not present(instr.desc):
                return True
        return False

    @property
    def carrying(self) -> tuple[str, str] | None:
        """The carried object's ``(colour, type)``, or ``None``."""
        carried = self.env.carrying
        return None if carried is None else (carried.color, carried.type)

    # ------------------------------------------------------------------ states
    def save(self, plan: tuple[str, ...] | None, first_plan: int) -> BabyAIState:
        """The current state as plain data, with the expert's remaining ``plan`` and its length at reset."""
        env = self.env
        cells, width = env.grid.grid, env.grid.width
        objects = []
        for obj in self.objects:
            x, y = (int(value) for value in obj.cur_pos) if obj is not env.carrying else (-1, -1)
            place = CARRIED if obj is env.carrying else ON_GRID if cells[y * width + x] is obj else GONE
            door = (0 if obj.is_open else 2 if obj.is_locked else 1) if obj.type == "door" else 0
            objects.append((x, y, place, door))
        index = self._index
        return BabyAIState(
            size=(width, env.grid.height),
            agent=(int(env.agent_pos[0]), int(env.agent_pos[1]), int(env.agent_dir)),
            step_count=int(env.step_count),
            carrying=-1 if env.carrying is None else index[id(env.carrying)],
            kinds=self.layout.kinds,
            objects=tuple(objects),
            verifier=tuple(self._node_memory(node) for node in self._nodes),
            positions=tuple(tuple((int(x), int(y)) for x, y in desc.obj_poss) for desc in self._descs),
            plan=plan,
            first_plan=first_plan,
        )

    def load(self, seed: int, state: BabyAIState) -> None:
        """Put the level in ``state`` (checked beforehand against :meth:`layout_of` ``(seed)``)."""
        if self.seed != seed:
            self.begin(seed)
        env = self.env
        cells, width = env.grid.grid, env.grid.width
        for obj in self.objects:
            x, y = obj.cur_pos
            if x >= 0 and cells[y * width + x] is obj:
                cells[y * width + x] = None
        env.carrying = None
        for obj, (x, y, place, door) in zip(self.objects, state.objects, strict=True):
            obj.cur_pos = (int(x), int(y))
            if place == ON_GRID:
                cells[y * width + x] = obj
            elif place == CARRIED:
                env.carrying, obj.cur_pos = obj, (-1, -1)
            if obj.type == "door":
                obj.is_open, obj.is_locked = door == 0, door == 2
        x, y, direction = state.agent
        env.agent_pos, env.agent_dir, env.step_count = (int(x), int(y)), int(direction), int(state.step_count)
        for node, (first, second) in zip(self._nodes, state.verifier, strict=True):
            self._set_node_memory(node, first, second)
        for desc, positions in zip(self._descs, state.positions, strict=True):
            desc.obj_poss = [(int(x), int(y)) for x, y in positions]

    def layout_of(self, seed: int) -> Layout:
        """The layout of the task of ``seed`` (generated aside when it is not the one being played)."""
        if seed == self.seed and self.layout is not None:
            return self.layout
        if seed not in self._layouts:
            if len(self._layouts) > 64:
                self._layouts.clear()
            make = self._factory(seed)[1]
            scratch = make()
            scratch.reset(seed=seed)
            self._layouts[seed] = _layout(scratch, _object_table(scratch))
        return self._layouts[seed]

    # ------------------------------------------------------------------ internals
    def _advance(self, action: int) -> str:
        """``RoomGridLevel.step`` without the ``max_steps`` truncation (nor its view); positions kept as ints."""
        env = self.env
        carried = env.carrying
        with _no_render(env):
            MiniGridEnv.step(env, action)
        if action == FORWARD:
            env.agent_pos = (int(env.agent_pos[0]), int(env.agent_pos[1]))
        elif action == DROP:
            env.update_objs_poss()
            if carried is not None and env.carrying is None:
                carried.cur_pos = (int(carried.cur_pos[0]), int(carried.cur_pos[1]))
        elif action == PICKUP and env.carrying is not None:
            env.carrying.cur_pos = (-1, -1)
        return env.instrs.verify(action) or "continue"

    def _moment(self) -> tuple[Any, ...]:
        """What one action can change: the agent's place, direction and load, and the cell ahead (its door state)."""
        env = self.env
        (x, y), direction = env.agent_pos, env.agent_dir
        fx, fy = DIRECTIONS[direction]
        grid = env.grid
        ahead = grid.grid[(y + fy) * grid.width + x + fx]
        door = (ahead.is_open, ahead.is_locked) if ahead is not None and ahead.type == "door" else None
        return x, y, direction, id(env.carrying), id(ahead), door

    def _index_objects(self) -> None:
        env = self.env
        self.objects = _object_table(env)
        self._index = {id(obj): i for i, obj in enumerate(self.objects)}
        self._nodes = list(instructions(env.instrs))
        self._descs = list(descriptions(env.instrs))
        self.layout = _layout(env, self.objects)
        self._layouts[self.seed] = self.layout

    def _node_memory(self, node: Any) -> tuple[Any, Any]:
        if isinstance(node, verifier.SeqInstr):
            return node.a_done, node.b_done
        if not hasattr(node, "preCarrying"):
            return bool(node.lastStepMatch), None
        carried = node.preCarrying
        return bool(node.lastStepMatch), -1 if carried is None else self._index[id(carried)]

    def _set_node_memory(self, node: Any, first: Any, second: Any) -> None:
        if isinstance(node, verifier.SeqInstr):
            node.a_done, node.b_done = first, second
            return
        node.lastStepMatch = bool(first)
        if hasattr(node, "preCarrying"):
            node.preCarrying = None if second < 0 else self.objects[second]


def _object_table(env: Any) -> list[Any]:
    """Every non-wall object of a freshly reset level, row-major (then the carried one, if any)."""
    objects = [cell for cell in env.grid.grid if cell is not None and cell.type != "wall"]
    if env.carrying is not None:
        objects.append(env.carrying)
    for obj in objects:
        if obj.contains is not None:
            raise GenerationError(
                f"{type(env).__name__}: a box holds an object; levels with box contents are not supported."
            )
        obj.cur_pos = (-1, -1) if obj.cur_pos is None else (int(obj.cur_pos[0]), int(obj.cur_pos[1]))
    return objects


def _layout(env: Any, objects: list[Any]) -> Layout:
    from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX

    width = env.grid.width
    nodes = list(instructions(env.instrs))
    return Layout(
        size=(width, env.grid.height),
        kinds=tuple((OBJECT_TO_IDX[obj.type], COLOR_TO_IDX[obj.color]) for obj in objects),
        walls=frozenset(k for k, cell in enumerate(env.grid.grid) if cell is not None and cell.type == "wall"),
        doors={
            i: int(obj.cur_pos[1]) * width + int(obj.cur_pos[0]) for i, obj in enumerate(objects) if obj.type == "door"
        },
        verifier=tuple(
            ("seq", None) if isinstance(node, verifier.SeqInstr) else ("act", hasattr(node, "preCarrying"))
            for node in nodes
        ),
        descs=len(list(descriptions(env.instrs))),
    )
