"""A real OpenAI-compatible chat server on loopback for tests, with scripted replies and faults.

It speaks HTTP/1.1 with keep-alive on ``127.0.0.1`` (a free port) and answers
``POST /v1/chat/completions`` like vLLM or OpenAI would (also in a proxy's absolute form,
``POST http://host/v1/chat/completions``; the request targets are recorded in ``targets``). ``reply(body) -> str`` makes the assistant's text (default: ``Action:`` and
the first admissible action listed in the last user message). ``faults`` are consumed one per
request before normal replies: ``("status", code, body, headers)``, ``("delay", seconds)`` (then a
normal reply, usually after the client gave up), ``("raw", text)`` (a 200 with this body),
``("echo", code)`` (this status with the request's headers echoed in the body, as some proxies do)
or ``("dribble", seconds)`` (a normal reply sent one byte every ``seconds``).
Every request is recorded with its headers; the maximum number of requests in flight and the
connections accepted (``connections``) are tracked.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ScriptedChatServer", "first_admissible"]


def first_admissible(body: dict[str, Any]) -> str:
    """``Action: <first admissible action>`` read from the last user message."""
    content = body["messages"][-1]["content"]
    for line in content.splitlines():
        if line.startswith("Admissible actions:"):
            return "Let me think.\nAction: " + line.split(":", 1)[1].split("|")[0].strip()
    return "Action: look"


class ScriptedChatServer:
    """See the module docstring; use as a context manager."""

    def __init__(
        self,
        reply: Callable[[dict[str, Any]], str] = first_admissible,
        *,
        faults: list[tuple[Any, ...]] | None = None,
        latency: float = 0.0,
    ) -> None:
        self.reply = reply
        self.faults: deque[tuple[Any, ...]] = deque(faults or [])
        self.latency = latency
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.targets: list[str] = []
        self.connections = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_ChatHandler, scripted=self))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _connected(self) -> None:
        with self._lock:
            self.connections += 1

    def _begin(self, headers: dict[str, str], target: str, body: dict[str, Any]) -> tuple[Any, ...] | None:
        """Record a request, count it in flight and take the next fault (None once they are used up)."""
        with self._lock:
            self.requests.append((headers, body))
            self.targets.append(target)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self.faults.popleft() if self.faults else None

    def _end(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _completion(body: dict[str, Any], text: str) -> dict[str, Any]:
    """A chat completion with ``text`` as the assistant's message, as an OpenAI-compatible server answers."""
    prompt = sum(len(m["content"]) for m in body["messages"]) // 4
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7},
    }


class _ChatHandler(BaseHTTPRequestHandler):
    """Answers one connection's requests for ``scripted`` (bound with :func:`functools.partial`)."""

    protocol_version = "HTTP/1.1"

    def __init__(self, *args: Any, scripted: ScriptedChatServer, **kwargs: Any) -> None:
        self.scripted = scripted  # before the base class handles the connection
        super().__init__(*args, **kwargs)

    def setup(self) -> None:
        super().setup()
        self.scripted._connected()

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, text: str, headers: dict[str, str] | None = None, pace: float = 0.0) -> None:
        data = text.encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if not pace:
                self.wfile.write(data)
            for index in range(len(data) if pace else 0):
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
                time.sleep(pace)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        fault = self.scripted._begin(dict(self.headers), self.path, body)
        try:
            self._answer(body, fault)
        finally:
            self.scripted._end()

    def _answer(self, body: dict[str, Any], fault: tuple[Any, ...] | None) -> None:
        """Send the reply to one recorded request: a 404 off the route, else what its fault (if any) makes of it."""
        if urlsplit(self.path).path != "/v1/chat/completions":
            self._send(404, json.dumps({"error": f"no route {self.path}"}))
            return
        if self.scripted.latency:
            time.sleep(self.scripted.latency)
        if fault and fault[0] == "status":
            self._send(fault[1], fault[2], fault[3] if len(fault) > 3 else None)
            return
        if fault and fault[0] == "raw":
            self._send(200, fault[1])
            return
        if fault and fault[0] == "echo":
            self._send(fault[1], json.dumps({"error": "rejected", "request_headers": dict(self.headers)}))
            return
        if fault and fault[0] == "delay":
            time.sleep(fault[1])
        text = self.scripted.reply(body)
        pace = fault[1] if fault and fault[0] == "dribble" else 0.0
        self._send(200, json.dumps(_completion(body, text)), pace=pace)
