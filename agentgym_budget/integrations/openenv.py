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
* **Routes**: OpenEnv's ``/reset``, ``/step``, ``/ws``, ``/schema``, ``/health`` and
  ``/list_environments``; ``/state`` and ``/metadata`` answered without building an env (HTTP holds
  no episode, so ``GET /state`` is the state of none: a session's state is the WebSocket's ``state``
  message). Not OpenEnv's ``/mcp`` routes (these envs have no MCP tools) nor its task routes
  (``/{env_name}/tasks`` ...: tasks are chosen by the reset fields ``task`` and ``seed``).
* **Limits** (:mod:`.server_limits`): sessions, message sizes, deadlines on every read from a client,
  the largest budget an episode may ask for (``max_budget``) and the bytes of commands one episode
  may hold (``max_history_bytes``).
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
from collections.abc import Iterator
from typing import Any

from agentgym_budget._version import __version__
from agentgym_budget.dependencies import require
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.openenv_classes import _classes
from agentgym_budget.integrations.openenv_client import RemoteSession
from agentgym_budget.integrations.pool import SessionPool
from agentgym_budget.integrations.server_limits import DEFAULTS, ServerLimits
from agentgym_budget.integrations.session_config import SessionConfig

__all__ = [
    "BudgetAction",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "BudgetEnvClient",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "BudgetEnvironment",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "BudgetObservation",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "BudgetState",  # noqa: F822 (built on first use by __getattr__: it needs openenv)
    "RemoteSession",
    "create_app",
    "serve",
    "serve_in_thread",
]

_FEATURE = "The OpenEnv integration"
_LAZY = ("BudgetAction", "BudgetObservation", "BudgetState", "BudgetEnvironment", "BudgetEnvClient")
_REPLACED_ROUTES = frozenset({"/mcp", "/state", "/metadata"})
_TASK_ROUTES_PREFIX = "/{env_name}/"  # OpenEnv's task routes: these envs answered 501 there


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(_classes(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def create_app(
    config: SessionConfig,
    *,
    max_sessions: int = 8,
    max_message_bytes: int = DEFAULTS["max_message_bytes"],
    idle_timeout: float = DEFAULTS["idle_timeout"],
    read_timeout: float = DEFAULTS["read_timeout"],
    max_budget: int | None = None,
    max_history_bytes: int = DEFAULTS["max_history_bytes"],
    warm: bool = True,
) -> Any:
    """The FastAPI app of an OpenEnv server for ``config`` (no web UI).

    Args:
        config: What each session serves.
        max_sessions: Concurrent sessions at most, WebSocket and HTTP alike (:mod:`.server_limits`).
        max_message_bytes: Largest HTTP body or WebSocket frame, refused before it is parsed.
        idle_timeout: Seconds a WebSocket session may stay silent (or take to send a message) before it is closed.
        read_timeout: Seconds an HTTP request's body may take to arrive before it is answered 408.
        max_budget: The largest ``max_turns`` a reset may ask for (``None``: 1,000 (:data:`.server_limits.DEFAULTS`),
            or the config's largest budget if that is more).
        max_history_bytes: Bytes of commands one episode may hold (:class:`.session.EpisodeSession`).
        warm: Build one session and play a reset before serving, so a bad config fails here and the
            first clients do not pay for loading the engine.

    Raises:
        InvalidOptionError: A limit is not positive.
        InvalidBudgetError: ``max_budget`` is below the config's budgets.
        MissingDependencyError: ``openenv`` is not installed.
    """
    limits = {
        "max_sessions": max_sessions,
        "max_message_bytes": max_message_bytes,
        "idle_timeout": idle_timeout,
        "read_timeout": read_timeout,
    }
    ServerLimits(None, **limits)  # checks the limits before any env is built
    if max_budget is None:
        max_budget = max(DEFAULTS["max_budget"], *(config.budgets or (config.max_turns,)))
    pool = SessionPool(config, max_idle=max_sessions, max_budget=max_budget, max_history_bytes=max_history_bytes)
    classes = _classes()
    from openenv.core.env_server.http_server import create_fastapi_app

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
    app.router.routes[:] = [route for route in app.router.routes if not _dropped(getattr(route, "path", ""))]
    _add_envless_routes(app, config, classes.BudgetState)
    app.add_middleware(ServerLimits, **limits)  # limits on every route (.server_limits)
    return app


def _dropped(path: str) -> bool:
    """OpenEnv routes not served as OpenEnv defines them: MCP (an HTTP MCP session would hold an env outside
    the session count), the task routes (501 here) and those replaced by :func:`_add_envless_routes`."""
    return path in _REPLACED_ROUTES or path.startswith(_TASK_ROUTES_PREFIX)


def _add_envless_routes(app: Any, config: SessionConfig, state_cls: type) -> None:
    """``GET /state`` and ``GET /metadata`` answered without building an env (OpenEnv's build one per request)."""
    from openenv.core.env_server.types import EnvironmentMetadata

    no_episode = state_cls(env=config.ref.label)
    metadata = EnvironmentMetadata(
        name="agentgym_budget", description=f"agentgym-budget environment: {config.label}", version=__version__
    )

    @app.get("/state", response_model=state_cls, tags=["State Management"], summary="The state of no episode")
    def http_state() -> Any:
        """HTTP requests hold no episode (each gets a fresh session); a WebSocket's ``state`` message gives its own."""
        return no_episode

    @app.get("/metadata", response_model=EnvironmentMetadata, tags=["Environment Info"], summary="Metadata")
    def http_metadata() -> Any:
        """What this server serves."""
        return metadata


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

    ``port=0`` picks a free port (the printed URL says which); ``limits`` are those of :func:`create_app`
    (``max_message_bytes``, ``idle_timeout``, ``read_timeout``, ``max_budget``, ``max_history_bytes``).
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

    ``limits`` are those of :func:`create_app` (``read_timeout``, ``max_budget``, ...).
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
