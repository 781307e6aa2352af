"""Episode sessions: the one place where the RL-library adapters map episodes onto the env stack.

Every adapter (OpenEnv, TRL, SkyRL-gym, verifiers through OpenEnv) plays episodes through an
:class:`EpisodeSession`: an env stack built from a config, the shared action parser
(:func:`~agentgym_budget.agents.actions.parse_action`) and the episode's budget. The mapping:

* **Stack**: ``ProcessReward(BudgetMix(TurnBudget(gym.make(env_id, **env_kwargs))))``, the outer two
  only when configured (``budgets=...`` and ``reward="process"``).
* **Model output**: each reply is parsed into exactly one command and costs exactly one turn.
* **Budget**: ``max_turns`` by default; with ``budgets`` a budget drawn per episode by
  :class:`~agentgym_budget.wrappers.BudgetMix` (reproducible from the episode seed); an episode's
  ``max_turns`` field overrides both.
* **Shown budget**: with ``show_budget`` the observation ends with ``[Turns left: k of T]``
  (an episode's ``show_budget`` field overrides the config).
* **Ends**: ``terminated`` when the task is won or lost, ``truncated`` when the budget runs out
  (never both); a step after the end raises :class:`~agentgym_budget.errors.EpisodeOverError`.
* **Reward**: the family's reward (``reward="env"``) or the potential-based
  :class:`~agentgym_budget.wrappers.ProcessReward` (``reward="process"``, parameters in
  ``process_reward``); ``env_reward`` always carries the family's own.
* **Task**: an episode's ``task`` (id or index in the split) and/or ``seed`` (which picks the task
  when ``task`` is absent and seeds the budget draw): same fields, same episode.
* **Limits** (what a server holds one client to; none by default): ``max_budget``, the largest
  ``max_turns`` an episode may ask for (more raises :class:`~agentgym_budget.errors.InvalidBudgetError`),
  and ``max_history_bytes``, the bytes the episode's commands may hold (each counted as Python holds
  it, ``sys.getsizeof``; the env's action log and the session's record share the strings). Every
  command played is kept whole until the next reset or :meth:`EpisodeSession.forget`; a command that
  would take the episode past the limit is refused with
  :class:`~agentgym_budget.errors.InvalidActionError` before the env sees it, spending no turn.

What to play is a :class:`~agentgym_budget.integrations.session_config.SessionConfig`; episode fields (a
dataset row, OpenEnv reset arguments, SkyRL ``extra_info``) are validated by
:func:`~agentgym_budget.integrations.session_config.episode_fields`.

Example:
    >>> config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=1", max_turns=3, show_budget=True)
    >>> session = EpisodeSession(config)
    >>> first = session.reset(seed=0)
    >>> first.turn, first.max_turns, "[Turns left: 3 of 3]" in first.text
    (0, 3, True)
    >>> turn = session.step("I look around.\\nAction: look")
    >>> turn.command, turn.turn, turn.turns_left, turn.done
    ('look', 1, 2, False)
    >>> turn = session.step("look"); turn = session.step("look")
    >>> turn.truncated, turn.terminated, session.record()["turns"]
    (True, False, 3)
    >>> session.close()
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentgym_budget.agents.actions import parse_action
from agentgym_budget.chat.tool import turn_text
from agentgym_budget.core.env import TextEnv
from agentgym_budget.errors import EpisodeOverError, InvalidActionError, InvalidBudgetError, InvalidOptionError
from agentgym_budget.integrations.session_config import SessionConfig, episode_fields
from agentgym_budget.snapshots import EnvState, get_state, set_state
from agentgym_budget.wrappers import TurnBudget
from agentgym_budget.wrappers.turn_budget import validate_budget

__all__ = ["EpisodeSession", "EpisodeTurn"]


@dataclass(frozen=True)
class EpisodeTurn:
    """What one reset or step produced, as the adapters report it.

    Attributes:
        text: What the model sees: on reset the goal and the first observation, then each
            observation; the admissible actions when ``show_actions``; an end line when the episode ended.
        observation: The env's observation (with the budget notice when the budget is shown).
        reward: This turn's reward (the shaped one with ``reward="process"``).
        env_reward: The family's own reward for this turn.
        terminated: The task was won or lost on this turn.
        truncated: The budget ran out on this turn without a win or loss.
        turn: Turns taken so far.
        max_turns: This episode's budget.
        turns_left: Turns remaining.
        budget_shown: Whether the budget is shown to the model in this episode.
        won: The task is won.
        lost: The task is lost.
        progress: The family's progress signal in [0, 1].
        admissible_actions: Commands the engine accepts now.
        task_id: The task being played.
        goal: The task text.
        command: The command this step sent (``None`` on reset).
        matched: Whether that command was admissible (``None`` on reset).
        info: The opt-in ``info`` keys that were requested.
    """

    text: str
    observation: str
    reward: float
    env_reward: float
    terminated: bool
    truncated: bool
    turn: int
    max_turns: int
    turns_left: int
    budget_shown: bool
    won: bool
    lost: bool
    progress: float
    admissible_actions: tuple[str, ...]
    task_id: str
    goal: str
    command: str | None = None
    matched: bool | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        """The episode is over (terminated or truncated)."""
        return self.terminated or self.truncated


def episode_outcome(turn: EpisodeTurn) -> str:
    """How an ended episode ended, e.g. ``"task completed in 3 turns"`` or ``"out of turns (5 of 5)"``."""
    turns = f"{turn.turn} turn" + ("" if turn.turn == 1 else "s")
    if turn.won:
        return f"task completed in {turns}"
    if turn.lost:
        return f"task failed after {turns}"
    return f"out of turns ({turn.turn} of {turn.max_turns})"


def _end_line(turn: EpisodeTurn) -> str:
    return f"[Episode over: {episode_outcome(turn)}.]"


class EpisodeSession:
    """One env stack playing one episode at a time (see the module docstring for the mapping).

    A session is used by one thread at a time; make one per concurrent episode (or take them from a
    :class:`~agentgym_budget.integrations.pool.SessionPool`).

    Args:
        config: What to serve.
        max_budget: The largest ``max_turns`` an episode may ask for (``None``: any).
        max_history_bytes: Bytes the commands of one episode may hold (``None``: no limit).

    Raises:
        InvalidBudgetError: ``max_budget`` is not a positive integer, or is below the config's budgets.
        InvalidOptionError: ``max_history_bytes`` is not a positive integer.
    """

    def __init__(
        self, config: SessionConfig, *, max_budget: int | None = None, max_history_bytes: int | None = None
    ) -> None:
        self.check_limits(config, max_budget, max_history_bytes)
        self.config = config
        self.max_budget, self.max_history_bytes = max_budget, max_history_bytes
        self.env = config.build()
        self._budget_layer = self._find_turn_budget()
        self._last: EpisodeTurn | None = None
        self._seed: int | None = None
        self._commands: list[str] = []
        self._history_bytes = 0
        self._matched = 0
        self._return = 0.0
        self._env_return = 0.0

    @staticmethod
    def check_limits(config: SessionConfig, max_budget: int | None, max_history_bytes: int | None) -> None:
        """Raise if ``max_budget`` or ``max_history_bytes`` is not a valid limit for sessions of ``config``.

        Example:
            >>> EpisodeSession.check_limits(SessionConfig("TextWorld-CoinCollector-v0", max_turns=40), 30, None)
            Traceback (most recent call last):
            ...
            agentgym_budget.errors.InvalidBudgetError: max_budget 30 is below the budget the config serves (40); raise it to at least 40.
        """
        if max_history_bytes is not None and (
            isinstance(max_history_bytes, bool) or not isinstance(max_history_bytes, int) or max_history_bytes < 1
        ):
            raise InvalidOptionError(f"max_history_bytes must be a positive integer, got {max_history_bytes!r}.")
        if max_budget is None:
            return
        validate_budget(max_budget, "for max_budget")
        served = max(config.budgets or (config.max_turns,))
        if served > max_budget:
            raise InvalidBudgetError(
                f"max_budget {max_budget} is below the budget the config serves ({served}); raise it to at least {served}."
            )

    def _find_turn_budget(self) -> TurnBudget:
        env = self.env
        while not isinstance(env, TurnBudget):
            env = env.env
        return env

    @property
    def last(self) -> EpisodeTurn | None:
        """The last reset or step of the current episode (``None`` before the first reset)."""
        return self._last

    @property
    def done(self) -> bool:
        """No episode is running (never started, or ended)."""
        return self._last is None or self._last.done

    @property
    def history_bytes(self) -> int:
        """Bytes the commands of this episode hold (what ``max_history_bytes`` limits)."""
        return self._history_bytes

    @property
    def total_reward(self) -> float:
        """Sum of this episode's rewards so far (shaped with ``reward="process"``)."""
        return self._return

    def reset(self, **fields: Any) -> EpisodeTurn:
        """Start an episode; ``fields`` are episode fields (see :func:`episode_fields`)."""
        episode = episode_fields(fields)
        if self.max_budget is not None and episode.get("max_turns", 0) > self.max_budget:
            raise InvalidBudgetError(
                f"Episode field 'max_turns' is {episode['max_turns']:,}, but this server plays at most "
                f"{self.max_budget:,} turns an episode; ask for 1 to {self.max_budget:,} turns."
            )
        options: dict[str, Any] = {}
        if "task" in episode:
            options["task"] = episode["task"]
        if "max_turns" in episode:
            options["max_turns"] = episode["max_turns"]
        self._budget_layer.show_budget = episode.get("show_budget", self.config.show_budget)
        self._seed = episode.get("seed")
        observation, info = self.env.reset(seed=self._seed, options=options or None)
        self._commands, self._history_bytes, self._matched, self._return, self._env_return = [], 0, 0, 0.0, 0.0
        self._last = self._turn(observation, 0.0, 0.0, False, False, info, first=True)
        return self._last

    def step(self, reply: str) -> EpisodeTurn:
        """Play one turn: ``reply`` is parsed into one command (see :mod:`~agentgym_budget.agents.actions`).

        Raises:
            EpisodeOverError: No episode is running (call :meth:`reset`).
            InvalidActionError: ``reply`` is not a ``str``, or its command would take the episode's commands
                past ``max_history_bytes`` (no turn is spent).
        """
        if self._last is None:
            raise EpisodeOverError("No episode is running: reset the session (send a reset) before stepping.")
        if self._last.done:
            raise EpisodeOverError(
                f"The episode on task {self._last.task_id!r} is over ({episode_outcome(self._last)}); "
                "reset to start a new one."
            )
        parsed = parse_action(reply, self._last.admissible_actions)
        size = sys.getsizeof(parsed.command)
        if self.max_history_bytes is not None and self._history_bytes + size > self.max_history_bytes:
            raise InvalidActionError(
                f"This episode's commands hold {self._history_bytes:,} bytes; this one ({len(parsed.command):,} "
                f"characters, {size:,} bytes) would pass the limit of {self.max_history_bytes:,} bytes an episode. "
                "No turn was spent: send a shorter command or reset."
            )
        observation, reward, terminated, truncated, info = self.env.step(parsed.command)
        env_reward = float(info.get("env_reward", reward))
        self._commands.append(parsed.command)
        self._history_bytes += size
        self._matched += int(parsed.matched)
        self._return += float(reward)
        self._env_return += env_reward
        self._last = self._turn(
            observation, float(reward), env_reward, bool(terminated), bool(truncated), info, parsed=parsed
        )
        return self._last

    def _turn(
        self,
        observation: str,
        reward: float,
        env_reward: float,
        terminated: bool,
        truncated: bool,
        info: Mapping[str, Any],
        *,
        first: bool = False,
        parsed: Any = None,
    ) -> EpisodeTurn:
        admissible = tuple(info.get("admissible_actions") or ())
        turn = EpisodeTurn(
            text="",
            observation=observation,
            reward=reward,
            env_reward=env_reward,
            terminated=terminated,
            truncated=truncated,
            turn=int(info["turn"]),
            max_turns=int(info["max_turns"]),
            turns_left=int(info["turns_left"]),
            budget_shown=bool(self._budget_layer.show_budget),
            won=bool(info.get("won")),
            lost=bool(info.get("lost")),
            progress=float(info.get("progress", 0.0)),
            admissible_actions=admissible,
            task_id=str(info.get("task_id")),
            goal=str(info.get("goal") or ""),
            command=None if parsed is None else parsed.command,
            matched=None if parsed is None else parsed.matched,
            info={key: info.get(key) for key in self.config.info_keys},
        )
        text = turn_text(
            observation,
            admissible if self.config.show_actions else (),
            goal=turn.goal if first else None,
            end=_end_line(turn) if turn.done else None,
        )
        return dataclasses.replace(turn, text=text)

    def forget(self) -> None:
        """Drop the current episode, the env's record of it included: :meth:`step` then needs a :meth:`reset`.

        A pool calls it when a session is released, so an idle session holds no client's commands.
        """
        self._last, self._seed, self._commands, self._history_bytes, self._matched = None, None, [], 0, 0
        self._return = self._env_return = 0.0
        base = self.env.unwrapped
        if isinstance(base, TextEnv):
            base.drop_episode()

    def record(self) -> dict[str, Any]:
        """A JSON-ready summary of the current (or last) episode, for logs and metrics by budget.

        Raises:
            EpisodeOverError: No episode was started yet.
        """
        if self._last is None:
            raise EpisodeOverError("No episode yet: reset the session first.")
        last = self._last
        return {
            "env": self.config.ref.label,
            "task_id": last.task_id,
            "seed": self._seed,
            "budget": last.max_turns,
            "budget_shown": last.budget_shown,
            "turns": last.turn,
            "won": last.won,
            "lost": last.lost,
            "terminated": last.terminated,
            "truncated": last.truncated,
            "return": self._return,
            "env_return": self._env_return,
            "progress": last.progress,
            "admissible_rate": self._matched / len(self._commands) if self._commands else None,
            "commands": list(self._commands),
        }

    def save(self) -> SessionState:
        """The exact state of the running episode: the env stack's snapshot and the session's own bookkeeping.

        Raises:
            EpisodeOverError: No episode was started yet.
            SnapshotUnsupportedError: A layer of the stack cannot be snapshot.
        """
        if self._last is None:
            raise EpisodeOverError("No episode to save: reset the session first.")
        bookkeeping = (self._last, self._seed, tuple(self._commands), self._matched, self._return, self._env_return)
        return SessionState(get_state(self.env), bookkeeping)

    def restore(self, state: SessionState) -> None:
        """Continue from ``state`` (from :meth:`save` of a session of the same config): the same env state, turn
        counter, budget, return and commands, as if this session had played the episode so far.

        Raises:
            SnapshotMismatchError: ``state`` was saved by a session of another config (another stack).
        """
        set_state(self.env, state.env)
        last, self._seed, commands, self._matched, self._return, self._env_return = state.bookkeeping
        self._last, self._commands = last, list(commands)
        self._history_bytes = sum(map(sys.getsizeof, self._commands))

    def close(self) -> None:
        """Close the env stack."""
        self.env.close()


@dataclass(frozen=True)
class SessionState:
    """What :meth:`EpisodeSession.save` returns: the stack's :class:`~agentgym_budget.snapshots.EnvState` and the
    session's bookkeeping (last turn, seed, commands, matched count, returns)."""

    env: EnvState
    bookkeeping: tuple[Any, ...]
