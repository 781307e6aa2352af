"""TextWorldExpress environments: the eight TextWorldExpress games behind the :class:`~agentgym_budget.core.env.TextEnv` contract.

Family specifics:

* tasks: one game per seed of the split's fold (:data:`~.games.FOLD_SEEDS`; splits ``train``, ``dev``
  and ``test`` are TextWorldExpress's folds), task id ``<game>-<seed>``; the same seed gives the same game;
* the game's parameters are ``gym.make`` arguments (:data:`~.games.GAMES`, validated with did-you-mean);
* observation: the engine's text; after a reset the task description comes first;
* reward: the engine's normalised score gained this turn (episode return = final score, 1.0 when won);
  ``progress`` is the score clipped to [0, 1]; ``won`` / ``lost``: the engine's task success / failure;
* ``admissible_actions``: the engine's ``validActions``, sorted; any other string is a normal turn
  (the engine answers that it does not understand);
* opt-in ``info`` keys: ``expert_action`` / ``expert_plan`` from the engine's gold path while the
  episode has followed it (``None`` / ``[]`` once it has left it: TextWorldExpress cannot re-plan),
  ``score`` (normalised), ``raw_score``, ``look``, ``inventory`` and ``state_digest`` (of every room's
  description as the engine writes it, the agent's room, the inventory, score and task status; games
  without rooms: the ``look`` view; TextWorldExpress serialises no game, so state it never describes
  is not in it);
* snapshots replay the action history into a new game of the same seed, in this process's JVM
  (TextWorldExpress cannot copy a game); a snapshot of more than :data:`MAX_REPLAY_ACTIONS`
  actions is refused.

Every env of a process shares one JVM (:mod:`.gateway`). Needs the ``twx`` extra and a Java runtime.

Example:
    >>> import gymnasium as gym
    >>> env = gym.make("agentgym_budget/TWX-CoinCollector-v0", num_locations=3, info_keys={"expert_plan"})
    >>> obs, info = env.reset(seed=0)
    >>> info["task_id"], obs.splitlines()[0]
    ('coin-850', 'Your task is to search the environment and find the coin.  Once you find the coin, take it.')
    >>> for action in info["expert_plan"]:
    ...     obs, reward, terminated, truncated, info = env.step(action)
    >>> reward, terminated, info["won"]
    (1.0, True, True)
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from gymnasium.utils import EzPickle

from agentgym_budget.core.env import TextEnv, Turn
from agentgym_budget.core.info_keys import EXPERT_INFO_KEYS
from agentgym_budget.core.text import ACTION_STEP_LIMIT
from agentgym_budget.errors import GenerationError, InvalidOptionError, SnapshotMismatchError
from agentgym_budget.tasks.twx import gateway
from agentgym_budget.tasks.twx.games import FOLD_SEEDS, GAMES, params_string, resolve_params, task_seed

__all__ = [
    "MAX_REPLAY_ACTIONS",
    "TWX_INFO_KEYS",
    "TWXArithmeticEnv",
    "TWXCoinCollectorEnv",
    "TWXCookingEnv",
    "TWXEnv",
    "TWXMapReaderEnv",
    "TWXPeckingOrderEnv",
    "TWXSimonSaysEnv",
    "TWXSortingEnv",
    "TWXTWCEnv",
]

TWX_INFO_KEYS: Mapping[str, str] = {
    **EXPERT_INFO_KEYS,
    "score": "the engine's normalised score (float)",
    "raw_score": "the engine's raw score (float, the game's own points)",
    "look": "the description of the current room ('look around')",
    "inventory": "the agent's inventory text",
}
"""Opt-in ``info`` keys of the TWX ids."""

MAX_REPLAY_ACTIONS = 100_000
"""Longest action history a snapshot may hold (its restore replays every action)."""

_EXPERT_KEYS = frozenset({"expert_action", "expert_plan"})
_GOLD_SEPARATOR = "\n"
_SEEDED_GOLD_AGENTS = {"coin": "CoinGoldAgent", "twc": "TWCGoldAgent"}
"""Games whose engine gold path is a random walk seeded from the clock: ours seeds it with the game's seed."""


class TWXEnv(TextEnv):
    """A TextWorldExpress game (``game`` is set by each id's subclass); see the module docstring.

    Args:
        split: ``"train"``, ``"dev"`` or ``"test"`` (TextWorldExpress's folds).
        info_keys: Opt-in ``info`` keys (:data:`TWX_INFO_KEYS`).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        **params: The game's parameters (:data:`~.games.GAMES`; e.g. ``num_locations`` for Coin Collector).

    Raises:
        InvalidOptionError: An unknown parameter (with did-you-mean) or a value out of range.
        MissingDependencyError: The ``twx`` extra or a Java runtime is missing.
    """

    game: ClassVar[str] = ""
    splits: ClassVar[tuple[str, ...]] = tuple(FOLD_SEEDS)
    optional_info_keys: ClassVar[Mapping[str, str]] = TWX_INFO_KEYS
    expert_recovers: ClassVar[bool] = False

    def __init__(
        self, *, split: str = "train", info_keys: Any = None, render_mode: str | None = None, **params: Any
    ) -> None:
        EzPickle.__init__(self, split=split, info_keys=info_keys, render_mode=render_mode, **params)
        self.params = resolve_params(self.game, params)  # before the JVM: a wrong argument is named first
        super().__init__(split=split, info_keys=info_keys, render_mode=render_mode)
        self.params_string = params_string(self.params)
        self._gold_needed = bool(self.info_keys & _EXPERT_KEYS)
        self._engine: Any = None
        self._step_json: Any = None
        self._pid = 0
        self._score = 0.0
        self._gold: tuple[str, ...] = ()
        self._on_gold = True
        self._position = 0
        self._task_text = ""
        self._last_data: Mapping[str, Any] = {}
        self._connect()

    # ------------------------------------------------------------------ hooks
    def _config(self) -> Mapping[str, Any]:
        return {"game": self.game, "params": self.params_string, "engine": _engine_version()}

    def _list_tasks(self) -> Sequence[str]:
        return [f"{self.game}-{seed}" for seed in FOLD_SEEDS[self.split]]

    def _begin(self, task_id: str, engine_seed: int) -> Turn:
        engine = self._live_engine()
        try:
            with self._generation_lock:  # the game generator is shared by the envs of this configuration
                response, gold = self._new_game(engine, task_seed(task_id))
        except Exception as err:  # py4j's Py4JJavaError: the generator refused these parameters for this seed
            detail = next((line.strip() for line in str(err).splitlines() if "Exception" in line), str(err)[:300])
            raise GenerationError(
                f"{self.name}: TextWorldExpress could not generate task {task_id!r} with "
                f"{self.params_string or 'its defaults'} ({detail}). Try other parameters."
            ) from err
        self._gold = tuple(gold.split(_GOLD_SEPARATOR)) if gold else ()
        self._on_gold, self._position = True, 0
        self._task_text = engine.getTaskDescription()
        self._score = 0.0
        data = json.loads(response)
        turn = self._turn(data, position=0)
        return dataclasses.replace(turn, observation=f"{self._task_text}\n\n{turn.observation}")

    def _act(self, command: str) -> Turn:
        if self._engine is None or self._pid != os.getpid():
            self._live_engine()
        data = json.loads(self._step_json(command))
        position, self._position = self._position, self._position + 1  # not len(self._actions): replays bypass it
        if self._on_gold and (position >= len(self._gold) or self._gold[position] != command):
            self._on_gold = False
        return self._turn(data, position=position + 1)

    def _state_data(self) -> Any:
        data, rooms = self._last_data, gateway.world_view(self._live_engine())
        view = {key: data[key] for key in ("inventory", "scoreRaw", "tasksuccess", "taskfailure")}
        return {**view, "rooms": rooms, "look": data["look"] if rooms is None else None}

    def _close_engine(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None and self._pid == os.getpid():
            gateway.detach(engine)

    def check_state(self, state: object) -> None:
        super().check_state(state)
        if state.engine is not None:  # type: ignore[attr-defined]  # a TextEnvState: checked above
            raise SnapshotMismatchError(
                f"{self.name}: the state carries an engine state; TWX states hold none (they restore by replay)."
            )
        actions = state.actions  # type: ignore[attr-defined]
        if not isinstance(actions, tuple) or len(actions) > MAX_REPLAY_ACTIONS:
            size = len(actions) if isinstance(actions, tuple) else type(actions).__name__
            raise SnapshotMismatchError(
                f"{self.name}: the state holds {size} actions; a TWX state replays a tuple of at most "
                f"{MAX_REPLAY_ACTIONS:,} actions."
            )
        for action in actions:
            if not isinstance(action, str) or len(action) > ACTION_STEP_LIMIT:
                raise SnapshotMismatchError(
                    f"{self.name}: the state's action history holds {type(action).__name__} {action!r:.60}; "
                    f"expected strings of at most {ACTION_STEP_LIMIT} characters."
                )

    # ------------------------------------------------------------------ API
    @property
    def gold_path(self) -> tuple[str, ...]:
        """The engine's gold action sequence of the current game (empty unless an expert key was requested)."""
        return self._gold

    # ------------------------------------------------------------------ internals
    def _connect(self) -> None:
        engine, lock = gateway.loaded_game_interface(self.game, self.params_string)
        if isinstance(lock, str):
            raise InvalidOptionError(f"{self.name}: TextWorldExpress refused {self.params_string!r}: {lock.strip()}")
        self._engine, self._generation_lock, self._pid = engine, lock, os.getpid()
        self._step_json = engine.stepJSON  # py4j builds a method object on every attribute access

    def _live_engine(self) -> Any:
        """The game object, rebuilt (with the episode so far) after ``close()`` or in a process made by ``fork``."""
        if self._engine is None or self._pid != os.getpid():
            self._connect()
            if self._task_id is not None:
                with self._generation_lock:
                    self._engine.generateNewGameJSON(task_seed(self._task_id), self.split, False)
                for action in self._actions[: self._position]:
                    self._step_json(action)
        return self._engine

    def _new_game(self, engine: Any, seed: int) -> tuple[str, str]:
        """The engine's new game of ``seed`` (its JSON) and, if an expert key was asked for, its gold path."""
        seeded_agent = _SEEDED_GOLD_AGENTS.get(self.game) if self._gold_needed else None
        response = engine.generateNewGameJSON(seed, self.split, self._gold_needed and seeded_agent is None)
        if seeded_agent is not None:
            return response, gateway.seeded_gold_path(engine, seeded_agent, seed, self.split)
        if self._gold_needed:
            return response, gateway.string_join(_GOLD_SEPARATOR, engine.getGoldActionSequence())
        return response, ""

    def _turn(self, data: Mapping[str, Any], *, position: int) -> Turn:
        self._last_data = data
        score = float(data["score"])
        reward, self._score = score - self._score, score
        extras: dict[str, Any] = {}
        keys = self.info_keys
        if keys:
            if keys & _EXPERT_KEYS:
                plan = list(self._gold[position:]) if self._on_gold else []
                extras["expert_plan"] = plan
                extras["expert_action"] = plan[0] if plan else None
            extras["score"] = score
            extras["raw_score"] = float(data["scoreRaw"])
            extras["look"] = data["look"]
            extras["inventory"] = data["inventory"]
        return Turn(
            observation=data["observation"],
            reward=reward,
            won=bool(data["tasksuccess"]),
            lost=bool(data["taskfailure"]),
            progress=min(1.0, max(0.0, score)),
            admissible_actions=tuple(sorted(data["validActions"])),
            goal=self._task_text,
            extras=extras,
        )


@functools.cache
def _engine_version() -> str:
    from textworld_express.version import __version__

    return f"textworld-express {__version__}"


def _subclass(game: str) -> type[TWXEnv]:
    spec = GAMES[game]
    name = "TWX" + spec.env_name.removeprefix("TWX-").removesuffix("-v0") + "Env"
    doc = f"``{spec.env_name}``: {spec.description} Arguments: " + (
        ", ".join(param.describe() for param in spec.params) or "none"
    )
    return type(name, (TWXEnv,), {"game": game, "__doc__": doc, "__module__": __name__})


TWXCoinCollectorEnv = _subclass("coin")
TWXCookingEnv = _subclass("cookingworld")
TWXTWCEnv = _subclass("twc")
TWXArithmeticEnv = _subclass("arithmetic")
TWXMapReaderEnv = _subclass("mapreader")
TWXSortingEnv = _subclass("sorting")
TWXSimonSaysEnv = _subclass("simonsays")
TWXPeckingOrderEnv = _subclass("peckingorder")
