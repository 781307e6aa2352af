"""ScienceWorld behind the :class:`~agentgym_budget.core.env.TextEnv` contract: :class:`ScienceWorldEnv`.

Family specifics:

* tasks: one variation of one of the 30 tasks, ``<task>-<variation>`` (``boil-3``), from the split's
  variations of the tasks chosen with ``task=`` (a name or paper id, a list, or all 30;
  :mod:`~agentgym_budget.tasks.sciworld.catalog`); splits ``train`` / ``dev`` / ``test`` are the engine's;
* observation: the engine's answer; after a reset the task description, then the room (``look around``);
  ``goal`` is the task description;
* reward: the score gained this turn, on a 0-1 scale, so an episode's return is the progress it made
  (some variations score a first sub-goal at the reset: their reset ``progress`` is above 0);
  ``progress`` = score / 100; ``won``: the engine's completion; ``lost``: a failed task (the engine's score
  -100, after a wrong ``focus on``), whose progress is 0;
* a turn is one ``step``: an unknown command costs a turn though the engine's own move counter
  (opt-in ``moves``) does not count it, and ``wait`` counts 10 there; ``reset task`` (the engine's
  action that restarts the task, in any of the spellings its parser accepts) is refused: the turn is
  spent and the engine never sees it, so nothing restarts behind a turn budget;
* ``admissible_actions`` is opt-in (:attr:`ScienceWorldEnv.omitted_info_keys`): computing it costs the
  engine's listing of every valid action (most of a step's time in the engine's own env); when asked it
  holds at most ``max_admissible`` sensible commands (:mod:`~agentgym_budget.tasks.sciworld.candidates`), or the engine's whole list
  with ``max_admissible=None``; ``valid_actions`` (opt-in) is always the whole list;
* opt-in ``info`` keys: ``expert_action`` / ``expert_plan`` from the engine's gold path (generated once
  per task variation and cached), re-planned after a detour as the rest of the gold path from the
  last gold step taken (:class:`~agentgym_budget.tasks.sciworld.expert.GoldTracker`); ``score`` (-100 to 100), ``moves``, ``look``,
  ``inventory``, ``goal_progress`` (the engine's sub-goal table), ``valid_actions``;
* ``state_digest`` (opt-in, every family's): the commands the engine took, those it did not understand left
  out (:meth:`ScienceWorldEnv._state_data`);
* snapshots hold the task and the actions (the engine has no save): ``set_state`` is immediate and the
  engine catches up at the next step, replaying only what it is not already at (unknown commands
  changed nothing, so a restore after one costs nothing); a state of more than
  :data:`MAX_REPLAY_ACTIONS` actions is refused.

Every env of a process plays in one JVM (:mod:`~agentgym_budget.tasks.sciworld.engine`); needs the ``sciworld`` extra and Java.

Example:
    >>> import gymnasium as gym
    >>> env = gym.make("agentgym_budget/ScienceWorld-v0", task="4-4", info_keys={"expert_plan"})
    >>> obs, info = env.reset(seed=0)
    >>> info["task_id"], obs.splitlines()[0]
    ('find-animal-127', 'Your task is to find a(n) animal. First, focus on the thing. Then, move it to the green box in the bathroom.')
    >>> for action in info["expert_plan"]:
    ...     obs, reward, terminated, truncated, info = env.step(action)
    >>> terminated, info["won"], info["progress"]
    (True, True, 1.0)
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from gymnasium.utils import EzPickle

from agentgym_budget.core.env import TextEnv, Turn
from agentgym_budget.core.info_keys import EXPERT_INFO_KEYS
from agentgym_budget.errors import EpisodeOverError, InvalidOptionError, SnapshotMismatchError
from agentgym_budget.storage.cache import find_entry
from agentgym_budget.tasks.sciworld import candidates, engine
from agentgym_budget.tasks.sciworld.catalog import SPLITS, TASKS, resolve_simplifications, resolve_tasks
from agentgym_budget.tasks.sciworld.expert import GoldTracker

__all__ = ["SCIWORLD_INFO_KEYS", "ScienceWorldEnv"]

SCIWORLD_INFO_KEYS: Mapping[str, str] = {
    **EXPERT_INFO_KEYS,
    "admissible_actions": "at most max_admissible sensible commands, sorted (a standard key, opt-in here)",
    "valid_actions": "the engine's whole list of valid action-object combinations, sorted",
    "score": "the engine's score, -100 to 100 (int; -100: the task failed)",
    "moves": "the engine's move counter (unknown commands do not count, 'wait' counts 10)",
    "look": "the room's description ('look around', which costs no move)",
    "inventory": "the inventory's description",
    "goal_progress": "the engine's table of sub-goals and whether each is done",
}
"""Opt-in ``info`` keys of the ScienceWorld id."""

MAX_REPLAY_ACTIONS = 10_000
"""Longest action history a state may hold (its restore replays it: about 3-10 ms per action)."""

DEFAULT_MAX_ADMISSIBLE = 64
"""Default bound of ``admissible_actions`` (see :mod:`~agentgym_budget.tasks.sciworld.candidates`)."""

_EXPERT_KEYS = frozenset({"expert_action", "expert_plan"})
_LISTING_KEYS = frozenset({"admissible_actions", "valid_actions"})
_READS = {"look": "freeActionLook", "inventory": "freeActionInventory", "goal_progress": "getGoalProgressStr"}
_BLANKS = frozenset({"a", "an", "the"})  # words the engine's parser ignores anywhere


class ScienceWorldEnv(TextEnv):
    """ScienceWorld's tasks; see the module docstring.

    Args:
        task: A task's name (``"boil"``) or paper id (``"1-1"``), several (a list or comma-separated), or
            ``None`` (default) for all 30 (:data:`~agentgym_budget.tasks.sciworld.catalog.TASKS`).
        simplifications: The engine's simplifications (``"easy"``, or names such as ``"openDoors,teleportAction"``;
            :data:`~agentgym_budget.tasks.sciworld.catalog.SIMPLIFICATIONS`), a str or a list; none by default.
        max_admissible: Bound of ``admissible_actions`` when requested (``None``: the engine's whole list).
        split: ``"train"``, ``"dev"`` or ``"test"``.
        info_keys: Opt-in ``info`` keys (:data:`SCIWORLD_INFO_KEYS`).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.

    Raises:
        InvalidOptionError: An unknown task or simplification (with did-you-mean), ``noElectricalAction``
            with an electricity task, or a ``max_admissible`` that is not a positive int or ``None``.
        MissingDependencyError: The ``sciworld`` extra or a Java runtime is missing.
    """

    splits: ClassVar[tuple[str, ...]] = SPLITS
    optional_info_keys: ClassVar[Mapping[str, str]] = SCIWORLD_INFO_KEYS
    expert_recovers: ClassVar[bool] = False
    max_replay_actions: ClassVar[int | None] = MAX_REPLAY_ACTIONS
    blocked_feedback: ClassVar[str] = (
        "'reset task' is not available here: it would restart the task behind the turn budget. "
        "(A new episode starts with env.reset().)"
    )

    def __init__(
        self,
        *,
        task: str | Sequence[str] | None = None,
        simplifications: str | Sequence[str] = "",
        max_admissible: int | None = DEFAULT_MAX_ADMISSIBLE,
        split: str = "train",
        info_keys: Any = None,
        render_mode: str | None = None,
    ) -> None:
        EzPickle.__init__(
            self, task=task, simplifications=simplifications, max_admissible=max_admissible, split=split,
            info_keys=info_keys, render_mode=render_mode,
        )  # fmt: skip
        self.tasks = resolve_tasks(task)
        self.simplifications = resolve_simplifications(simplifications, self.tasks)
        if max_admissible is not None and (
            isinstance(max_admissible, bool) or not isinstance(max_admissible, numbers.Integral) or max_admissible < 1
        ):
            raise InvalidOptionError(
                f"{type(self).__name__}: max_admissible must be an int >= 1 or None, got {max_admissible!r}."
            )
        self.max_admissible = None if max_admissible is None else int(max_admissible)
        engine.JVM.check_installed()  # after the options (a wrong one is named first), before any JVM starts
        super().__init__(split=split, info_keys=info_keys, render_mode=render_mode)
        keys = self.info_keys
        self.omitted_info_keys = frozenset() if "admissible_actions" in keys else frozenset({"admissible_actions"})
        self._expert = GoldTracker() if keys & _EXPERT_KEYS else None
        self._world: engine.World | None = None
        self._world_task: str | None = None
        self._world_log: list[str] = []
        self._target: tuple[str, list[str]] | None = None
        self._changes: dict[int, bool] = {}
        self._opening: dict[str, tuple[str, str, int]] = {}

    # ------------------------------------------------------------------ hooks
    def _config(self) -> Mapping[str, Any]:
        return {
            "tasks": ",".join(self.tasks),
            "simplifications": self.simplifications,
            "max_admissible": self.max_admissible,
            "engine": "scienceworld 1.2.3",
        }

    def _list_tasks(self) -> Sequence[str]:
        return [f"{name}-{variation}" for name in self.tasks for variation in TASKS[name].variations(self.split)]

    def _begin(self, task_id: str, engine_seed: int) -> Turn:
        self._drop_dead_world()
        self._target, self._changes = None, {}
        if self._expert is not None:
            self._expert.start(engine.gold_path(*_parse(task_id), self.simplifications))
        world = self._live_world()
        if self._world_task != task_id or self._world_log or task_id not in self._opening:
            self._load(world, task_id)
        description, look, points = self._opening[task_id]
        return self._turn(f"{description}\n\n{look}", points=points, previous=0.0, completed=False)

    def _act(self, command: str) -> Turn:
        world = self._live_world()
        result = world.step(command)
        self._changes[len(self._actions)] = result.changed
        if result.changed:
            self._world_log.append(command)
        if self._expert is not None:
            self._expert.advance(command)
        points = round(100 * result.score)
        previous = self._last_turn.progress if self._last_turn is not None else 0.0
        return self._turn(result.observation, points=points, previous=previous, completed=result.completed)

    def _sanitize(self, action: str) -> str | None:
        words = [word for word in action.lower().split() if word not in _BLANKS]
        return None if words == ["reset", "task"] else action

    def _replay(self, task_id: str, engine_seed: int, actions: Sequence[str]) -> None:
        self._drop_dead_world()
        shared = _common_prefix(self._actions, actions) if task_id == self._task_id else 0
        known = {index: changed for index, changed in self._changes.items() if index < shared}  # this episode's
        self._target = (task_id, self._commands(actions, known))
        self._changes = known
        if self._expert is not None:
            self._expert.start(engine.gold_path(*_parse(task_id), self.simplifications))
            for action in actions:
                self._expert.advance(action)

    def _state_data(self) -> Any:
        """The commands the engine took since the variation was loaded (those it did not understand left out).

        ScienceWorld describes its whole state only as a 150 KB object tree (80 ms a call) whose ids and
        temperatures depend on the path taken: the world is a function of the commands it took, so equal
        digests mean equal states, and two paths to one state (open, then close a door) have two digests.
        """
        self._live_world()  # caught up: its log is the state's
        return list(self._world_log)

    def _close_engine(self) -> None:
        world, self._world = self._world, None
        if world is not None:
            world.close()
            if self._target is None and self._task_id is not None:
                self._target = (self._task_id, self._commands(self._actions, self._changes))
        self._world_task, self._world_log = None, []

    def check_state(self, state: object) -> None:
        super().check_state(state)
        if state.engine is not None:  # type: ignore[attr-defined]  # a TextEnvState: checked above
            raise SnapshotMismatchError(
                f"{self.name}: the state carries an engine state; ScienceWorld states hold none (they restore by "
                "replaying their actions)."
            )

    def prepare_task(self, task_id: str) -> None:
        """Generate ``task_id``'s gold path into the cache (what the expert needs; the engine needs nothing).

        Raises:
            UnknownTaskError: ``task_id`` is not in this env's split.
        """
        task_id = self._select_task({"task": task_id})
        engine.gold_path(*_parse(task_id), self.simplifications)

    def task_prepared(self, task_id: str) -> bool | None:
        """Whether ``task_id``'s gold path is in the cache."""
        name, variation = _parse(task_id)
        return find_entry("sciworld-gold", engine.gold_params(name, variation, self.simplifications)) is not None

    # ------------------------------------------------------------------ API
    @property
    def gold_path(self) -> tuple[str, ...]:
        """The engine's gold path of the current task (empty unless an expert key was requested)."""
        return self._expert.path if self._expert is not None else ()

    def valid_actions(self) -> list[str]:
        """The engine's whole list of valid commands in the current state, sorted (what ``valid_actions`` holds).

        Raises:
            EpisodeOverError: No episode was started.
        """
        if self._task_id is None:
            raise EpisodeOverError(f"{self.name}: call reset() before valid_actions().")
        return _valid_names(self._live_world().valid_actions())

    # ------------------------------------------------------------------ internals
    def _turn(self, observation: str, *, points: int, previous: float, completed: bool) -> Turn:
        lost = points < 0
        won = completed and not lost
        progress = max(0, min(points, 100)) / 100
        extras: dict[str, Any] = {}
        admissible: tuple[str, ...] = ()
        keys = self.info_keys
        if keys:
            admissible = self._extras(extras, keys, over=won or lost, points=points)
        return Turn(
            observation=observation,
            reward=(round(100 * progress) - round(100 * previous)) / 100,
            won=won,
            lost=lost,
            progress=progress,
            admissible_actions=admissible,
            goal=self._opening[self._world_task][0] if self._world_task in self._opening else "",
            extras=extras,
        )

    def _extras(self, extras: dict[str, Any], keys: frozenset[str], *, over: bool, points: int) -> tuple[str, ...]:
        world = self._live_world()
        admissible: tuple[str, ...] = ()
        if keys & _LISTING_KEYS:
            valid = world.valid_actions()
            if "valid_actions" in keys:
                extras["valid_actions"] = _valid_names(valid)
            if "admissible_actions" in keys:
                limit = self.max_admissible
                admissible = tuple(_valid_names(valid)) if limit is None else candidates.bounded(valid, limit=limit)
                extras["admissible_actions"] = admissible
        if self._expert is not None:
            plan = [] if over else list(self._expert.plan)
            extras["expert_plan"] = plan
            extras["expert_action"] = plan[0] if plan else None
        if "score" in keys:
            extras["score"] = points
        if "moves" in keys:
            extras["moves"] = int(world.read("getNumMoves"))
        for key, method in _READS.items():
            if key in keys:
                extras[key] = str(world.read(method))
        return admissible

    def _commands(self, actions: Sequence[str], known: Mapping[int, bool]) -> list[str]:
        """What the engine must have received to be where ``actions`` lead (refused and known no-op ones left out)."""
        return [
            action
            for index, action in enumerate(actions)
            if known.get(index, True) and self._sanitize(action) is not None
        ]

    def _drop_dead_world(self) -> None:
        if self._world is not None and not self._world.alive:
            self._world, self._world_task, self._world_log = None, None, []

    def _live_world(self) -> engine.World:
        """The world, at the episode's state (built, and caught up by replay, if needed)."""
        world = self._world
        if world is not None and not world.alive:
            if world.jvm.owner == os.getpid():
                world.ensure_alive("step")  # the JVM died under this episode: InterpreterHaltedError
            world = self._world = None  # inherited through fork: rebuilt in this process's JVM
            if self._target is None and self._task_id is not None:
                self._target = (self._task_id, self._commands(self._actions, self._changes))
        if world is None:
            world = self._world = engine.World()
            self._world_task, self._world_log = None, []
        if self._target is not None:
            self._catch_up(world, *self._target)
        return world

    def _catch_up(self, world: engine.World, task_id: str, commands: list[str]) -> None:
        log = self._world_log
        if self._world_task != task_id or commands[: len(log)] != log:
            self._load(world, task_id)
            log = []
        changed = world.replay(commands[len(log) :])
        self._world_log = log + [command for command, flag in zip(commands[len(log) :], changed, strict=True) if flag]
        self._target = None

    def _load(self, world: engine.World, task_id: str) -> None:
        look = world.load(*_parse(task_id), self.simplifications)
        self._opening[task_id] = (str(world.read("getTaskDescription")), look, round(100 * world.score()))
        self._world_task, self._world_log = task_id, []


def _common_prefix(first: Sequence[str], second: Sequence[str]) -> int:
    """How many leading actions ``first`` and ``second`` share."""
    for index, (a, b) in enumerate(zip(first, second, strict=False)):
        if a != b:
            return index
    return min(len(first), len(second))


def _valid_names(valid: Sequence[Mapping[str, Any]]) -> list[str]:
    """The engine's valid commands, sorted, less ``reset task`` (refused here)."""
    return sorted({str(entry["action"]) for entry in valid if entry.get("template_id") != candidates.RESET_TASK})


def _parse(task_id: str) -> tuple[str, int]:
    name, _, variation = task_id.rpartition("-")
    return name, int(variation)
