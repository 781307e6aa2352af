"""BabyAI environments: minigrid's BabyAI levels as text, behind the :class:`~agentgym_budget.core.env.TextEnv` contract.

Family specifics:

* tasks: one level seed per task, ``<level>-<seed>`` (:data:`~.levels.SPLIT_SEEDS`: train 0-9,999, valid
  100,000-100,999, test 200,000-200,999); the same seed gives the same layout and mission, in any process;
* observation: GLAM's sentences (:mod:`.describe`), one per line; after a reset the first line is
  ``Goal of the agent: <mission>``; after an invalid command the first line says so;
* actions: the six commands ``turn left``, ``turn right``, ``go forward``, ``pick up``, ``drop`` and
  ``toggle`` (case and spacing ignored), all admissible in every state; any other string is an invalid
  command: one turn passes (minigrid's no-op ``done`` action) and nothing else happens;
* ``reward``: 1.0 on success, else 0.0 (``reward="discounted"``: minigrid's ``1 - 0.9 * step_count /
  max_steps`` on success, ``step_count`` capped at ``max_steps``); ``won`` when the mission is done,
  ``lost`` when it cannot be done any more (a box it needs was opened by ``toggle``: the box is gone; see
  :meth:`~.engine.LevelEngine.mission_impossible`);
* minigrid's ``max_steps`` never ends an episode: a :class:`~agentgym_budget.wrappers.TurnBudget` does
  (it wins whether it is shorter or longer); ``max_steps`` only scales the discounted reward;
* ``progress``: ``1 - remaining / first`` where ``remaining`` is the length of the expert's plan from the
  current state and ``first`` its length at reset (clipped to [0, 1]; 0 where the expert has no plan, 1
  when won); ``progress="sparse"`` skips the planner: 0 until won;
* opt-in ``info`` keys: ``expert_action`` / ``expert_plan`` (minigrid's bot from any state, :mod:`.planner`;
  while the agent follows the plan the rest of it is kept, an action that changes nothing keeps it whole,
  any other action plans again), ``image``
  (minigrid's egocentric 7x7 view codes, ``[x][y][type, colour, state]``), ``agent`` (x, y, direction) and
  ``step_count``;
* snapshots are native: the engine state is the plain :class:`~.state.BabyAIState` (never pickle), checked
  against the task's layout before it is restored; ``info["state_digest"]`` digests it less minigrid's step
  counter (the agent, each object's place and door state, the verifier's memory), and with
  ``progress="plan"`` the expert's remaining plan too: ``progress`` is computed from it, and it is kept while
  the agent follows it, so two paths to one grid state can carry two plans (``progress="sparse"``: the grid
  state alone).

Needs the ``babyai`` extra (``minigrid==3.2.0``, Python >= 3.11).

Example:
    >>> import gymnasium as gym
    >>> env = gym.make("agentgym_budget/BabyAI-GoToLocal-v0", info_keys={"expert_plan"})
    >>> obs, info = env.reset(seed=0)
    >>> print(obs)
    Goal of the agent: go to the yellow key
    You see a wall 1 step forward
    You see a wall 2 steps right
    You see a yellow key 2 steps left
    >>> info["task_id"], info["expert_plan"], info["progress"]
    ('GoToLocal-8506', ['turn left', 'go forward'], 0.0)
    >>> for command in info["expert_plan"]:
    ...     obs, reward, terminated, truncated, info = env.step(command)
    >>> reward, terminated, info["won"], info["progress"]
    (1.0, True, True, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from gymnasium.utils import EzPickle

from agentgym_budget.core.env import TextEnv, Turn
from agentgym_budget.core.info_keys import EXPERT_INFO_KEYS
from agentgym_budget.core.text import normalize_command
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.snapshots.state import TextEnvState
from agentgym_budget.tasks.babyai.describe import describe
from agentgym_budget.tasks.babyai.levels import LEVELS, SPLIT_SEEDS, Level, task_id, task_seed
from agentgym_budget.tasks.babyai.state import COMMANDS, check_state

__all__ = ["BABYAI_INFO_KEYS", "BabyAIEnv"]

BABYAI_INFO_KEYS: Mapping[str, str] = {
    **EXPERT_INFO_KEYS,
    "image": "minigrid's egocentric 7x7 view: [x][y][type, colour, state] codes (nested lists)",
    "agent": "the agent's [x, y, direction] in the grid (direction 0 east, 1 south, 2 west, 3 north)",
    "step_count": "minigrid's step counter (turns played, invalid commands included)",
}
"""Opt-in ``info`` keys of the BabyAI ids."""

REWARDS: tuple[str, ...] = ("success", "discounted")
"""``reward=`` choices: 1.0 on success, or minigrid's step-discounted reward."""

PROGRESS: tuple[str, ...] = ("plan", "sparse")
"""``progress=`` choices: from the expert's remaining plan, or 0 until won."""

_ACTIONS = {command: index for index, command in enumerate(COMMANDS)}
_ADMISSIBLE = tuple(sorted(COMMANDS))
_EXPERT_KEYS = frozenset({"expert_action", "expert_plan"})
_NO_OP = 6  # minigrid's `done`: the turn passes, nothing happens
_ECHO = 40


class BabyAIEnv(TextEnv):
    """A BabyAI level (``level`` is set by each id's subclass); see the module docstring.

    Args:
        split: ``"train"``, ``"valid"`` or ``"test"`` (disjoint level seeds).
        info_keys: Opt-in ``info`` keys (:data:`BABYAI_INFO_KEYS`).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        reward: ``"success"`` (1.0 on success) or ``"discounted"`` (minigrid's reward).
        progress: ``"plan"`` (from the expert's remaining plan) or ``"sparse"`` (0 until won, no planner).
        max_steps: minigrid's ``max_steps`` (``None``: the level's); only the discounted reward uses it.
        holdout_seed: Seed of the held-out combinations of the mixed ids (:mod:`.mixed`); 0 for the others.

    Raises:
        InvalidOptionError: An argument out of its choices or range.
        MissingDependencyError: The ``babyai`` extra is not installed (or Python is older than 3.11).
    """

    level: ClassVar[Level]
    optional_info_keys: ClassVar[Mapping[str, str]] = BABYAI_INFO_KEYS
    blocked_feedback: ClassVar[str] = "That command is not available."
    max_replay_actions: ClassVar[int | None] = None  # states always hold the engine state

    def __init__(
        self,
        *,
        split: str = "train",
        info_keys: Any = None,
        render_mode: str | None = None,
        reward: str = "success",
        progress: str = "plan",
        max_steps: int | None = None,
        holdout_seed: int = 0,
    ) -> None:
        EzPickle.__init__(
            self,
            split=split,
            info_keys=info_keys,
            render_mode=render_mode,
            reward=reward,
            progress=progress,
            max_steps=max_steps,
            holdout_seed=holdout_seed,
        )
        self._check_options(reward, progress, max_steps, holdout_seed)
        super().__init__(split=split, info_keys=info_keys, render_mode=render_mode)
        from agentgym_budget.tasks.babyai.engine import LevelEngine  # imports minigrid: the extra is checked there

        self.reward_kind, self.progress_kind = reward, progress
        self.max_steps, self.holdout_seed = max_steps, holdout_seed
        self.engine = LevelEngine(self.level, holdout_seed, max_steps)
        self._needs_plan = progress == "plan" or bool(self.info_keys & _EXPERT_KEYS)
        self._plan: tuple[str, ...] | None = None
        self._first_plan = 0

    def _check_options(self, reward: str, progress: str, max_steps: int | None, holdout_seed: int) -> None:
        name = type(self).__name__
        if reward not in REWARDS:
            raise InvalidOptionError(f"{name}: unknown reward {reward!r}; expected one of {REWARDS}.")
        if progress not in PROGRESS:
            raise InvalidOptionError(f"{name}: unknown progress {progress!r}; expected one of {PROGRESS}.")
        if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1):
            raise InvalidOptionError(f"{name}: max_steps must be a positive integer or None, got {max_steps!r}.")
        if isinstance(holdout_seed, bool) or not isinstance(holdout_seed, int) or holdout_seed < 0:
            raise InvalidOptionError(f"{name}: holdout_seed must be an integer >= 0, got {holdout_seed!r}.")
        if holdout_seed and self.level.mixed is None:
            raise InvalidOptionError(
                f"{name}: holdout_seed only applies to the mixed ids (BabyAI-MixedTrainLocal-v0, BabyAI-MixedTestLocal-v0)."
            )

    # ------------------------------------------------------------------ hooks
    def _config(self) -> Mapping[str, Any]:
        return {
            "level": self.level.name,
            "reward": self.reward_kind,
            "progress": self.progress_kind,
            "max_steps": self.max_steps,
            "holdout_seed": self.holdout_seed,
        }

    def _list_tasks(self) -> Sequence[str]:
        return [task_id(self.level.name, seed) for seed in SPLIT_SEEDS[self.split]]

    def _begin(self, task_id: str, engine_seed: int) -> Turn:
        image = self.engine.begin(task_seed(task_id))
        self._plan, self._first_plan = None, 0
        if self._needs_plan:
            self._plan = self._planned()
            self._first_plan = len(self._plan)
        mission = self.engine.env.mission
        return self._turn(image, "continue", preface=f"Goal of the agent: {mission}")

    def _sanitize(self, action: str) -> str:
        command = normalize_command(action)
        return command if command in _ACTIONS else action

    def _act(self, command: str) -> Turn:
        action = _ACTIONS.get(command)
        if action is None:
            echo = " ".join(command.split())
            echo = echo if len(echo) <= _ECHO else echo[: _ECHO - 3] + "..."
            image, verdict, _ = self.engine.act(_NO_OP)
            preface = f"'{echo}' is not a command; the commands are: {', '.join(COMMANDS)}."
            return self._turn(image, verdict, preface=preface)
        plan = self._plan
        image, verdict, changed = self.engine.act(action)
        impossible = verdict == "continue" and command in ("toggle", "drop") and self.engine.mission_impossible()
        if verdict != "continue" or impossible:
            self._plan = ()
        elif self._needs_plan and not (plan is not None and not changed):  # an action that changed nothing keeps it
            self._plan = plan[1:] if plan and plan[0] == command else self._planned()
        return self._turn(image, verdict, lost=verdict == "failure" or impossible)

    def _save_engine(self) -> Any:
        return self.engine.save(self._plan, self._first_plan)

    def _state_data(self) -> Any:
        state = self.engine.save(None, 0)  # not minigrid's step counter: it only counts
        verifier = [
            [_finished(first), _finished(second)] if shape == "seq" else [first, second]
            for (shape, _), (first, second) in zip(self.engine.layout.verifier, state.verifier, strict=True)
        ]
        plan = list(self._plan) if self.progress_kind == "plan" and self._plan is not None else None
        return [state.agent, state.carrying, state.objects, verifier, state.positions, plan]

    def _verify_state(self, state: TextEnvState) -> None:
        check_state(state.engine, self.engine.layout_of(task_seed(state.task_id)))

    def _load_engine(self, task_id: str, engine_seed: int, engine_state: Any) -> None:
        self.engine.load(task_seed(task_id), engine_state)
        self._plan, self._first_plan = engine_state.plan, engine_state.first_plan

    # ------------------------------------------------------------------ internals
    def _planned(self) -> tuple[str, ...]:
        """The expert's commands from here (``()``: none; see :mod:`.planner`)."""
        actions = self.engine.plan()
        return () if actions is None else tuple(COMMANDS[action] for action in actions)

    def _progress(self, won: bool) -> float:
        if won:
            return 1.0
        if self.progress_kind != "plan" or not self._plan or not self._first_plan:
            return 0.0
        return min(1.0, max(0.0, 1.0 - len(self._plan) / self._first_plan))

    def _reward(self, won: bool) -> float:
        if not won:
            return 0.0
        if self.reward_kind == "success":
            return 1.0
        env = self.engine.env
        return 1.0 - 0.9 * min(env.step_count, env.max_steps) / env.max_steps

    def _turn(self, image: Any, verdict: str, *, preface: str = "", lost: bool = False) -> Turn:
        won = verdict == "success"
        lines = describe(image, self.engine.carrying)
        observation = "\n".join([preface, *lines]) if preface else "\n".join(lines)
        extras: dict[str, Any] = {}
        keys = self.info_keys
        if keys:
            if keys & _EXPERT_KEYS:
                plan = () if won or lost else (self._plan or ())
                extras["expert_plan"] = list(plan)
                extras["expert_action"] = plan[0] if plan else None
            if "image" in keys:
                extras["image"] = [[list(cell) for cell in column] for column in image]
            env = self.engine.env
            if "agent" in keys:
                extras["agent"] = [int(env.agent_pos[0]), int(env.agent_pos[1]), int(env.agent_dir)]
            if "step_count" in keys:
                extras["step_count"] = int(env.step_count)
        return Turn(
            observation=observation,
            reward=self._reward(won),
            won=won,
            lost=lost and not won,
            progress=self._progress(won),
            admissible_actions=_ADMISSIBLE,
            goal=self.engine.env.mission,
            extras=extras,
        )


def _finished(done: Any) -> str | None:
    """A sequence's memory of one part: ``"success"`` or ``"failure"``, else ``None`` (``False`` and ``"continue"``
    both mean not yet: minigrid writes the first before the part was ever checked, the second after)."""
    return done if done in ("success", "failure") else None


def _subclass(level: Level) -> type[BabyAIEnv]:
    doc = f"``{level.env_name}``: {level.description}. Arguments: see :class:`BabyAIEnv`."
    return type(f"BabyAI{level.name}Env", (BabyAIEnv,), {"level": level, "__doc__": doc, "__module__": __name__})


ENV_CLASSES: dict[str, type[BabyAIEnv]] = {name: _subclass(level) for name, level in LEVELS.items()}
"""The env class of each level, by short name (``BabyAIGoToLocalEnv``, ...)."""

globals().update({cls.__name__: cls for cls in ENV_CLASSES.values()})
