"""TextWorld environments: generated games (by challenge) and user-provided game files.

Every env here plays ``.z8`` games through :class:`~.engine.TextWorldEngine` and
follows the :class:`~agentgym_budget.core.env.TextEnv` contract. Family specifics:

* reward: the game score gained this turn (episode return = final score);
* ``progress``: ``score / max_score`` (``1.0`` once won when a game has no score), or with
  ``progress="plan"`` (Coin Collector's default) the share of the winning route walked (:mod:`.progress`);
* ``won`` / ``lost``: TextWorld's end-of-game messages;
* ``goal``: the game's objective text;
* opt-in ``info`` keys: ``expert_action`` / ``expert_plan`` (TextWorld's winning policy,
  re-planned from the current state), ``score``, ``max_score``, ``moves``, ``inventory``,
  ``description``, ``facts`` (sorted) and ``state_digest`` (of the facts, the quests' flags and the score);
* turns and moves: a *turn* is one ``step`` call, whatever the agent typed (this is what
  ``TurnBudget`` counts); ``moves`` is TextWorld's count of the game actions the game carried
  out (parser errors, refused commands and actions that fail, such as walking into a wall, are
  not moves), so ``moves <= turns`` at every step;
* observations drop TextWorld's ASCII-art banner, the interpreter's prompt and status line and,
  once the game is over, its "Would you like to RESTART, RESTORE ..." question; the game's
  closing "You scored S out of a possible M, in N turns." states the episode's turn count;
* commands are screened by :func:`~.commands.check_command`: a chained line is cut to its first
  command, and interpreter meta-commands and multi-object commands are refused with the game's
  own parser message (the turn is spent, the game does not see them), so every turn is at most
  one game action;
* lean mode (``lean=True``, every TextWorld id): TextWorld's state tracking (the quest and world
  model it updates after every command to know the admissible commands, the expert's plan, the
  facts and the move count) runs only if a requested ``info`` key needs it: ``admissible_actions``
  becomes an opt-in key, and ``expert_action``, ``expert_plan``, ``facts``, ``moves`` and
  ``state_digest`` turn the tracking on when requested. Without them a step costs the interpreter plus a few parsing
  passes (``benchmarks/textworld_lean.py``). Observations, rewards, ``won`` / ``lost``,
  ``progress``, ``goal``, the command screening and snapshots are those of the default mode;
  ``info`` lacks ``admissible_actions`` unless requested (:attr:`TextWorldEnv.omitted_info_keys`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import textworld
from gymnasium.utils import EzPickle

from agentgym_budget.core.env import TextEnv, Turn
from agentgym_budget.errors import DataError, InvalidOptionError
from agentgym_budget.snapshots.state import TextEnvState
from agentgym_budget.storage.safe_json import resolve_user_path
from agentgym_budget.tasks.textworld import games
from agentgym_budget.tasks.textworld.commands import UNKNOWN_VERB_FEEDBACK, check_command
from agentgym_budget.tasks.textworld.engine import TextWorldEngine, TextWorldEngineState
from agentgym_budget.tasks.textworld.progress import check_progress_mode, initial_plan_length
from agentgym_budget.tasks.textworld.turns import (
    LEAN_INFO_KEYS,
    TEXTWORLD_INFO_KEYS,
    TRACKED_INFO_KEYS,
    make_turn,
    request_infos,
)
from agentgym_budget.tasks.textworld.verify import check_portable_fields, verify_by_replay

__all__ = [
    "CoinCollectorEnv",
    "CookingEnv",
    "CustomEnv",
    "FileEnv",
    "GeneratedGameEnv",
    "SimpleEnv",
    "TextWorldEnv",
    "TreasureHunterEnv",
]


class TextWorldEnv(TextEnv):
    """Base of the TextWorld envs: plays ``.z8`` games; subclasses say which games form the task set.

    Args:
        split: The task split.
        info_keys: Opt-in ``info`` keys (:data:`TEXTWORLD_INFO_KEYS`; in lean mode :data:`LEAN_INFO_KEYS`).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        lean: Run TextWorld's state tracking only for the requested ``info`` keys that need it
            (:data:`TRACKED_INFO_KEYS`; see the module docstring).
        progress: What ``info["progress"]`` measures: ``"score"`` or ``"plan"`` (:mod:`.progress`).

    Raises:
        InvalidOptionError: ``lean`` is not a bool, or ``progress`` is not a mode.
    """

    optional_info_keys: ClassVar[Mapping[str, str]] = TEXTWORLD_INFO_KEYS
    max_replay_actions: ClassVar[int | None] = None  # states always hold the engine state

    def __init__(
        self,
        *,
        split: str,
        info_keys: Any = None,
        render_mode: str | None = None,
        lean: bool = False,
        progress: str = "score",
    ) -> None:
        if not isinstance(lean, bool):
            raise InvalidOptionError(f"{type(self).__name__}: lean must be True or False, got {lean!r}.")
        self.lean = lean
        self.progress = check_progress_mode(progress, type(self).__name__)
        if lean:
            self.optional_info_keys = LEAN_INFO_KEYS
        super().__init__(split=split, info_keys=info_keys, render_mode=render_mode)
        self._refusal = UNKNOWN_VERB_FEEDBACK
        keys = self.info_keys
        admissible = not lean or "admissible_actions" in keys
        plan = self.progress == "plan"
        self.tracking = admissible or plan or bool(keys & TRACKED_INFO_KEYS)
        self.omitted_info_keys = frozenset() if admissible else frozenset({"admissible_actions"})
        infos = request_infos(keys, lean=lean, admissible=admissible, tracking=self.tracking, plan=plan)
        self._engine = TextWorldEngine(infos)
        self._plan_starts: dict[str, int] = {}

    def _tracking_config(self) -> Mapping[str, Any]:
        """Part of :meth:`_config`: states of an env without state tracking hold no trackers; the progress mode."""
        config: dict[str, Any] = {} if self.tracking else {"state_tracking": False}
        if self.progress != "score":
            config["progress"] = self.progress
        return config

    def _plan_start(self, task_id: str) -> int | None:
        """The winning route's length at the task's start in ``"plan"`` progress mode, else ``None``."""
        if self.progress != "plan":
            return None
        start = self._plan_starts.get(task_id)
        if start is None:
            start = self._plan_starts[task_id] = initial_plan_length(self._game_path(task_id)) or 0
        return start

    def _game_path(self, task_id: str) -> str:
        """The ``.z8`` file of ``task_id``."""
        raise NotImplementedError

    @property
    def blocked_feedback(self) -> str:
        """The game's parser message for the last refused command (see :func:`~.commands.check_command`)."""
        return self._refusal

    def _begin(self, task_id: str, engine_seed: int) -> Turn:
        self._engine.load(self._game_path(task_id))
        state = self._engine.reset(engine_seed)
        if self.progress == "plan" and task_id not in self._plan_starts:
            self._plan_starts[task_id] = len(state.get("policy_commands") or ())
        return self._turn(state, 0, turn=0, task_id=task_id)

    def _act(self, command: str) -> Turn:
        state, gained = self._engine.step(command)
        return self._turn(state, gained, turn=len(self._actions) + 1, task_id=self._task_id)

    def _sanitize(self, action: str) -> str | None:
        check = check_command(action)
        if check.refusal is not None:
            self._refusal = check.refusal
        return check.command

    def _save_engine(self) -> Any:
        return self._engine.save()

    def _state_data(self) -> Any:
        return self._engine.world_state()

    def _verify_state(self, state: TextEnvState) -> None:
        engine = state.engine
        if isinstance(engine, TextWorldEngineState):
            return  # taken in this process
        check_portable_fields(engine)
        if engine.__dict__.get("snapshot_sealed") or engine.__dict__.get("_verified"):
            return
        path = self._game_path(state.task_id)
        verify_by_replay(engine, self._engine, path, state.engine_seed, state.actions)
        object.__setattr__(engine, "_verified", True)

    def _load_engine(self, task_id: str, engine_seed: int, engine_state: Any) -> None:
        self._engine.restore(engine_state, self._game_path(task_id))

    def _share_engine(self, twin: TextEnv) -> None:
        if self._engine.game_path is not None:
            twin._engine = self._engine.fork()
        if isinstance(twin, GeneratedGameEnv) and isinstance(self, GeneratedGameEnv):
            twin._paths = self._paths

    def _close_engine(self) -> None:
        self._engine.close()

    def _turn(self, state: textworld.GameState, reward: int, *, turn: int, task_id: str) -> Turn:
        return make_turn(state, reward, turn=turn, keys=self.info_keys, plan_start=self._plan_start(task_id))


class GeneratedGameEnv(TextWorldEnv):
    """TextWorld games generated from a :class:`~.games.GameRecipe`; task ``<prefix>-<seed>``.

    The task set of a split is its seed range (:data:`~.games.SPLIT_SEEDS`). Games are
    generated the first time they are played and cached on disk.
    """

    def __init__(
        self,
        recipe: games.GameRecipe,
        prefix: str,
        *,
        split: str = "train",
        info_keys: Any = None,
        render_mode: str | None = None,
        lean: bool = False,
        progress: str = "score",
    ) -> None:
        options = _options(split, info_keys, render_mode, lean, progress)
        if not hasattr(self, "_ezpickle_kwargs"):
            EzPickle.__init__(self, recipe, prefix, **options)
        super().__init__(**options)
        self.recipe = recipe
        self.prefix = prefix
        self._paths: dict[str, str] = {}

    def _config(self) -> Mapping[str, Any]:
        return {"recipe": self.recipe, **self._tracking_config()}

    def _list_tasks(self) -> Sequence[str]:
        return [f"{self.prefix}-{seed}" for seed in games.split_seeds(self.split)]

    def _game_path(self, task_id: str) -> str:
        path = self._paths.get(task_id)
        if path is None:
            path = self._paths[task_id] = str(games.generate_game(self.recipe, *_seed_and_split(task_id)))
        return path

    def prepare_task(self, task_id: str) -> None:
        """Generate the task's game into the cache (no interpreter is started)."""
        self._game_path(task_id)

    def task_prepared(self, task_id: str) -> bool:
        """Whether the task's game is in the cache, intact."""
        return task_id in self._paths or games.cached_game(self.recipe, *_seed_and_split(task_id)) is not None


def _seed_and_split(task_id: str) -> tuple[int, str]:
    seed = int(task_id.rsplit("-", 1)[1])
    return seed, next(name for name, seeds in games.SPLIT_SEEDS.items() if seed in seeds)


def _options(split: str, info_keys: Any, render_mode: str | None, lean: bool, progress: str) -> dict[str, Any]:
    """The keyword arguments every TextWorld env takes, as one dict (for ``EzPickle`` and the base class)."""
    return {"split": split, "info_keys": info_keys, "render_mode": render_mode, "lean": lean, "progress": progress}


_OPTIONS = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
    for name, default, annotation in (
        ("split", "train", "str"),
        ("info_keys", None, "Any"),
        ("render_mode", None, "str | None"),
        ("lean", False, "bool"),
        ("progress", "score", "str"),
    )
]


def _keyword_options(init: Callable[..., None]) -> Callable[..., None]:
    """``init`` (taking ``**options``) with the signature that names them (what ``gym.make`` callers see)."""
    signature = inspect.signature(init)
    own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    names = {p.name for p in own}
    init.__signature__ = signature.replace(parameters=[*own, *(p for p in _OPTIONS if p.name not in names)])
    return init


class CookingEnv(GeneratedGameEnv):
    """``TextWorld-Cooking-v0``: cook a recipe (First TextWorld Problems style), ``difficulty`` 1-7."""

    @_keyword_options
    def __init__(
        self,
        difficulty: int = 3,
        **options: Any,
    ):
        EzPickle.__init__(self, difficulty=difficulty, **options)
        super().__init__(games.cooking_recipe(difficulty), f"cooking-d{difficulty}", **options)


class CoinCollectorEnv(GeneratedGameEnv):
    """``TextWorld-CoinCollector-v0``: navigate to a coin and take it, ``level`` 1-300."""

    @_keyword_options
    def __init__(
        self,
        level: int = 5,
        progress: str = "plan",
        **options: Any,
    ):
        EzPickle.__init__(self, level=level, progress=progress, **options)
        super().__init__(games.coin_collector_recipe(level), f"coin-l{level}", progress=progress, **options)


class TreasureHunterEnv(GeneratedGameEnv):
    """``TextWorld-TreasureHunter-v0``: find the named treasure among distractors, ``level`` 1-30."""

    @_keyword_options
    def __init__(
        self,
        level: int = 5,
        **options: Any,
    ):
        EzPickle.__init__(self, level=level, **options)
        super().__init__(games.treasure_hunter_recipe(level), f"treasure-l{level}", **options)


class SimpleEnv(GeneratedGameEnv):
    """``TextWorld-Simple-v0``: TextWorld's simple house game (``rewards``, ``goal`` verbosity)."""

    @_keyword_options
    def __init__(
        self,
        rewards: str = "dense",
        goal: str = "detailed",
        **options: Any,
    ):
        EzPickle.__init__(self, rewards=rewards, goal=goal, **options)
        super().__init__(games.simple_recipe(rewards, goal), f"simple-{rewards}-{goal}", **options)


class CustomEnv(GeneratedGameEnv):
    """``TextWorld-Custom-v0``: random worlds of ``world_size`` rooms, ``nb_objects`` objects, a quest."""

    @_keyword_options
    def __init__(
        self,
        world_size: int = 5,
        nb_objects: int = 10,
        quest_length: int = 5,
        quest_breadth: int = 1,
        **options: Any,
    ):
        sizes = (world_size, nb_objects, quest_length, quest_breadth)
        EzPickle.__init__(self, *sizes, **options)
        prefix = f"custom-r{world_size}-o{nb_objects}-q{quest_length}-b{quest_breadth}"
        super().__init__(games.custom_recipe(*sizes), prefix, **options)


class FileEnv(TextWorldEnv):
    """``TextWorld-File-v0``: play your own TextWorld games (``.z8`` with the ``.json`` TextWorld wrote beside it).

    Args:
        path: A ``.z8`` file, or a directory whose ``*.z8`` files (sorted) form the task set.
            Task ids are the file names without extension.

    Raises:
        DataError: No path was given, the path does not exist, holds no ``.z8`` game, or a game lacks its ``.json``.
    """

    splits: ClassVar[tuple[str, ...]] = ("all",)

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        split: str = "all",
        info_keys: Any = None,
        render_mode: str | None = None,
        lean: bool = False,
        progress: str = "score",
    ):
        if path is None:
            raise DataError(
                "TextWorld-File-v0 needs the argument 'path' (--env-args path=...): a .z8 game or a folder of "
                'them, e.g. gym.make("agentgym_budget/TextWorld-File-v0", path="games/").'
            )
        options = _options(split, info_keys, render_mode, lean, progress)
        EzPickle.__init__(self, path=path, **options)
        super().__init__(**options)
        root = resolve_user_path(path, what="TextWorld-File-v0")
        if not root.exists():
            raise DataError(
                f"TextWorld-File-v0: {root} does not exist; pass the path of a .z8 game or a folder of them."
            )
        files = [root] if root.is_file() else sorted(root.glob("*.z8"))
        if not files or any(f.suffix != ".z8" for f in files):
            raise DataError(
                f"TextWorld-File-v0: no .z8 game at {root}. Expected a TextWorld game file (.z8, with its "
                ".json beside it) or a folder of them; .ulx games need TextWorld < 1.7."
            )
        missing = [f.name for f in files if not f.with_suffix(".json").is_file()]
        if missing:
            raise DataError(
                f"TextWorld-File-v0: {', '.join(missing)} in {root.parent if root.is_file() else root} lack the "
                ".json file TextWorld writes beside each game; it holds the quest and world data needed for "
                "admissible actions, progress and the expert. Regenerate the game with TextWorld (tw-make)."
            )
        self.root = root
        self._files = {f.stem: str(f) for f in files}

    def _config(self) -> Mapping[str, Any]:
        return {"path": str(self.root), **self._tracking_config()}

    def _list_tasks(self) -> Sequence[str]:
        return list(self._files)

    def _game_path(self, task_id: str) -> str:
        return self._files[task_id]
