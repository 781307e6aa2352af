"""Limits the ``serve`` server holds on every route, as one ASGI middleware in front of OpenEnv's app.

OpenEnv's app counts WebSocket sessions only; its HTTP ``/reset`` and ``/step`` build an env per
request, answer 500 in plain text when a step fails, and its WebSocket loop closes the connection
on a frame that is JSON but not an object. :class:`ServerLimits` wraps the app:

* **Sessions** (``max_sessions``): one count for open WebSocket sessions *and* HTTP requests to the
  env routes in progress. When full, HTTP answers ``503`` with a JSON error and a WebSocket gets an
  error frame (code ``CAPACITY_REACHED``) and is closed before any env is built.
* **Size** (``max_message_bytes``): an HTTP body or WebSocket frame longer than this is refused
  (``413`` / an error frame, the session kept) before it is parsed.
* **Bad requests**: an agentgym-budget error raised by a route (a step before reset, a bad action)
  answers ``400`` (``409`` for a step with no episode) with ``{"error": type, "message": text}``,
  never ``500``; a WebSocket frame that is not a JSON object gets an error frame and the session
  goes on.
* **Idle sessions** (``idle_timeout`` seconds): a WebSocket that sends nothing for that long is
  closed (code 1001) and its session released.

Example:
    >>> async def app(scope, receive, send):
    ...     pass
    >>> ServerLimits(app, max_sessions=2).max_sessions
    2
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from agentgym_budget.errors import AgentGymBudgetError, EpisodeOverError, InvalidOptionError

__all__ = ["ENV_ROUTES", "IDLE_TIMEOUT", "MAX_MESSAGE_BYTES", "ServerLimits"]

MAX_MESSAGE_BYTES = 1 << 20
"""Largest HTTP body or WebSocket frame read (1 MiB: an action is at most 65,536 characters)."""

IDLE_TIMEOUT = 600.0
"""Seconds a WebSocket session may stay silent before it is closed."""

ENV_ROUTES = frozenset({"/reset", "/step", "/state"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _error_frame(message: str, code: str) -> Message:
    return {"type": "websocket.send", "text": json.dumps({"type": "error", "data": {"message": message, "code": code}})}


async def _json_response(send: Send, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": kind, "message": message}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
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


class ServerLimits:
    """ASGI middleware holding the server's limits (see the module docstring).

    Args:
        app: The ASGI app to wrap.
        max_sessions: Concurrent sessions (WebSocket sessions plus HTTP env requests in progress).
        max_message_bytes: Largest HTTP body or WebSocket frame.
        idle_timeout: Seconds of silence after which a WebSocket session is closed.

    Raises:
        InvalidOptionError: A limit is not positive.
    """

    def __init__(
        self,
        app: Any,
        *,
        max_sessions: int,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        for name, value in (("max_sessions", max_sessions), ("max_message_bytes", max_message_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidOptionError(f"{name} must be a positive integer, got {value!r}.")
        if not isinstance(idle_timeout, int | float) or not idle_timeout > 0:
            raise InvalidOptionError(f"idle_timeout must be a positive number of seconds, got {idle_timeout!r}.")
        self.app = app
        self.max_sessions, self.max_message_bytes, self.idle_timeout = max_sessions, max_message_bytes, idle_timeout
        self.active = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope.get("path") == "/ws":
            await self._websocket(scope, receive, send)
        elif scope["type"] == "http" and scope.get("path") in ENV_ROUTES:
            await self._http(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    # ------------------------------------------------------------------ HTTP
    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.active >= self.max_sessions:
            await _json_response(
                send, 503, "CapacityReached", f"All {self.max_sessions} sessions are in use; retry later."
            )
            return
        body = await self._read_body(receive)
        if body is None:
            await _json_response(
                send, 413, "MessageTooLarge", f"Request bodies may hold at most {self.max_message_bytes:,} bytes."
            )
            return
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

        self.active += 1
        try:
            await self.app(scope, replay, tracked_send)
        except Exception as err:
            cause = _typed_cause(err)
            if started or cause is None:
                raise
            status = 409 if isinstance(cause, EpisodeOverError) else 400
            await _json_response(send, status, type(cause).__name__, str(cause))
        finally:
            self.active -= 1

    async def _read_body(self, receive: Receive) -> bytes | None:
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_message_bytes:
                return None
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
            await self.app(scope, self._guarded_receive(receive, send), send)
        finally:
            self.active -= 1

    def _guarded_receive(self, receive: Receive, send: Send) -> Receive:
        connected = False

        async def guarded() -> Message:
            nonlocal connected
            while True:
                if not connected:
                    connected = True
                    return await receive()
                try:
                    message = await asyncio.wait_for(receive(), timeout=self.idle_timeout)
                except asyncio.TimeoutError:
                    await send(_error_frame(f"No message for {self.idle_timeout:g} s: session closed.", "IDLE_TIMEOUT"))
                    await send({"type": "websocket.close", "code": 1001})
                    return {"type": "websocket.disconnect", "code": 1001}
                problem = self._frame_problem(message)
                if problem is None:
                    return message
                await send(_error_frame(problem, "VALIDATION_ERROR"))

        return guarded

    def _frame_problem(self, message: Message) -> str | None:
        if message.get("type") != "websocket.receive":
            return None
        text, data = message.get("text"), message.get("bytes")
        raw = text if text is not None else data or b""
        size = len(raw.encode("utf-8")) if isinstance(raw, str) else len(raw)
        if size > self.max_message_bytes:
            return f"Frames may hold at most {self.max_message_bytes:,} bytes; this one held {size:,}. The session goes on."
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            return None  # not JSON: the app's own INVALID_JSON error frame
        if not isinstance(value, dict):
            return (
                f'Expected a JSON object such as {{"type": "step", "data": {{...}}}}, got a JSON '
                f"{type(value).__name__}. The session goes on."
            )
        return None
