"""The expert: minigrid's BabyAI bot, started from any state, played to the end of the mission.

minigrid's ``BabyAIBot`` plans from the mission's instructions as they are at reset. Started later in an
episode it can fail: it asserts that the agent carries nothing before it picks something up, it redoes
parts of a sequence already done, it skips an object the agent already carries, and it chases objects
where its description last saw them (a box opened since is gone). :func:`plan_actions` starts it as if at
reset, with these changes:

* the instructions still to do (a sequence's done part is left out; the verifier's memory says which);
* when the agent carries the object a "put next to" instruction moves, the plan starts from carrying it
  (go next to the fixed object, drop);
* when the agent carries something else and an instruction still has to pick something up, the plan
  first drops it ("drop first": go to the nearest free cell the bot would drop at, drop);
* the objects to pick up or move, and those to put them next to, are looked for where they are now
  (:class:`LiveDesc`); a "go to" keeps the verifier's own positions (a gone box's position still counts
  until the next drop, so a pick-up just before it is not followed by the bot's usual drop).

From a reset it is minigrid's bot exactly (same subgoals, same searches: tested, and compared on 2,200
tasks). It then plays the bot in the level itself, its view not rendered, until the mission succeeds: the
plan is the bot's actions. The level is left wherever the plan ended: the caller restores its state. The
bot fails (no plan) when the mission cannot be done any more, when it gives up (an exception of the bot) or
after ``limit`` actions. Three of the bot's searches are rewritten to do the same work faster: the
breadth-first search (a deque instead of list slicing, same visiting order), the update of the seen
cells (:func:`~.view.visible_cells` instead of building the view's grids) and the search for a cell to
drop at (tuple comparisons instead of ``np.array_equal``).

Importing this module imports minigrid (the ``babyai`` extra).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
from minigrid.envs.babyai.core.verifier import (
    AfterInstr,
    AndInstr,
    BeforeInstr,
    GoToInstr,
    ObjDesc,
    PickupInstr,
    PutNextInstr,
)
from minigrid.utils.baby_ai_bot import BabyAIBot, DropSubgoal, GoNextToSubgoal, PickupSubgoal

from agentgym_budget.tasks.babyai.view import visible_cells

__all__: list[str] = []  # used by the engine

MAX_REPLANS = 500
"""Subgoal changes one bot decision may make before the bot is deemed stuck (minigrid has no bound)."""

_DONE = 6
_AROUND = ((-1, -1), (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0))


class PlanFailed(Exception):
    """The bot found no way to finish the mission from this state."""


def pending_instructions(instr: Any) -> list[Any]:
    """The action instructions of a mission still to do, in the order the bot does them."""
    if isinstance(instr, BeforeInstr):
        rest = pending_instructions(instr.instr_b)
        return rest if instr.a_done == "success" else pending_instructions(instr.instr_a) + rest
    if isinstance(instr, AfterInstr):
        rest = pending_instructions(instr.instr_a)
        return rest if instr.b_done == "success" else pending_instructions(instr.instr_b) + rest
    if isinstance(instr, AndInstr):
        parts = ((instr.a_done, instr.instr_a), (instr.b_done, instr.instr_b))
        return [step for done, part in parts if done != "success" for step in pending_instructions(part)]
    return [instr]


class LiveDesc(ObjDesc):
    """An object description seen by the bot: the described objects where they are now (walls left out).

    minigrid's descriptions keep the positions of their objects as of the last drop, stale when an object
    moved or a box was opened since (the verifier wants that: a "go to" succeeds at a stale position); the
    bot, which has to pick an object up or move it, looks for the objects themselves.
    """

    def __init__(self, desc: ObjDesc, env: Any) -> None:  # no super().__init__: obj_set and obj_poss are live
        self.type, self.color, self.loc = desc.type, desc.color, desc.loc
        self._objects = [obj for obj in desc.obj_set if obj.cur_pos is not None]  # walls have no position
        self._env = env

    @property
    def obj_set(self) -> list[Any]:
        return [obj for obj in self._objects if on_grid(self._env, obj)]

    @property
    def obj_poss(self) -> list[tuple[int, int]]:
        return [tuple(obj.cur_pos) for obj in self.obj_set]


def on_grid(env: Any, obj: Any) -> bool:
    """Whether ``obj`` lies on the grid (neither carried nor gone)."""
    x, y = obj.cur_pos
    grid = env.grid
    return 0 <= x < grid.width and 0 <= y < grid.height and grid.grid[y * grid.width + x] is obj


class Bot(BabyAIBot):
    """minigrid's bot, started from the current state of ``env`` (see the module docstring)."""

    def __init__(self, env: Any) -> None:
        self.mission = env
        self.vis_mask = np.zeros((env.width, env.height), dtype=bool)
        self.stack: list[Any] = []
        self.bfs_counter = 0
        self.bfs_step_counter = 0
        carried = env.carrying
        pending = pending_instructions(env.instrs)
        moving = (
            pending and isinstance(pending[0], PutNextInstr) and any(o is carried for o in pending[0].desc_move.obj_set)
        )
        for index in range(len(pending) - 1, -1, -1):
            self._push(pending[index], pending[index + 1 : index + 2], carrying_it=index == 0 and moving)
        self.drop_first = (
            carried is not None and not moving and any(isinstance(i, PickupInstr | PutNextInstr) for i in pending)
        )

    def _push(self, instr: Any, following: list[Any], *, carrying_it: bool) -> None:
        """minigrid's ``_process_instr`` for one action instruction, with live descriptions of what is moved."""
        env = self.mission
        if isinstance(instr, PutNextInstr):
            self.stack.append(DropSubgoal(self))
            self.stack.append(GoNextToSubgoal(self, LiveDesc(instr.desc_fixed, env), reason="PutNext"))
            if not carrying_it:
                self.stack.append(PickupSubgoal(self))
                self.stack.append(GoNextToSubgoal(self, LiveDesc(instr.desc_move, env)))
        elif isinstance(instr, PickupInstr):
            target_gone = (
                following and isinstance(following[0], GoToInstr) and not LiveDesc(following[0].desc, env).obj_set
            )
            if not target_gone:  # a gone "go to" target is reached at its stale position: a drop would forget it
                self.stack.append(DropSubgoal(self))
            self.stack.append(PickupSubgoal(self))
            self.stack.append(GoNextToSubgoal(self, LiveDesc(instr.desc, env)))
        else:
            self._process_instr(instr)

    def replan(self, action_taken: Any = None) -> Any:
        """minigrid's ``replan`` with the drop-first start and a bound on replanning (:data:`MAX_REPLANS`)."""
        self._process_obs()
        if self.drop_first:
            self.drop_first = False
            drop_at = self._find_drop_pos()
            if drop_at is None:
                raise PlanFailed("no free cell to drop the carried object")
            self.stack.append(DropSubgoal(self))
            self.stack.append(GoNextToSubgoal(self, drop_at))
        self._check_erroneous_box_opening(action_taken)
        for subgoal in self.stack:
            subgoal.update_agent_attributes()
        if self.stack:
            self.stack[-1].replan_after_action(action_taken)
        while self.stack and self.stack[-1].is_exploratory():
            self.stack.pop()
        suggested = None
        for _ in range(MAX_REPLANS):
            if not self.stack:
                break
            suggested = self.stack[-1].replan_before_action()
            if suggested is not None:
                break
        else:
            raise PlanFailed("the bot kept changing its plan")
        if not self.stack:
            suggested = self.mission.actions.done
        self._remember_current_state()
        return suggested

    def _process_obs(self) -> None:
        width, height = self.vis_mask.shape
        for x, y in visible_cells(self.mission):
            if 0 <= x < width and 0 <= y < height:
                self.vis_mask[x, y] = True

    def _find_drop_pos(self, except_pos: Any = None) -> Any:
        """minigrid's ``_find_drop_pos`` with tuple comparisons instead of ``np.array_equal`` (same cells)."""
        grid, seen = self.mission.grid, self.vis_mask
        agent = tuple(int(v) for v in self.mission.agent_pos)

        def free(pos: tuple[int, int]) -> bool:
            return pos != agent and not (except_pos and pos == tuple(except_pos)) and seen[pos] and not grid.get(*pos)

        def match_unblock(pos: tuple[int, int], cell: Any) -> bool:
            if not free(pos):
                return False
            i, j = pos
            classes = [self._neighbour_class((i + k, j + m), agent, except_pos) for k, m in _AROUND]
            changes = sum(bool(classes[(n + 1) % 8]) != bool(classes[n]) for n in range(8))
            for n in range(8):
                if classes[n] == 2 and classes[(n + 7) % 8] != 0 and classes[(n + 1) % 8] != 0:
                    return False
            return changes <= 2

        def match_empty(pos: tuple[int, int], cell: Any) -> bool:
            return free(pos)

        for match, blockers in (
            (match_unblock, False),
            (match_empty, False),
            (match_unblock, True),
            (match_empty, True),
        ):
            _, drop_pos, _ = self._shortest_path(match, try_with_blockers=blockers)
            if drop_pos:
                return drop_pos
        return None

    def _neighbour_class(self, position: tuple[int, int], agent: tuple[int, int], except_pos: Any) -> int:
        """minigrid's class of a cell around a drop candidate: 0 free, 1 a seen wall, 2 anything else."""
        cell = self.mission.grid.get(*position)
        if self.vis_mask[position] and cell and cell.type == "wall":
            return 1
        free = not cell or (cell.type == "door" and cell.is_open) or position == agent
        return 0 if self.vis_mask[position] and free and position != except_pos else 2

    def _breadth_first_search(self, initial_states: Any, accept_fn: Any, ignore_blockers: bool) -> Any:
        self.bfs_counter += 1
        queue = deque((state, None) for state in initial_states)
        grid = self.mission.grid
        cells, width, height = grid.grid, grid.width, grid.height
        seen = self.vis_mask
        previous_pos: dict[tuple[int, int], Any] = {}
        while queue:
            (i, j, di, dj), prev_pos = queue.popleft()
            if (i, j) in previous_pos:
                continue
            self.bfs_step_counter += 1
            if not (0 <= i < width and 0 <= j < height):
                raise PlanFailed("the search left the grid")
            cell = cells[j * width + i]
            previous_pos[(i, j)] = prev_pos
            if accept_fn((i, j), cell):
                path, pos = [], (i, j)
                while pos:
                    path.append(pos)
                    pos = previous_pos[pos]
                return path, (i, j), previous_pos
            if not seen[i, j]:
                continue
            if cell:
                if cell.type == "wall" or (cell.type == "door" and not cell.is_open):
                    continue
                if cell.type != "door" and not ignore_blockers:
                    continue
            for k, m in ((di, dj), (dj, di), (-dj, -di), (-di, -dj)):
                queue.append(((i + k, j + m, k, m), (i, j)))
        return None, None, previous_pos


def plan_actions(env: Any, step: Any, limit: int) -> list[int] | None:
    """The bot's actions from ``env``'s current state until the mission succeeds, or ``None``.

    Args:
        env: The minigrid level, in the state to plan from; it is played (the caller restores it).
        step: ``step(action) -> verdict`` ("success", "failure" or "continue"): one action in the level.
        limit: The most actions a plan may take.
    """
    try:
        bot = Bot(env)
        actions: list[int] = []
        action = bot.replan(None)
        while len(actions) < limit and action != _DONE:
            actions.append(int(action))
            verdict = step(int(action))
            if verdict != "continue":
                return actions if verdict == "success" else None
            action = bot.replan(None)
    except Exception:  # the bot's asserts, DisappearedBoxError, PlanFailed: no plan from here
        return None
    return None
