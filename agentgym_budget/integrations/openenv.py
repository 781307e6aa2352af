"""OpenEnv server and client for every agentgym-budget environment (extra ``openenv``).

``agentgym-budget serve ID --port P`` (or :func:`serve`) runs an OpenEnv server: each WebSocket
session is one :class:`~agentgym_budget.integrations.session.EpisodeSession` (sessions run in
threads of one process, up to ``max_sessions`` at once). The wire format:

* **reset** arguments are the episode fields ``task``, ``seed``, ``max_turns``, ``show_budget``
  (see :func:`~agentgym_budget.integrations.session_config.episode_fields`); unknown ones are refused.
* **Action** ``BudgetAction(command: str)``: the model's reply or a bare command, parsed into one
  command by :func:`~agentgym_budget.agents.actions.parse_action` (one action, one turn).
  Because it has one required field, clients that send raw text (verifiers' ``openenv`` taskset)
  work unchanged.
* **Observation** ``BudgetObservation``: ``text`` (what the model sees), ``observation``, ``goal``,
  ``task_id``, ``turn``, ``max_turns`` / ``turns_left`` (``None`` when the budget is hidden from the
  model), ``terminated``, ``truncated``, ``won``, ``lost``, ``progress``, ``admissible_actions``,
  ``command``, ``matched``, ``env_reward``, ``info`` (the opt-in keys served) and OpenEnv's
  ``done`` (= terminated or truncated) and ``reward``. Every field is explicit: nothing relies on
  ``metadata``, which some OpenEnv versions drop on the wire.
* **State** ``BudgetState``: ``episode_id`` (the client's, else a fresh random hex id per reset), ``step_count``, ``env``, ``task_id``, ``seed``,
  ``max_turns``, ``turn``, ``total_reward``, ``done``, ``won``.
* **Errors**: a bad request gets an error frame whose message names the error class and says what
  was expected (``InvalidOptionError: Unknown episode field 'max_turn'. Did you mean ...``); a
  stepped finished episode answers ``EpisodeOverError``. :class:`RemoteSession` raises the same
  typed errors on the client side.

Example (a server in this process; the CLI is the usual way)::

    from agentgym_budget.integrations.openenv import RemoteSession, serve_in_thread
    from agentgym_budget.integrations.session_config import SessionConfig

    with serve_in_thread(SessionConfig("TextWorld-CoinCollector-v0", max_turns=10)) as url:
        with RemoteSession(url) as env:
            obs = env.reset(seed=3)
            obs = env.step("Action: go north")
            print(obs.turn, obs.done, obs.text)
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from agentgym_budget import errors
from agentgym_budget.dependencies import require
from agentgym_budget.errors import AgentGymBudgetError, InvalidOptionError
from agentgym_budget.integrations.pool import SessionPool
from agentgym_budget.integrations.server_limits import IDLE_TIMEOUT, MAX_MESSAGE_BYTES, ServerLimits
from agentgym_budget.integrations.session import EpisodeTurn
from agentgym_budget.integrations.session_config import SessionConfig

__all__ = [
    "BudgetAction",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "BudgetEnvClient",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "BudgetEnvironment",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "BudgetObservation",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "BudgetState",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "RemoteSession",  # noqa: F822 (in .openenv_client, imported on first use by __getattr__)
    "create_app",
    "serve",
    "serve_in_thread",
]

_FEATURE = "The OpenEnv integration"
_LAZY = ("BudgetAction", "BudgetObservation", "BudgetState", "BudgetEnvironment", "BudgetEnvClient")


def _core() -> Any:
    return require("openenv.core", extra="openenv", feature=_FEATURE, package="openenv")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(_classes(), name)
    if name == "RemoteSession":
        from agentgym_budget.integrations.openenv_client import RemoteSession

        return RemoteSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def create_app(
    config: SessionConfig,
    *,
    max_sessions: int = 8,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    idle_timeout: float = IDLE_TIMEOUT,
    warm: bool = True,
) -> Any:
    """The FastAPI app of an OpenEnv server for ``config`` (no web UI).

    Args:
        config: What each session serves.
        max_sessions: Concurrent sessions at most, WebSocket and HTTP alike (:mod:`.server_limits`).
        max_message_bytes: Largest HTTP body or WebSocket frame, refused before it is parsed.
        idle_timeout: Seconds a WebSocket session may stay silent before it is closed.
        warm: Build one session and play a reset before serving, so a bad config fails here and the
            first clients do not pay for loading the engine.

    Raises:
        InvalidOptionError: A limit is not positive.
        MissingDependencyError: ``openenv`` is not installed.
    """
    limits = {"max_sessions": max_sessions, "max_message_bytes": max_message_bytes, "idle_timeout": idle_timeout}
    ServerLimits(None, **limits)  # checks the limits before any env is built
    classes = _classes()
    from openenv.core.env_server.http_server import create_fastapi_app

    pool = SessionPool(config, max_idle=max_sessions)
    if warm:
        session = pool.acquire()
        session.reset(seed=0)
        pool.release(session)
    factory = functools.partial(classes.BudgetEnvironment, pool)
    app = create_fastapi_app(
        factory,
        classes.BudgetAction,
        classes.BudgetObservation,
        max_concurrent_envs=max_sessions,
        env_name="agentgym_budget",
        state_cls=classes.BudgetState,
    )
    app.add_middleware(ServerLimits, **limits)  # limits on every route (.server_limits)
    return app


def _bind(host: str, port: int) -> socket.socket:
    try:
        sock = socket.create_server((host, port), reuse_port=False)
    except OSError as err:
        raise InvalidOptionError(
            f"Cannot listen on {host}:{port}: {err.strerror or err}. Pick another --port."
        ) from err
    sock.set_inheritable(True)
    return sock


def _server(config: SessionConfig, host: str, port: int, log_level: str, limits: dict[str, Any]) -> tuple[Any, Any]:
    uvicorn = require("uvicorn", extra="openenv", feature=_FEATURE)
    sock = _bind(host, port)
    try:
        app = create_app(config, **limits)
    except BaseException:
        sock.close()
        raise
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level, ws_max_size=16 * 1024 * 1024))
    return server, sock


def serve(
    config: SessionConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_sessions: int = 8,
    log_level: str = "warning",
    **limits: Any,
) -> None:
    """Serve ``config`` until interrupted; prints ``listening on http://HOST:PORT`` once ready.

    ``port=0`` picks a free port (the printed URL says which); ``limits`` are ``max_message_bytes`` and
    ``idle_timeout`` (:func:`create_app`).
    """
    server, sock = _server(config, host, port, log_level, {"max_sessions": max_sessions, **limits})
    bound_host, bound_port = sock.getsockname()[:2]
    print(
        f"agentgym-budget serve: {config.label}, up to {max_sessions} sessions, "
        f"listening on http://{bound_host}:{bound_port}",
        flush=True,
    )
    server.run(sockets=[sock])


@contextlib.contextmanager
def serve_in_thread(
    config: SessionConfig, *, host: str = "127.0.0.1", max_sessions: int = 8, **limits: Any
) -> Iterator[str]:
    """Run a server on a free loopback port in a background thread; yields its ``http://`` URL.

    ``limits`` are ``max_message_bytes`` and ``idle_timeout`` (:func:`create_app`).
    """
    server, sock = _server(config, host, 0, "warning", {"max_sessions": max_sessions, **limits})
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("The OpenEnv server thread did not start.")
        time.sleep(0.01)
    bound_host, bound_port = sock.getsockname()[:2]
    try:
        yield f"http://{bound_host}:{bound_port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
