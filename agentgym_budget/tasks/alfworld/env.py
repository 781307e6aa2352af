"""ALFWorld environments: generated ALFRED-style games, or the official ALFWorld data.

:class:`ALFWorldEnv` follows the :class:`~agentgym_budget.core.env.TextEnv` contract on the real
ALFWorld text engine (:class:`~.engine.AlfworldEngine`). Family specifics:

* tasks: generated offline from the ALFRED scenes shipped in ``alfworld`` (:mod:`~.alfworld.generator`,
  task ids ``"<task_type>-<seed>"``), or, with ``data_dir=...`` (or ``$AGENTGYM_BUDGET_ALFWORLD_DATA``),
  the official ``json_2.1.1`` games (task ids ``"<task folder>/<trial folder>"``, :mod:`.data`);
* splits: ``train``, ``valid_seen`` (seen scenes, other tasks) and ``valid_unseen`` (scenes held
  out of training), as ALFWorld's in- and out-of-distribution evaluation;
* reward: ``1.0`` on the step that completes the task, else ``0.0`` (ALFWorld's score);
* ``won``: the goal holds (the planner's goal test); ``lost`` is never set (use ``TurnBudget``);
* ``progress``: ALFWorld's goal-condition score (:func:`~.task_types.goal_progress`), ``1.0`` once won;
* ``goal``: the task text (``"put a hot apple in fridge."``);
* opt-in ``info`` keys: ``expert_action`` / ``expert_plan`` from the planner (``expert="planner"``,
  computed only when requested and cached per state) or ALFWorld's handcoded expert
  (``expert="handcoded"``); ``facts`` (true PDDL facts with entity names, sorted), ``task_type``,
  ``game_file`` and ``state_digest`` (of the true PDDL facts by entity id, less ``checked``: the
  domain's note of what the agent looked at, which no action or goal reads);
* commands: white space collapsed and lower-cased; anything that is not an admissible command
  is one normal turn answered ``"Nothing happens."``, as in ALFWorld;
* snapshots: native (planner state id + PDDL facts) within an episode and in forks (which share
  the planner library); elsewhere, including other processes, the planner operators of the episode
  are applied again (no text derived); with the handcoded expert, a state from another process
  replays the episode's commands (the expert's memory is not plain data).

Example:
    >>> env = ALFWorldEnv("pick_and_place_simple", num_games=1)
    >>> env.task_ids
    ('pick_and_place_simple-0',)
    >>> obs, info = env.reset(seed=0)
    >>> obs.startswith("-= Welcome to TextWorld, ALFRED! =-"), info["goal"] in obs
    (True, True)
    >>> env.close()
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from gymnasium.utils import EzPickle

from agentgym_budget.core.env import TextEnv, Turn
from agentgym_budget.core.info_keys import EXPERT_INFO_KEYS
from agentgym_budget.errors import InvalidOptionError, MissingDependencyError
from agentgym_budget.snapshots import schema
from agentgym_budget.tasks.alfworld import data as official
from agentgym_budget.tasks.alfworld import generator
from agentgym_budget.tasks.alfworld.portable import PortableAlfworldEnvState
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES, goal_progress, progress_predicates

__all__ = ["ALFWorldEnv"]

ALFWORLD_INFO_KEYS: Mapping[str, str] = {
    **EXPERT_INFO_KEYS,
    "facts": "the true PDDL facts with entity names, sorted (list[str])",
    "task_type": "the ALFWorld task type (str)",
    "game_file": "path of the game's game.tw-pddl (str)",
}

MAX_COMMAND_LENGTH = 200
"""Commands are cut to this many characters (no admissible command is longer)."""

_EXPERTS = ("planner", "handcoded")


def _require_alfworld(feature: str = "ALFWorld-v0") -> None:
    """Raise :class:`MissingDependencyError` naming the ``alfworld`` extra if ``alfworld`` cannot be imported."""
    try:
        import alfworld.agents.environment.alfred_tw_env  # noqa: F401
        import fast_downward  # noqa: F401
    except ImportError as err:
        raise MissingDependencyError.for_extra("alfworld", "alfworld", feature) from err


MAX_REPLAYED_COMMANDS = 1000
"""The most commands a snapshot whose expert is rebuilt by replay may hold (restoring it replays them)."""


def sanitize_command(action: str) -> str:
    """The command the engine receives: white space collapsed, lower case, at most :data:`MAX_COMMAND_LENGTH` chars.

    Example:
        >>> sanitize_command("  Go to   Fridge 1 ")
        'go to fridge 1'
    """
    return " ".join(action.split()).lower()[:MAX_COMMAND_LENGTH]


def _task_types(task_types: str | Iterable[str] | None) -> tuple[str, ...]:
    if task_types is None:
        return tuple(TASK_TYPES)
    names = (task_types,) if isinstance(task_types, str) else tuple(task_types)
    unknown = [name for name in names if name not in TASK_TYPES]
    if unknown or not names:
        raise InvalidOptionError(
            f"Unknown ALFWorld task type(s) {unknown or names!r}; expected some of {', '.join(TASK_TYPES)}."
        )
    return tuple(name for name in TASK_TYPES if name in names)


@functools.lru_cache(maxsize=1)
def _builtin_logic() -> tuple[str, str, dict[str, str]]:
    from importlib import metadata

    import alfworld

    folder = Path(alfworld.__file__).parent / "data"
    versions = {name: metadata.version(name) for name in ("alfworld", "textworld", "fast-downward-textworld")}
    return (folder / "alfred.pddl").read_text(), (folder / "alfred.twl2").read_text(), versions


def _check_solvable(path: Path) -> list[str]:
    """Play the planner's plan on a freshly written game; return it if it wins."""
    from agentgym_budget.tasks.alfworld.engine import AlfworldEngine

    engine = AlfworldEngine()
    try:
        engine.load(str(path))
        state = engine.reset(0)
        plan = engine.plan()
        for command in plan:
            state = engine.step(command)
        return plan if state["won"] else []
    finally:
        engine.close()


@functools.lru_cache(maxsize=256)
def _trajectory(game_path: str) -> Mapping[str, Any]:
    return official.read_trajectory(Path(game_path).with_name("traj_data.json"))


@dataclass(frozen=True)
class _Snapshot:
    engine: Any
    commands: tuple[str, ...]
    expert: Any
    goal: str

    def portable(self) -> PortableAlfworldEnvState:
        return PortableAlfworldEnvState(self.engine.portable(), self.commands, self.goal, self.expert is not None)


class ALFWorldEnv(TextEnv):
    """ALFWorld tasks on the real engine (see the module docstring).

    Args:
        task_types: One task type name, several, or ``None`` for all six (:data:`~.task_types.TASK_TYPES`).
        split: ``"train"``, ``"valid_seen"`` or ``"valid_unseen"``.
        data_dir: Official ALFWorld data (see :mod:`.data`); ``None`` reads ``$AGENTGYM_BUDGET_ALFWORLD_DATA``
            and, if it is unset, uses generated games.
        num_games: Keep only the first ``num_games`` games (per task type for generated games),
            like ALFWorld's ``num_train_games``; ``None`` keeps all.
        shuffle_names: Renumber same-type entities at each reset from the episode seed
            (ALFWorld's domain randomization); default ``False`` as in ALFWorld.
        expert: Source of ``expert_action`` / ``expert_plan``: ``"planner"`` or ``"handcoded"``.
        info_keys: Opt-in ``info`` keys (:data:`ALFWORLD_INFO_KEYS`).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.

    Raises:
        MissingDependencyError: ``alfworld`` is not installed.
        DataError: ``data_dir`` does not hold playable games of the split and task types.
        InvalidOptionError: Unknown task type, expert or a bad ``num_games``.
    """

    splits: ClassVar[tuple[str, ...]] = ("train", "valid_seen", "valid_unseen")
    optional_info_keys: ClassVar[Mapping[str, str]] = ALFWORLD_INFO_KEYS
    max_replay_actions: ClassVar[int | None] = None  # states always hold the engine state

    def __init__(
        self,
        task_types: str | Iterable[str] | None = None,
        *,
        split: str = "train",
        data_dir: str | os.PathLike[str] | None = None,
        num_games: int | None = None,
        shuffle_names: bool = False,
        expert: str = "planner",
        info_keys: Any = None,
        render_mode: str | None = None,
    ) -> None:
        if not hasattr(self, "_ezpickle_kwargs"):
            EzPickle.__init__(
                self,
                task_types=task_types,
                split=split,
                data_dir=data_dir,
                num_games=num_games,
                shuffle_names=shuffle_names,
                expert=expert,
                info_keys=info_keys,
                render_mode=render_mode,
            )
        super().__init__(split=split, info_keys=info_keys, render_mode=render_mode)
        self.task_types = _task_types(task_types)
        single = TASK_TYPES[self.task_types[0]].env_name if len(self.task_types) == 1 else "ALFWorld-v0"
        _require_alfworld(single)
        if expert not in _EXPERTS:
            raise InvalidOptionError(f"expert must be one of {_EXPERTS}, got {expert!r}.")
        if num_games is not None and (isinstance(num_games, bool) or not isinstance(num_games, int) or num_games < 1):
            raise InvalidOptionError(f"num_games must be a positive integer or None, got {num_games!r}.")
        self.expert = expert
        self.shuffle_names = bool(shuffle_names)
        self.num_games = num_games
        self.data_dir = official.resolve_data_dir(data_dir)
        self._official: dict[str, official.OfficialGame] | None = None
        if self.data_dir is not None:
            games = official.find_games(self.data_dir, split, self.task_types)
            self._official = {game.task_id: game for game in games[:num_games]}
        self._paths: dict[str, str] = {}
        self._engine: Any = None
        self._handcoded: Any = None
        self._commands: list[str] = []
        self._meta: Mapping[str, Any] = {}
        self._goal = ""
        self._progress_memo: tuple[Any, float] | None = None

    # ------------------------------------------------------------------ task set
    def _config(self) -> Mapping[str, Any]:
        source = str(self.data_dir) if self.data_dir is not None else f"generated-v{generator.GENERATOR_VERSION}"
        return {
            "source": source,
            "task_types": self.task_types,
            "num_games": self.num_games,
            "shuffle_names": self.shuffle_names,
            "expert": self.expert if self.info_keys & EXPERT_INFO_KEYS.keys() else None,
        }

    def _list_tasks(self) -> Sequence[str]:
        if self._official is not None:
            return list(self._official)
        seeds = generator.SPLIT_SEEDS[self.split][: self.num_games]
        return [f"{task_type}-{seed}" for seed in seeds for task_type in self.task_types]

    def _game_path(self, task_id: str) -> str:
        path = self._paths.get(task_id)
        if path is None:
            if self._official is not None:
                path = self._official[task_id].game_path
            else:
                task_type, seed = task_id.rsplit("-", 1)
                domain, grammar, versions = _builtin_logic()
                path = str(
                    generator.generate_game(
                        task_type,
                        int(seed),
                        generator.split_of_seed(int(seed)),
                        check=_check_solvable,
                        domain=domain,
                        grammar=grammar,
                        versions=versions,
                    )
                )
            self._paths[task_id] = path
        return path

    # ------------------------------------------------------------------ engine hooks
    def _engine_for_episode(self) -> Any:
        if self._engine is None:
            from agentgym_budget.tasks.alfworld.engine import AlfworldEngine

            self._engine = AlfworldEngine(shuffle_names=self.shuffle_names, facts=self._wants_handcoded())
        return self._engine

    def _wants_handcoded(self) -> bool:
        return self.expert == "handcoded" and bool(self.info_keys & EXPERT_INFO_KEYS.keys())

    def _begin(self, task_id: str, engine_seed: int) -> Turn:
        path = self._game_path(task_id)
        engine = self._engine_for_episode()
        engine.load(path)
        state = engine.reset(engine_seed)
        self._commands = []
        self._start_task(path, state)
        self._handcoded = None
        if self._wants_handcoded():
            from agentgym_budget.tasks.alfworld.expert import HandcodedExpert

            self._handcoded = HandcodedExpert(path, engine_seed)
            self._handcoded.observe_reset(state)
        return self._turn(state, first=True)

    def _start_task(self, path: str, state: Mapping[str, Any]) -> None:
        self._meta = _trajectory(path)
        intro = state["feedback"] or ""
        marker = "Your task is to: "
        self._goal = intro[intro.rindex(marker) + len(marker) :].strip() if marker in intro else ""

    def _act(self, command: str) -> Turn:
        state = self._engine.step(command)
        self._commands.append(command)
        if self._handcoded is not None:
            self._handcoded.observe_step(state, command)
        return self._turn(state)

    def _sanitize(self, action: str) -> str | None:
        return sanitize_command(action)

    def _save_engine(self) -> Any:
        expert = self._handcoded.copy() if self._handcoded is not None else None
        return _Snapshot(self._engine.save(), tuple(self._commands), expert, self._goal)

    def _state_data(self) -> Any:  # not `checked`: ALFWorld's note of what was looked at, which nothing reads
        facts = self._engine.facts()
        return sorted(f"{name}({','.join(arguments)})" for name, arguments in facts if name != "checked")

    def _verify_state(self, state: Any) -> None:
        engine = state.engine
        if not isinstance(engine, PortableAlfworldEnvState):
            return  # taken in this process
        commands = schema.sequence(engine.commands, "the ALFWorld command log")
        if len(commands) > len(state.actions) or not all(isinstance(c, str) for c in commands):
            raise schema.mismatch("the ALFWorld command log", commands, "at most one str per action of the episode")
        schema.text(engine.goal, "the ALFWorld goal")
        if schema.boolean(engine.handcoded, "the ALFWorld expert flag") and len(commands) > MAX_REPLAYED_COMMANDS:
            raise schema.mismatch(
                "the ALFWorld command log", f"{len(commands)} commands", f"at most {MAX_REPLAYED_COMMANDS} to replay"
            )

    def _load_engine(self, task_id: str, engine_seed: int, engine_state: Any) -> None:
        path = self._game_path(task_id)
        if isinstance(engine_state, PortableAlfworldEnvState) and engine_state.handcoded:
            self._begin(task_id, engine_seed)
            for command in engine_state.commands:
                self._act(command)
            return
        engine = self._engine_for_episode()
        engine.restore(engine_state.engine, path)
        self._commands = list(engine_state.commands)
        expert = getattr(engine_state, "expert", None)
        self._handcoded = expert.copy() if expert is not None else None
        self._meta = _trajectory(path)
        self._goal = engine_state.goal

    def _share_engine(self, twin: TextEnv) -> None:
        if self._engine is not None and self._engine.game_path is not None:
            twin._engine = self._engine.fork()
        twin._paths = self._paths

    def _close_engine(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    # ------------------------------------------------------------------ turns
    def _turn(self, state: Mapping[str, Any], *, first: bool = False) -> Turn:
        engine = self._engine
        won = bool(state["won"])
        task_type = self._meta.get("task_type", "")
        extras: dict[str, Any] = {}
        keys = self.info_keys
        if keys & EXPERT_INFO_KEYS.keys():
            if self._handcoded is not None:
                action = self._handcoded.action
                plan = [action] if action is not None else []
            else:
                plan = engine.plan()
            extras["expert_plan"] = plan
            extras["expert_action"] = plan[0] if plan else None
        if "facts" in keys:
            extras["facts"] = engine.named_facts()
        if "task_type" in keys:
            extras["task_type"] = task_type
        if "game_file" in keys:
            extras["game_file"] = engine.game_path
        return Turn(
            observation=state["feedback"] or "",
            reward=0.0 if first else float(state.get("score") or 0),
            won=won,
            lost=False,
            progress=1.0 if won else self._progress(task_type),
            admissible_actions=tuple(state["admissible_commands"] or ()),
            goal=self._goal,
            extras=extras,
        )

    def _progress(self, task_type: str) -> float:
        """The goal progress of the current state, recomputed only after a fact it reads changed."""
        if task_type not in TASK_TYPES:
            return 0.0
        predicates = progress_predicates(task_type)
        params = self._meta.get("pddl_params") or {}
        key = (self._engine.fact_stamp(predicates), task_type, tuple(sorted(params.items())))
        memo = self._progress_memo
        if memo is None or memo[0] != key:
            memo = self._progress_memo = (key, goal_progress(task_type, params, self._engine.facts(predicates)))
        return memo[1]
