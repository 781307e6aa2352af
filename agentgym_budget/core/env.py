"""The environment contract shared by every task family: :class:`TextEnv`.

A :class:`TextEnv` is a ``gymnasium.Env[str, str]``. Its contract, which the
conformance suite in :mod:`agentgym_budget.testing` checks for every registered id:

Spaces
    ``observation_space`` and ``action_space`` are :class:`gymnasium.spaces.Text`
    over :data:`agentgym_budget.core.text.CHARSET` (printable ASCII, newline, tab).
    Observations are normalised into it (:func:`agentgym_budget.core.text.normalize_text`)
    and hold at most :data:`~agentgym_budget.core.text.OBSERVATION_MAX_LENGTH` characters.

``reset(seed=None, options=None)``
    The seed picks the task from the env's split through ``np_random`` (same seed,
    same task, same trajectory); ``options={"task": task_id_or_index}`` picks one
    explicitly. Any other option raises :class:`~agentgym_budget.errors.InvalidOptionError`
    (wrappers consume their own options, e.g. ``max_turns`` for ``TurnBudget``).

``step(action)``
    ``action`` must be a ``str`` of at most :data:`~agentgym_budget.core.text.ACTION_STEP_LIMIT` characters
    (else :class:`~agentgym_budget.errors.InvalidActionError`, and no turn is spent).
    It is sanitised for the engine by the family; any string is one normal turn with
    the game's feedback. ``terminated`` is ``True`` once the task is won or lost;
    ``truncated`` is always ``False`` here (budgets are wrappers). Stepping before
    ``reset`` or after termination raises :class:`~agentgym_budget.errors.EpisodeOverError`.
    The reward is family-specific and documented by each family.

``info``
    Always :data:`~agentgym_budget.core.info_keys.STANDARD_INFO_KEYS` plus the opt-in keys
    requested with ``info_keys=...`` at construction, except the standard keys a documented
    mode of a family makes opt-in (:attr:`TextEnv.omitted_info_keys`: TextWorld's ``lean=True``
    computes ``admissible_actions`` only when requested).

``get_state()`` / ``set_state(state)``
    An immutable :class:`~agentgym_budget.snapshots.state.TextEnvState`; restoring it makes the
    following observations, rewards and infos equal to those of a fresh replay of the
    same actions. Families with a native engine state restore it directly; the others
    reset with the same engine seed and replay the action log. A state also restores in
    another process (:meth:`~agentgym_budget.snapshots.state.SerialisedState.to_bytes`, or pickle)
    into an env made with the same id and arguments.

Pickling, ``copy.copy`` and ``copy.deepcopy``
    An env pickles as its constructor arguments plus, when an episode is running, the
    serialised state of the episode: it unpickles (in any process) at the same point of
    the same episode. What travels between processes is configuration + snapshot: to move
    work to a worker, send the id and arguments and ``state.to_bytes()``.

Threads
    One env object is used by one thread at a time (like any Gymnasium env). Any number of
    envs, of any families, may be made, reset, stepped, snapshotted and closed in as many
    threads at once (OpenEnv sessions, SkyRL and verifiers run env calls in thread pools),
    including envs playing the same task and envs whose games are being generated or loaded
    for the first time: what they share (parsed games, generated files on disk, parsers, the
    planner) is built once and guarded, and every episode equals the same episode played alone.

Families implement the hooks ``_list_tasks``, ``_begin``, ``_act`` and optionally
``_sanitize``, ``_config``, ``_save_engine`` / ``_load_engine``, ``_share_engine``,
``_close_engine`` and ``_state_data`` (what ``info["state_digest"]`` digests,
:mod:`~agentgym_budget.core.state_digest`).
"""

from __future__ import annotations

import abc
import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.utils import EzPickle

from agentgym_budget.core import _env_support as support
from agentgym_budget.core import text
from agentgym_budget.core.info_keys import EXPERT_INFO_KEYS, resolve_info_keys
from agentgym_budget.core.state_digest import STATE_INFO_KEYS, digest_state
from agentgym_budget.core.turn import Turn, turn_info
from agentgym_budget.errors import EpisodeOverError, InvalidActionError, InvalidOptionError, UnknownSplitError
from agentgym_budget.snapshots.codec import encode
from agentgym_budget.snapshots.state import TextEnvState

__all__ = ["TextEnv"]


class TextEnv(gym.Env[str, str], EzPickle, abc.ABC):
    """Base class of every agentgym-budget environment (see the module docstring).

    Args:
        split: Which task split to draw tasks from (see the family's ``splits``).
        info_keys: Opt-in ``info`` keys (see ``optional_info_keys``).
        render_mode: ``None``, ``"ansi"`` (``render()`` returns the last observation) or
            ``"human"`` (``render()`` prints it).

    Subclasses call ``EzPickle.__init__(self, **their_kwargs)`` so :meth:`clone` can rebuild them.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}
    splits: ClassVar[tuple[str, ...]] = ("train", "valid", "test")
    optional_info_keys: ClassVar[Mapping[str, str]] = EXPERT_INFO_KEYS
    blocked_feedback: ClassVar[str] = "That command is not available in this game."
    checks_state_before_set: ClassVar[bool] = True
    """``set_state`` validates a state before it changes anything (snapshot stacks need not check first)."""
    max_replay_actions: ClassVar[int | None] = 1000
    """The most actions a state without engine state may hold (restoring it replays them); ``None``: the
    family always saves its engine state, and a state without one is refused."""
    can_share_engine: ClassVar[bool] = True
    """``clone(share_engine=True)`` gives a twin sharing this env's loaded engine (what forks use)."""
    expert_recovers: ClassVar[bool] = True
    """``expert_action`` is re-planned from any state, so an expert that errs can recover; ``False``: the
    expert only knows the path from the start (it has no action once an episode leaves it)."""
    omitted_info_keys: frozenset[str] = frozenset()
    """Standard ``info`` keys this env leaves out (a family's lean mode; empty by default)."""

    def __init__(self, *, split: str = "train", info_keys: Any = None, render_mode: str | None = None) -> None:
        if split not in self.splits:
            raise UnknownSplitError.for_split(split, self.splits, type(self).__name__)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise InvalidOptionError(
                f"Unknown render_mode {render_mode!r}; expected None or one of {self.metadata['render_modes']}."
            )
        self.split = split
        self.render_mode = render_mode
        if "state_digest" not in self.optional_info_keys:  # every family offers it
            self.optional_info_keys = {**self.optional_info_keys, **STATE_INFO_KEYS}
        self.info_keys = resolve_info_keys(info_keys, self.optional_info_keys, type(self).__name__)
        self.observation_space, self.action_space = support.fresh_spaces()
        self._task_ids: tuple[str, ...] | None = None
        self._task_positions: dict[str, int] | None = None
        self._pending_rng: Mapping[str, Any] | None = None
        self._task_id: str | None = None
        self._engine_seed = 0
        self._actions: list[str] = []
        self._last_turn: Turn | None = None
        self._episode_over = False

    # ------------------------------------------------------------------ family hooks
    @abc.abstractmethod
    def _list_tasks(self) -> Sequence[str]:
        """Return the task ids of ``self.split`` in a fixed order."""

    @abc.abstractmethod
    def _begin(self, task_id: str, engine_seed: int) -> Turn:
        """Start ``task_id`` in the engine (seeded with ``engine_seed``) and return the first turn."""

    @abc.abstractmethod
    def _act(self, command: str) -> Turn:
        """Send one sanitised command to the engine and return the resulting turn."""

    def _sanitize(self, action: str) -> str | None:
        """Rewrite ``action`` for the engine; ``None`` blocks it (a no-op turn with ``blocked_feedback``)."""
        return action

    def _config(self) -> Mapping[str, Any]:
        """Parameters that define the task set (they form part of :attr:`env_key`)."""
        return {}

    def _save_engine(self) -> Any | None:
        """Return the engine's native state, or ``None`` to restore by replay."""
        return None

    def _load_engine(self, task_id: str, engine_seed: int, engine_state: Any) -> None:
        """Put the engine in ``engine_state`` (saved by :meth:`_save_engine` on ``task_id``)."""
        raise NotImplementedError

    def _verify_state(self, state: TextEnvState) -> None:
        """Raise ``SnapshotMismatchError`` if ``state`` (checked by :meth:`check_state`) is not one to restore.

        Called before anything changes; families check their engine states here (TextWorld: ``.verify``).
        """

    def _state_data(self) -> Any:
        """Plain JSON data that defines the engine's current state (what ``info["state_digest"]`` digests).

        Leave out what only counts or narrates (turns, history, feedback). The default: the native engine
        state through the snapshot codec, else the action history (see :mod:`~agentgym_budget.core.state_digest`).
        """
        engine = self._save_engine()
        return encode(engine) if engine is not None else list(self._actions)

    def _share_engine(self, twin: TextEnv) -> None:
        """Give ``twin`` (a new env of the same configuration) an engine sharing this env's loaded resources."""

    def _close_engine(self) -> None:
        """Release the engine's resources (must be idempotent)."""

    # ------------------------------------------------------------------ properties
    @property
    def task_ids(self) -> tuple[str, ...]:
        """Task ids of this env's split, in a fixed order."""
        if self._task_ids is None:
            self._task_ids = tuple(self._list_tasks())
        return self._task_ids

    @property
    def task_id(self) -> str | None:
        """The task of the current episode (``None`` before the first reset)."""
        return self._task_id

    @property
    def env_key(self) -> tuple[Any, ...]:
        """Identity of this env's configuration; states only restore into envs with the same key."""
        key = self.__dict__.get("_env_key")
        if key is None:
            key = self._env_key = (type(self).__qualname__, *sorted((k, repr(v)) for k, v in self._config().items()))
        return key

    @property
    def np_random(self) -> np.random.Generator:
        """The env's random generator (as Gymnasium's; a restored state's generator is built on first use)."""
        pending = self.__dict__.get("_pending_rng")
        if pending is not None:
            self._np_random, self._pending_rng = support.generator_at(pending), None
        return gym.Env.np_random.fget(self)

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._pending_rng = None
        gym.Env.np_random.fset(self, value)

    @property
    def name(self) -> str:
        """The registered id when made with ``gym.make``, else the class name."""
        return self.spec.id if self.spec is not None else type(self).__name__

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on a task (``options={"task_id": ...}``, else one drawn with ``seed``).

        Returns:
            ``(observation, info)``: the task's opening text and the info keys the module docstring lists.
        """
        if seed is not None:
            self._pending_rng = None
        super().reset(seed=seed)
        task_id = self._select_task(options)
        engine_seed = int(self.np_random.integers(1, 2**31 - 1))
        turn = self._begin(task_id, engine_seed)
        self._task_id, self._engine_seed = task_id, engine_seed
        self._actions = []
        self._episode_over = False
        return self._emit(turn)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play one turn: ``action`` is one command (see the module docstring for what a turn returns).

        Returns:
            ``(observation, reward, terminated, truncated, info)``; ``truncated`` is always False here (a
            turn budget truncates through :class:`~agentgym_budget.wrappers.turn_budget.TurnBudget`).
        """
        if not isinstance(action, str):
            raise InvalidActionError.for_action(action)
        if len(action) > text.ACTION_STEP_LIMIT:
            raise InvalidActionError.for_length(action, text.ACTION_STEP_LIMIT)
        if self._task_id is None or self._last_turn is None:
            raise EpisodeOverError(f"{self.name}: call reset() before step().")
        if self._episode_over:
            outcome = "won" if self._last_turn.won else "lost"
            raise EpisodeOverError(
                f"{self.name}: the episode on task {self._task_id!r} is over ({outcome} after "
                f"{len(self._actions)} actions); call reset() to start a new one."
            )
        command = self._sanitize(action)
        valid = self._action_is_valid(command, self._last_turn.admissible_actions)  # before acting: same state
        turn = self._advance(command)
        self._actions.append(action)
        self._episode_over = turn.won or turn.lost
        observation, info = self._emit(turn, action_is_valid=valid)
        return observation, float(turn.reward), self._episode_over, False, info

    def drop_episode(self) -> None:
        """Forget the current episode (its actions and last turn) without touching the engine.

        :meth:`step` and :meth:`get_state` then need a :meth:`reset`. Pools call it when an env goes idle,
        so an idle env holds none of its last client's commands.
        """
        self._task_id, self._actions, self._last_turn, self._episode_over = None, [], None, False

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn(f"{self.name}: render() called without a render_mode; pass render_mode='ansi'.")
            return None
        screen = self._last_turn.observation if self._last_turn is not None else ""
        if self.render_mode == "human":
            print(screen)
            return None
        return screen

    def close(self) -> None:
        self._close_engine()
        super().close()

    # ------------------------------------------------------------------ snapshots
    def get_state(self) -> TextEnvState:
        """Return the immutable state of the current episode (see the module docstring).

        Raises:
            EpisodeOverError: No episode was started yet.
        """
        if self._task_id is None or self._last_turn is None:
            raise EpisodeOverError(f"{self.name}: call reset() before get_state(); there is no episode yet.")
        return TextEnvState(
            env_key=self.env_key,
            task_id=self._task_id,
            engine_seed=self._engine_seed,
            actions=tuple(self._actions),
            last_turn=self._last_turn,
            episode_over=self._episode_over,
            rng_state=self._pending_rng or copy.deepcopy(self.np_random.bit_generator.state),
            engine=self._save_engine(),
        )

    def set_state(self, state: TextEnvState) -> None:
        """Restore a state returned by :meth:`get_state` (of this env or an identical one).

        Raises:
            SnapshotMismatchError: ``state`` is not a ``TextEnvState``, comes from an env with
                another configuration, or its task is not in this env's task set.
        """
        self.check_state(state)
        self._verify_state(state)
        if state.engine is not None:
            self._load_engine(state.task_id, state.engine_seed, state.engine)
        else:
            self._begin(state.task_id, state.engine_seed)
            for action in state.actions:
                command = self._sanitize(action)
                if command is not None:
                    self._act(command)
        self._np_random, self._pending_rng = support.restore_generator(self._np_random, state.rng_state)
        self._task_id, self._engine_seed = state.task_id, state.engine_seed
        self._actions = list(state.actions)
        self._last_turn = state.last_turn
        self._episode_over = state.episode_over

    def state_digest(self) -> str:
        """``info["state_digest"]`` of the current state: 16 hex characters, equal for equal engine states."""
        return digest_state([self._task_id, self._state_data()])

    def check_state(self, state: object) -> None:
        """Raise :class:`~agentgym_budget.errors.SnapshotMismatchError` if ``state`` cannot be restored into this env."""
        support.check_restorable(
            state, env_name=self.name, env_key=self.env_key, task_index=self._task_index(), split=self.split
        )
        support.check_episode_fields(state, max_replay=self.max_replay_actions)

    def prepare_task(self, task_id: str) -> None:
        """Generate or load what ``task_id`` needs into the cache, so its first episode does not wait for it.

        Idempotent and cheap once done (``agentgym-budget prepare`` calls it for a split's tasks). The
        default resets the env on the task; families override it with something lighter.
        """
        self.reset(options={"task": task_id})

    def task_prepared(self, task_id: str) -> bool | None:
        """Whether ``task_id`` is prepared, by a quick look that builds nothing; ``None``: the family cannot tell."""
        return None

    def clone(self, *, share_engine: bool = False) -> TextEnv:
        """Return a new env with the same constructor arguments and spec (not the same state).

        Args:
            share_engine: Let the clone share this env's loaded engine resources (the game, the
                interpreter or planner, swapping each env's state in when it acts), so that
                restoring a state of this env's game into it starts no new engine.
                :meth:`StateSnapshot.fork <agentgym_budget.wrappers.StateSnapshot.fork>` uses it.
        """
        twin = type(self)(*self._ezpickle_args, **self._ezpickle_kwargs)
        twin.spec = self.spec
        if share_engine:
            twin._task_ids, twin._task_positions = self._task_ids, self._task_positions
            twin._env_key = self.__dict__.get("_env_key")
            self._share_engine(twin)
        return twin

    def __getstate__(self) -> dict[str, Any]:
        state = EzPickle.__getstate__(self)
        state["spec"] = self.spec
        if self._task_id is not None and self._last_turn is not None:
            state["episode"] = self.get_state().to_bytes()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        spec, episode = state.pop("spec", None), state.pop("episode", None)
        EzPickle.__setstate__(self, state)
        self.spec = spec
        if episode is not None:
            self.set_state(TextEnvState.from_bytes(episode))

    # ------------------------------------------------------------------ internals
    def _task_index(self) -> Mapping[str, int]:
        if self._task_positions is None:
            self._task_positions = {task: i for i, task in enumerate(self.task_ids)}
        return self._task_positions

    def _select_task(self, options: Mapping[str, Any] | None) -> str:
        return support.select_task(
            options,
            self.task_ids,
            self._task_index(),
            draw=lambda count: int(self.np_random.integers(count)),
            env_name=self.name,
            split=self.split,
        )

    def _advance(self, command: str | None) -> Turn:
        """Play the sanitised ``command`` (``None``: blocked, a no-op turn)."""
        if command is None:
            return dataclasses.replace(self._last_turn, observation=self.blocked_feedback, reward=0.0)
        return self._act(command)

    def _action_is_valid(self, command: str | None, admissible: Sequence[str]) -> bool:
        """The action parsed to ``command`` (see ``_sanitize``), admissible where it was taken.

        Not computed (``False``) when the env omits ``admissible_actions``: ``info`` then has no ``action_is_valid``.
        """
        if "admissible_actions" in self.omitted_info_keys:
            return False
        return command is not None and text.is_admissible(command, admissible)

    def _emit(self, turn: Turn, *, action_is_valid: bool = True) -> tuple[str, dict[str, Any]]:
        observation = text.normalize_text(turn.observation)
        if observation != turn.observation:
            turn = turn.with_observation(observation)
        self._last_turn = turn
        info = turn_info(
            turn,
            task_id=self._task_id,
            action_is_valid=action_is_valid,
            omitted_info_keys=self.omitted_info_keys,
            info_keys=self.info_keys,
        )
        if "state_digest" in self.info_keys:
            info["state_digest"] = self.state_digest()
        return turn.observation, info
