"""Slow and truncated clients, budgets and stored commands on a real server (issue 52).

Each case was a reported break: before the fix two ``POST /reset`` that sent 9 of 100 body bytes held
both sessions of ``--max-sessions 2`` for as long as they stayed open (every reset answered 503), a
reset could ask for ``max_turns`` 2**63-1, every step kept its command until the pooled session's next
reset (600 steps of 65,500 characters: +37 MB), a body cut short played a reset for nobody, ``GET
/state`` and ``/metadata`` took a session, the task routes answered 501, and a client resetting its
connection mid-reset logged "Exception in ASGI application". Servers run on 127.0.0.1; every wait is bounded.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import socket
import struct
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("openenv")
import websockets.exceptions
import websockets.sync.client

from agentgym_budget.integrations.openenv import serve_in_thread
from agentgym_budget.integrations.server_limits import DEFAULTS
from agentgym_budget.integrations.session import EpisodeSession
from agentgym_budget.integrations.session_config import SessionConfig
from tests.server_load import post, rss_mib, start_server

pytestmark = pytest.mark.slow

_BUDGET, _HISTORY = 40, 200_000
_WAIT = 60.0  # the longest any single wait of these tests may take (a bound, not a timing claim)


@pytest.fixture(scope="module")
def url():
    """One session only, so that whatever holds it shows: a 3 s body deadline, a 3 s WebSocket one."""
    config = SessionConfig("TextWorld-CoinCollector-v0", max_turns=10)
    limits = {"read_timeout": 3.0, "idle_timeout": 3.0, "max_budget": _BUDGET, "max_history_bytes": _HISTORY}
    with serve_in_thread(config, max_sessions=1, **limits) as url:
        yield url


@pytest.fixture(autouse=True)
def _session_free(request):
    """Each test starts with the one session free: a WebSocket closed by the test before is released asynchronously."""
    if "url" in request.fixturenames:
        _reset_until_served(request.getfixturevalue("url"))


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _reset_until_served(url: str, body: bytes = b'{"seed": 0}') -> list[int]:
    """``POST /reset`` until it is answered 200 (503s while the session is held); the statuses seen."""
    statuses, deadline = [], time.monotonic() + _WAIT
    while not statuses or statuses[-1] == 503:
        assert time.monotonic() < deadline, f"the session was never released: {statuses[-5:]}"
        statuses.append(post(url + "/reset", body)[0])
        if statuses[-1] == 503:
            time.sleep(0.1)
    assert statuses[-1] == 200, statuses
    return statuses


def _stalled_post(url: str, announced: int, sent: bytes) -> socket.socket:
    sock = socket.create_connection(_address(url), timeout=_WAIT)
    head = f"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {announced}\r\n\r\n"
    sock.sendall(head.encode() + sent)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by the socket's timeout)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_stalled_body_is_answered_408_and_its_session_released(url):
    with _stalled_post(url, 100, b'{"seed": 1') as stalled:
        started = time.monotonic()
        reply = _read_all(stalled)  # was: nothing, ever (the socket timed out after 60 s)
        held = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 408 "), reply[:200]
    assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"] == "RequestTimeout"
    assert held < _WAIT
    _reset_until_served(url)  # --max-sessions 1: the stalled request no longer holds the session


def _websocket_handshake(url: str) -> socket.socket:
    sock = socket.create_connection(_address(url), timeout=_WAIT)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101 "), head
    return sock


def _text_frame(payload: bytes, announced: int | None = None) -> bytes:
    """A masked client text frame of at most 125 bytes (``announced``: the length its header claims)."""
    mask = os.urandom(4)
    header = struct.pack("!BB", 0x81, 0x80 | (len(payload) if announced is None else announced))
    return header + mask + bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))


def test_a_stalled_websocket_frame_closes_the_session_at_the_idle_deadline(url):
    with _websocket_handshake(url) as sock:
        sock.sendall(_text_frame(b'{"type": "', announced=100))  # 10 of 100 bytes, then silence
        received = b""
        while b"IDLE_TIMEOUT" not in received or b"\x88" not in received.split(b"IDLE_TIMEOUT", 1)[1]:
            chunk = sock.recv(65536)
            assert chunk, received
            received += chunk  # the error frame, then the close frame (0x88)
    _reset_until_served(url)


@pytest.mark.parametrize("sent", [b'{"seed": 5}', b""], ids=["part-of-the-body", "headers-only"])
def test_a_body_cut_short_is_dropped_without_calling_the_env(url, monkeypatch, sent):
    played = []
    reset = EpisodeSession.reset
    monkeypatch.setattr(EpisodeSession, "reset", lambda self, **fields: played.append(fields) or reset(self, **fields))
    with _stalled_post(url, 64, sent):
        statuses = _reset_until_held(url)  # the cut request has reached the server and holds the session
    statuses += _reset_until_served(url)
    assert len(played) == statuses.count(200), (played, statuses)  # was one more: a reset played for nobody


def _reset_until_held(url: str) -> list[int]:
    statuses, deadline = [], time.monotonic() + _WAIT
    while not statuses or statuses[-1] != 503:
        assert time.monotonic() < deadline, statuses[-5:]
        statuses.append(post(url + "/reset", b'{"seed": 0}')[0])
    return statuses


@contextlib.contextmanager
def _session(url: str, **fields: object) -> Iterator[tuple[Any, dict]]:
    """A WebSocket session and its first reset's reply, retried while the session before is being released.

    A client sees its reply before the server's ``finally`` gives the place back, so one session right
    after another (``--max-sessions 1``) may briefly be refused with ``CAPACITY_REACHED`` (code 1013).
    """
    deadline = time.monotonic() + _WAIT
    while True:
        ws = websockets.sync.client.connect(url.replace("http", "ws", 1) + "/ws", max_size=None, open_timeout=_WAIT)
        try:
            reply = _send(ws, "reset", fields)
        except websockets.exceptions.ConnectionClosed as closed:
            reply = {"type": "closed", "data": {"code": closed.rcvd and closed.rcvd.code}}
        if reply["type"] == "observation":
            break
        ws.close()
        assert reply["data"]["code"] in {"CAPACITY_REACHED", 1013}, reply
        assert time.monotonic() < deadline, "the session before was never released"
        time.sleep(0.1)
    with ws:
        yield ws, reply


def _send(ws, kind: str, data: dict | None = None) -> dict:
    ws.send(json.dumps({"type": kind} if data is None else {"type": kind, "data": data}, ensure_ascii=False))
    return json.loads(ws.recv(timeout=_WAIT))


def test_an_episode_may_not_ask_for_more_than_the_server_ceiling(url):
    status, _, body = post(url + "/reset", json.dumps({"seed": 0, "max_turns": 2**63 - 1}).encode())
    assert status == 400 and body["error"] == "InvalidBudgetError", body
    assert "at most 40 turns" in body["message"], body
    assert post(url + "/reset", json.dumps({"seed": 0, "max_turns": _BUDGET}).encode())[0] == 200
    with _session(url, seed=0, max_turns=3, show_budget=True) as (ws, first):
        assert first["data"]["observation"]["turn"] == 0
        refused = _send(ws, "reset", {"seed": 0, "max_turns": _BUDGET + 1})
        assert refused["type"] == "error" and refused["data"]["message"].startswith("InvalidBudgetError"), refused
        state = _send(ws, "state")["data"]
        assert (state["max_turns"], state["turn"], state["done"]) == (3, 0, False)  # the episode goes on


def test_stored_commands_are_bounded_and_a_command_past_the_bound_spends_no_turn(url):
    long_command = "x" * 65_000  # about 65 kB as stored: three fit in 200,000 bytes
    with _session(url, seed=0, max_turns=_BUDGET) as (ws, _):
        replies = [_send(ws, "step", {"command": f"{i}{long_command}"}) for i in range(5)]
        assert [r["type"] for r in replies] == ["observation"] * 3 + ["error"] * 2, replies
        assert replies[3]["data"]["message"].startswith("InvalidActionError: This episode's commands hold")
        assert "200,000 bytes an episode" in replies[3]["data"]["message"]
        assert _send(ws, "state")["data"]["turn"] == 3
        assert _send(ws, "step", {"command": "look"})["data"]["observation"]["turn"] == 4
        assert _send(ws, "reset", {"seed": 0})["type"] == "observation"
        assert _send(ws, "step", {"command": long_command})["type"] == "observation"  # a reset starts afresh


def test_routes_that_need_no_env_take_no_session_and_task_routes_are_gone(url):
    with _session(url, seed=0):  # the only session is held
        assert post(url + "/reset", b'{"seed": 0}')[0] == 503
        replies = {route: _get(url, route) for route in ("/state", "/metadata", "/health", "/schema", "/openapi.json")}
        assert {route: status for route, (status, _) in replies.items()} == dict.fromkeys(replies, 200)
        state = replies["/state"][1]
        assert state["env"] == "TextWorld-CoinCollector-v0" and state["done"], state
        assert replies["/metadata"][1]["name"] == "agentgym_budget"
        paths = replies["/openapi.json"][1]["paths"]
        assert not [path for path in paths if "{env_name}" in path or path == "/mcp"], sorted(paths)
        for route in ("/agentgym_budget/splits", "/agentgym_budget/tasks", "/agentgym_budget/num_tasks"):
            assert post(url + route, b'{"split": "train"}')[0] == 404  # was 501, after building an env


def _get(url: str, route: str) -> tuple[int, dict]:
    with socket.create_connection(_address(url), timeout=_WAIT) as sock:
        sock.sendall(f"GET {route} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        head, _, body = _read_all(sock).partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_client_resetting_its_connection_mid_reset_logs_no_exception(url):
    records = _Records()
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(records)
    try:
        for seed in range(4):  # was logged every time (16 of 16 tries)
            with _websocket_handshake(url) as sock:
                sock.sendall(_text_frame(json.dumps({"type": "reset", "data": {"seed": seed}}).encode()))
                time.sleep(0.001 * seed)  # the reset is under way (it takes 7-90 ms)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with an RST
            _reset_until_served(url)  # the session has ended and been released
    finally:
        logger.removeHandler(records)
    assert not [m for m in records.messages if "Exception in ASGI application" in m], records.messages


def test_long_actions_cannot_grow_the_server_past_the_history_bound():
    """Distinct 65,504-character actions (4 bytes a character, 262,096 bytes each as stored) on one server.

    First 100 of them all played, four to an episode (the most 1 MiB holds); then 150 in one 1,000-turn
    episode, where all but the first four are refused. Before the fix the second part kept every command
    (about 37 MB) and the first kept 148 MiB before round 3. A session keeps at most ``DEFAULTS["max_history_bytes"]``
    (1 MiB) of commands, so the server may grow by that plus what serving 262 kB frames needs.
    """
    process, url = start_server(1)
    try:
        with _session(url, seed=0) as (ws, _):
            baseline = rss_mib(process.pid)
            commands = [f"{i:04d}" + "\U0001f600" * 65_500 for i in range(250)]
            for command in commands[:100]:
                if _send(ws, "step", {"command": command})["type"] == "error":  # the episode's history is full
                    _send(ws, "reset", {"seed": 0})
                    assert _send(ws, "step", {"command": command})["type"] == "observation"
            _send(ws, "reset", {"seed": 0, "max_turns": 1000})
            kinds = [_send(ws, "step", {"command": command})["type"] for command in commands[100:]]
        with _session(url, seed=0):
            grown = rss_mib(process.pid) - baseline
        fit = DEFAULTS["max_history_bytes"] // sys.getsizeof(commands[0])
        assert (fit, kinds) == (4, ["observation"] * 4 + ["error"] * 146), kinds
        assert grown < DEFAULTS["max_history_bytes"] / 2**20 + 16, f"the server grew by {grown:.0f} MiB"
    finally:
        process.kill()
        process.wait()
