"""The OpenEnv classes of the suite's server and client, built on first use (they subclass openenv's).

:func:`_classes` builds ``BudgetAction``, ``BudgetObservation``, ``BudgetState``, ``BudgetEnvironment``
and ``BudgetEnvClient`` once per process; :mod:`~agentgym_budget.integrations.openenv` (the server) and
:mod:`~agentgym_budget.integrations.openenv_client` (the synchronous client) both take them from here.
Needs the ``openenv`` extra.
"""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from agentgym_budget import errors
from agentgym_budget.dependencies import require
from agentgym_budget.errors import AgentGymBudgetError, InvalidOptionError
from agentgym_budget.integrations.pool import SessionPool
from agentgym_budget.integrations.session import EpisodeTurn

__all__: list[str] = []

_FEATURE = "The OpenEnv integration"


def _core() -> Any:
    return require("openenv.core", extra="openenv", feature=_FEATURE, package="openenv")


class _WireError(RuntimeError):
    """An agentgym-budget error on its way to the client: the message starts with the class name."""


@contextlib.contextmanager
def _typed_errors_on_wire() -> Iterator[None]:
    try:
        yield
    except AgentGymBudgetError as err:
        raise _WireError(f"{type(err).__name__}: {err}") from err


def _observation_fields(turn: EpisodeTurn) -> dict[str, Any]:
    hidden = not turn.budget_shown
    return {
        "text": turn.text,
        "observation": turn.observation,
        "goal": turn.goal,
        "task_id": turn.task_id,
        "turn": turn.turn,
        "max_turns": None if hidden else turn.max_turns,
        "turns_left": None if hidden else turn.turns_left,
        "terminated": turn.terminated,
        "truncated": turn.truncated,
        "won": turn.won,
        "lost": turn.lost,
        "progress": turn.progress,
        "admissible_actions": list(turn.admissible_actions),
        "command": turn.command,
        "matched": turn.matched,
        "env_reward": turn.env_reward,
        "info": dict(turn.info),
        "done": turn.done,
        "reward": turn.reward,
    }


@functools.cache
def _classes() -> SimpleNamespace:
    """Build the OpenEnv classes (they derive from OpenEnv's, so they exist only once it is imported)."""
    core = _core()
    BudgetAction, BudgetObservation, BudgetState = _message_classes(core)
    BudgetEnvironment = _environment_class(core, BudgetAction, BudgetObservation, BudgetState)
    BudgetEnvClient = _client_class(core, BudgetAction, BudgetObservation, BudgetState)
    for cls in (BudgetAction, BudgetObservation, BudgetState, BudgetEnvironment, BudgetEnvClient):
        cls.__module__ = __name__
    return SimpleNamespace(
        BudgetAction=BudgetAction,
        BudgetObservation=BudgetObservation,
        BudgetState=BudgetState,
        BudgetEnvironment=BudgetEnvironment,
        BudgetEnvClient=BudgetEnvClient,
    )


def _message_classes(core: Any) -> tuple[type, type, type]:
    """``(BudgetAction, BudgetObservation, BudgetState)``: what travels between client and server."""
    from pydantic import Field

    class BudgetAction(core.Action):
        """One turn: the model's reply (or a bare command), parsed into one command."""

        command: str = Field(description="The model's reply or a command; parsed into exactly one command (one turn).")

    class BudgetObservation(core.Observation):
        """What one reset or step produced (see the module docstring)."""

        text: str = Field(default="", description="What the model sees this turn.")
        observation: str = Field(default="", description="The environment's observation.")
        goal: str = ""
        task_id: str = ""
        turn: int = 0
        max_turns: int | None = Field(default=None, description="The episode's budget (None when hidden).")
        turns_left: int | None = Field(default=None, description="Turns remaining (None when hidden).")
        terminated: bool = False
        truncated: bool = False
        won: bool = False
        lost: bool = False
        progress: float = 0.0
        admissible_actions: list[str] = Field(default_factory=list)
        command: str | None = Field(default=None, description="The command the last step sent.")
        matched: bool | None = Field(default=None, description="Whether that command was admissible.")
        env_reward: float = 0.0
        info: dict[str, Any] = Field(default_factory=dict, description="Opt-in info keys served.")

    class BudgetState(core.State):
        """The session's episode, for harnesses."""

        env: str = ""
        task_id: str | None = None
        seed: int | None = None
        max_turns: int | None = None
        turn: int = 0
        total_reward: float = 0.0
        done: bool = True
        won: bool = False

    return BudgetAction, BudgetObservation, BudgetState


def _environment_class(core: Any, BudgetAction: Any, BudgetObservation: Any, BudgetState: Any) -> type:
    """The server side: an OpenEnv environment over a pooled :class:`EpisodeSession`."""

    class BudgetEnvironment(core.Environment):
        """An OpenEnv environment over an :class:`EpisodeSession` taken from a pool."""

        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self, pool: SessionPool) -> None:
            super().__init__()
            self._pool = pool
            self._session = pool.acquire()
            self._episode_id: str | None = None
            self._steps = 0

        def reset(self, seed: int | None = None, episode_id: str | None = None, **fields: Any) -> BudgetObservation:
            with _typed_errors_on_wire():
                turn = self._session.reset(seed=seed, **fields)
            self._episode_id, self._steps = episode_id or uuid.uuid4().hex, 0
            return BudgetObservation(**_observation_fields(turn))

        def step(self, action: BudgetAction, timeout_s: float | None = None, **kwargs: Any) -> BudgetObservation:
            with _typed_errors_on_wire():
                if kwargs:
                    raise InvalidOptionError(f"Unknown step argument(s) {sorted(kwargs)}; send only the action.")
                turn = self._session.step(action.command)
            self._steps += 1
            return BudgetObservation(**_observation_fields(turn))

        @property
        def state(self) -> BudgetState:
            session = self._session
            last = session.last
            if last is None:
                return BudgetState(env=session.config.ref.label)
            record = session.record()
            return BudgetState(
                episode_id=self._episode_id,
                step_count=self._steps,
                env=record["env"],
                task_id=last.task_id,
                seed=record["seed"],
                max_turns=last.max_turns if last.budget_shown else None,
                turn=last.turn,
                total_reward=session.total_reward,
                done=last.done,
                won=last.won,
            )

        def close(self) -> None:
            session, self._session = self._session, None
            if session is not None:
                self._pool.release(session)

    return BudgetEnvironment


def _client_class(core: Any, BudgetAction: Any, BudgetObservation: Any, BudgetState: Any) -> type:
    """The client side: an OpenEnv ``EnvClient`` of a ``serve`` server."""
    from openenv.core.client_types import StepResult

    class BudgetEnvClient(core.EnvClient):
        """OpenEnv client of a ``serve`` server: ``step`` takes a reply string or a :class:`BudgetAction`."""

        def _step_payload(self, action: Any) -> dict[str, Any]:
            if isinstance(action, str):
                return {"command": action}
            if isinstance(action, BudgetAction):
                return {"command": action.command}
            if isinstance(action, dict):
                return action
            raise errors.InvalidActionError.for_action(action)

        def _parse_result(self, payload: dict[str, Any]) -> Any:
            fields = dict(payload.get("observation") or {})
            fields.pop("metadata", None)
            fields["done"] = bool(payload.get("done", fields.get("done", False)))
            fields["reward"] = payload.get("reward", fields.get("reward"))
            observation = BudgetObservation(**fields)
            return StepResult(observation=observation, reward=observation.reward, done=observation.done)

        def _parse_state(self, payload: dict[str, Any]) -> BudgetState:
            return BudgetState(**payload)

    return BudgetEnvClient
