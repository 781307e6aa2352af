"""Limits the ``serve`` server holds on every route, as one ASGI middleware in front of OpenEnv's app.

OpenEnv's app counts WebSocket sessions only; its HTTP routes build an env per request, answer 500
in plain text when a step fails or a body holds ``NaN``, and its WebSocket loop closes the
connection on a binary frame or one nested past Python's recursion limit. :class:`ServerLimits`
wraps the app:

* **Sessions** (``max_sessions``): one count for open WebSockets *and* HTTP requests in progress on
  ``/reset`` and ``/step`` (the HTTP routes that build an env), taken when the request arrives, before
  its body is read. When full, HTTP answers ``503`` with a JSON error and a WebSocket gets an error
  frame (code ``CAPACITY_REACHED``) and is closed before any env is built. Other routes take no session.
* **Deadlines**: an HTTP body must arrive whole within ``read_timeout`` seconds of its request's
  headers, else the request is answered ``408`` (JSON) and its connection closed, without calling the
  app; a WebSocket message must arrive whole within ``idle_timeout`` seconds of the previous one (a
  frame trickled in slowly counts as silence), else the connection is closed (code 1001). Either
  way the session is released.
* **Cut short**: a request whose client leaves before its body is complete is dropped without
  calling the app (no env is touched for nobody).
* **Size** (``max_message_bytes``): an HTTP body or WebSocket frame longer than this is refused
  (``413`` / an error frame, the session kept) before it is parsed.
* **Strict JSON**: every body and frame is parsed by
  :func:`~agentgym_budget.integrations.wire_json.loads_wire` first; non-finite numbers, integers
  outside 64 bits, nesting past 32 levels, lone surrogates and text that is not UTF-8 JSON answer
  ``400`` (``{"error": "WireJSONError", ...}``) or an ``INVALID_JSON`` error frame. A binary frame,
  or a frame that is not a JSON object, gets a ``VALIDATION_ERROR`` frame. A ``POST /reset`` body's
  episode fields are checked here, without the web framework's coercions (``true`` is not a seed).
* **Bad requests**: an agentgym-budget error raised by a route (a step before reset, a bad action)
  answers ``400`` (``409`` for a step with no episode) with ``{"error": type, "message": text}``,
  never ``500``. After any error frame the WebSocket session goes on.
* **Departed clients**: what the app sends to a WebSocket whose client has gone is dropped, so a
  client that resets its connection mid-step ends its session quietly (no error logged).

Example:
    >>> async def app(scope, receive, send):
    ...     pass
    >>> ServerLimits(app, max_sessions=2).max_sessions
    2
    >>> DEFAULTS["read_timeout"], DEFAULTS["max_history_bytes"]
    (10.0, 1048576)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from types import MappingProxyType
from typing import Any

from agentgym_budget.errors import AgentGymBudgetError, EpisodeOverError, InvalidOptionError
from agentgym_budget.integrations.session_config import episode_fields
from agentgym_budget.integrations.wire_json import WireJSONError, loads_wire

__all__ = ["DEFAULTS", "ServerLimits"]

DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "max_message_bytes": 1 << 20,
        "idle_timeout": 600.0,
        "read_timeout": 10.0,
        "max_budget": 1000,
        "max_history_bytes": 1 << 20,
    }
)
"""The server's default limits: ``max_message_bytes`` 1 MiB (an action is at most 65,536 characters),
``idle_timeout`` 600 s, ``read_timeout`` 10 s (1 MiB at 100 KB/s), ``max_budget`` 1,000 turns (unless
the served budgets are larger) and ``max_history_bytes`` 1 MiB (see
:class:`~agentgym_budget.integrations.session.EpisodeSession`)."""

_SESSION_ROUTES = frozenset({"/reset", "/step"})  # HTTP routes that build an env; every WebSocket builds one too

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_TOO_LARGE, _LEFT = object(), object()  # what reading a body gave instead of the body


def _error_frame(message: str, code: str) -> Message:
    return {"type": "websocket.send", "text": json.dumps({"type": "error", "data": {"message": message, "code": code}})}


async def _json_response(send: Send, status: int, kind: str, message: str, *, close: bool = False) -> None:
    body = json.dumps({"error": kind, "message": message}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _typed_cause(err: BaseException | None) -> AgentGymBudgetError | None:
    """The agentgym-budget error ``err`` is or was raised from (routes wrap them), if any."""
    seen = 0
    while err is not None and seen < 8:
        if isinstance(err, AgentGymBudgetError):
            return err
        err, seen = err.__cause__, seen + 1
    return None


def _body_problem(path: str, body: bytes) -> AgentGymBudgetError | None:
    """Why a request body is refused before the app sees it: not strict JSON, or bad ``/reset`` fields."""
    if not body.strip():
        return None
    try:
        value = loads_wire(body)
        if path == "/reset" and isinstance(value, dict):
            episode_fields({key: item for key, item in value.items() if key != "episode_id"})
    except AgentGymBudgetError as err:
        return err
    return None


def _positive_seconds(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise InvalidOptionError(f"{name} must be a positive number of seconds, got {value!r}.")


class ServerLimits:
    """ASGI middleware holding the server's limits (see the module docstring).

    Args:
        app: The ASGI app to wrap.
        max_sessions: Concurrent sessions (WebSockets plus HTTP requests in progress on ``/reset`` and ``/step``).
        max_message_bytes: Largest HTTP body or WebSocket frame.
        idle_timeout: Seconds of silence after which a WebSocket session is closed.
        read_timeout: Seconds an HTTP request's body may take to arrive.

    Raises:
        InvalidOptionError: A limit is not positive.
    """

    def __init__(
        self,
        app: Any,
        *,
        max_sessions: int,
        max_message_bytes: int = DEFAULTS["max_message_bytes"],
        idle_timeout: float = DEFAULTS["idle_timeout"],
        read_timeout: float = DEFAULTS["read_timeout"],
    ) -> None:
        for name, value in (("max_sessions", max_sessions), ("max_message_bytes", max_message_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidOptionError(f"{name} must be a positive integer, got {value!r}.")
        _positive_seconds("idle_timeout", idle_timeout)
        _positive_seconds("read_timeout", read_timeout)
        self.app = app
        self.max_sessions, self.max_message_bytes = max_sessions, max_message_bytes
        self.idle_timeout, self.read_timeout = idle_timeout, read_timeout
        self.active = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    # ------------------------------------------------------------------ HTTP
    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("path") not in _SESSION_ROUTES:
            await self._http_request(scope, receive, send)
            return
        if self.active >= self.max_sessions:
            await _json_response(
                send, 503, "CapacityReached", f"All {self.max_sessions} sessions are in use; retry later."
            )
            return
        self.active += 1  # taken before the body is read: a slow body holds its place (until read_timeout)
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self.active -= 1

        async def releasing_send(message: Message) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                release()  # the env is back in its pool: a client that reads this reply finds its place free
            await send(message)

        try:
            await self._http_request(scope, receive, releasing_send)
        finally:
            release()

    async def _http_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            body = await asyncio.wait_for(self._read_body(receive), timeout=self.read_timeout)
        except asyncio.TimeoutError:
            message = f"The request body did not arrive within {self.read_timeout:g} s; the request was dropped."
            await _json_response(send, 408, "RequestTimeout", message, close=True)
            return
        if body is _LEFT:
            return  # the client left before its body was complete: nobody to serve
        if body is _TOO_LARGE:
            await _json_response(
                send, 413, "MessageTooLarge", f"Request bodies may hold at most {self.max_message_bytes:,} bytes."
            )
            return
        problem = _body_problem(scope.get("path", ""), body)
        if problem is not None:
            await _json_response(send, 400, type(problem).__name__, str(problem))
            return
        await self._call_http_app(scope, receive, send, body)

    async def _call_http_app(self, scope: Scope, receive: Receive, send: Send, body: bytes) -> None:
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        started = False

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, replay, tracked_send)
        except Exception as err:
            cause = _typed_cause(err)
            if started or cause is None:
                raise
            status = 409 if isinstance(cause, EpisodeOverError) else 400
            await _json_response(send, status, type(cause).__name__, str(cause))

    async def _read_body(self, receive: Receive) -> Any:
        """The request's body, or ``_TOO_LARGE`` past ``max_message_bytes``, or ``_LEFT`` if the client left first."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return _LEFT
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_message_bytes:
                return _TOO_LARGE
            chunks.append(chunk)
            if not message.get("more_body"):
                return b"".join(chunks)

    # ------------------------------------------------------------------ WebSocket
    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.active >= self.max_sessions:
            await receive()  # websocket.connect
            await send({"type": "websocket.accept"})
            await send(_error_frame(f"All {self.max_sessions} sessions are in use; retry later.", "CAPACITY_REACHED"))
            await send({"type": "websocket.close", "code": 1013})
            return
        self.active += 1
        try:
            connection = _Connection(receive, send)
            await self.app(scope, self._guarded_receive(connection), connection.send)
        finally:
            self.active -= 1

    def _guarded_receive(self, connection: _Connection) -> Receive:
        connected = False

        async def guarded() -> Message:
            nonlocal connected
            while True:
                if not connected:
                    connected = True
                    return await connection.receive()
                try:
                    message = await asyncio.wait_for(connection.receive(), timeout=self.idle_timeout)
                except asyncio.TimeoutError:
                    text = f"No whole message for {self.idle_timeout:g} s: session closed."
                    await connection.send(_error_frame(text, "IDLE_TIMEOUT"))
                    await connection.send({"type": "websocket.close", "code": 1001})
                    return {"type": "websocket.disconnect", "code": 1001}
                problem = self._frame_problem(message)
                if problem is None:
                    return message
                await connection.send(_error_frame(*problem))

        return guarded

    def _frame_problem(self, message: Message) -> tuple[str, str] | None:
        """``(message, code)`` of the error frame that answers ``message`` instead of the app, if any."""
        if message.get("type") != "websocket.receive":
            return None
        text = message.get("text")
        if text is None:
            size = len(message.get("bytes") or b"")
            problem = f"Binary frames are not read ({size:,} bytes); send JSON text frames. The session goes on."
            return problem, "VALIDATION_ERROR"
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.max_message_bytes:
            return (
                f"Frames may hold at most {self.max_message_bytes:,} bytes; this one held {size:,}. The session goes on.",
                "VALIDATION_ERROR",
            )
        try:
            value = loads_wire(text)
        except WireJSONError as err:
            return f"{err} The session goes on.", "INVALID_JSON"
        if not isinstance(value, dict):
            return (
                f'Expected a JSON object such as {{"type": "step", "data": {{...}}}}, got a JSON '
                f"{type(value).__name__}. The session goes on.",
                "VALIDATION_ERROR",
            )
        return None


class _Connection:
    """One WebSocket's ``receive`` and ``send``, where sending to a client that has gone (or been closed) does nothing.

    A client that resets its connection while the app works leaves the app holding a reply for nobody;
    the web server raises on that send, and OpenEnv's handler, trying to report the failure on the same
    connection, raises again. Dropping sends once the client is gone lets the app read the disconnect
    and end the session normally instead.
    """

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive, self._send = receive, send
        self.gone = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message.get("type") == "websocket.disconnect":
            self.gone = True
        return message

    async def send(self, message: Message) -> None:
        if self.gone:
            return
        if message.get("type") == "websocket.close":
            self.gone = True
        try:
            await self._send(message)
        except OSError:  # the web server's "client disconnected"
            self.gone = True
