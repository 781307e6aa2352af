"""Hostile requests to the server (issue 38): slow bodies at capacity, non-strict JSON, binary and deep frames.

Each case is one of the reported breaks: before the fix a slow-body ``POST /reset`` was admitted past
``--max-sessions``, ``NaN``/``1e400``/lone surrogates answered 500 in plain text, and a binary, deeply
nested or huge-integer WebSocket frame closed the connection (the session lost). Large actions and memory:
``tests/test_server_deadlines.py``.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

pytest.importorskip("openenv")
from starlette.testclient import TestClient

from agentgym_budget.integrations.openenv import create_app
from agentgym_budget.integrations.session_config import SessionConfig
from tests.server_load import post, start_server

pytestmark = pytest.mark.slow

_RESET = json.dumps({"type": "reset", "data": {"seed": 3}})
_STEP = json.dumps({"type": "step", "data": {"command": "look"}})
_STATE = json.dumps({"type": "state"})


@pytest.fixture(scope="module")
def client():
    app = create_app(SessionConfig("TextWorld-CoinCollector-v0", max_turns=10), max_sessions=2)
    with TestClient(app) as client:
        yield client


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b'{"seed": NaN}', "WireJSONError"),
        (b'{"seed": Infinity}', "WireJSONError"),
        (b'{"seed": -Infinity}', "WireJSONError"),
        (b'{"seed": 1e400}', "WireJSONError"),
        (b"1e999", "WireJSONError"),
        (b'{"\\ud800": 1}', "WireJSONError"),
        (b'{"seed": 0, "task": "\\udfff"}', "WireJSONError"),
        (b'{"seed": ' + b"9" * 5000 + b"}", "WireJSONError"),
        (b'{"seed": 99999999999999999999}', "WireJSONError"),
        (b"[" * 50_000 + b"]" * 50_000, "WireJSONError"),
        (b'{"seed": "\xff"}', "WireJSONError"),
        (b'{"seed": true}', "InvalidOptionError"),
        (b'{"seed": "3"}', "InvalidOptionError"),
        (b'{"seed": 3.0}', "InvalidOptionError"),
        (b'{"seed": -1}', "InvalidOptionError"),
        (b'{"seed": 0, "task": -1}', "InvalidOptionError"),
        (b'{"seed": 0, "task": false}', "InvalidOptionError"),
    ],
)
def test_a_body_that_is_not_strict_json_or_a_bad_reset_field_is_a_json_400(client, body, error):
    response = client.post("/reset", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"] == error, response.json()
    assert client.post("/reset", json={"seed": 0, "task": 1}).status_code == 200


@pytest.mark.parametrize("route", ["/step", "/reset", "/coin/tasks", "/metadata"])
def test_every_route_reads_bodies_strictly(client, route):
    response = client.post(route, content=b'{"action": {"command": NaN}}', headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["error"] == "WireJSONError", response.text


_HOSTILE_FRAMES = [
    b'{"type": "reset", "data": {"seed": 0}}',  # as a binary frame
    "[" * 50_000 + "]" * 50_000,
    '{"type": "reset", "data": {"seed": ' + "9" * 5000 + "}}",
    '{"type": "step", "data": {"command": ' + "[" * 900 + "]" * 900 + "}}",
    '{"type": "step", "data": {"command": NaN}}',
    '{"type": "reset", "data": {"seed": 1e400}}',
    '{"type": "step", "data": {"\\ud800": "look"}}',
]


@pytest.mark.parametrize("frame", _HOSTILE_FRAMES, ids=range(len(_HOSTILE_FRAMES)))
def test_a_hostile_frame_gets_an_error_frame_and_the_session_goes_on(client, frame):
    with client.websocket_connect("/ws") as ws:
        ws.send_text(_RESET)
        assert json.loads(ws.receive_text())["type"] == "observation"
        ws.send_text(_STEP)
        before = json.loads(ws.receive_text())["data"]["observation"]
        (ws.send_bytes if isinstance(frame, bytes) else ws.send_text)(frame)
        reply = json.loads(ws.receive_text())
        assert reply["type"] == "error" and reply["data"]["code"] in {"INVALID_JSON", "VALIDATION_ERROR"}, reply
        ws.send_text(_STATE)
        state = json.loads(ws.receive_text())["data"]
        assert state["turn"] == before["turn"] == 1 and not state["done"], state  # the same episode, untouched
        ws.send_text(_STEP)
        assert json.loads(ws.receive_text())["data"]["observation"]["turn"] == 2


def test_the_mcp_routes_are_not_served(client):
    assert client.post("/mcp", json={"jsonrpc": "2.0", "method": "openenv/session/create", "id": 1}).status_code in {
        404,
        405,
    }


def _slow_reset(url: str, results: list[int], started: threading.Barrier, go: threading.Event) -> None:
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps({"seed": 0}).encode()
    with socket.create_connection((host, int(port)), timeout=120) as sock:
        head = (
            f"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        sock.sendall(head.encode() + body[:3])
        started.wait()
        go.wait()
        for byte in body[3:]:  # a slow body: one byte every 0.1 s
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break  # already answered (503) and closed
            time.sleep(0.1)
        reply = sock.makefile("rb").readline()
    results.append(int(reply.split()[1]))


def test_capacity_is_taken_before_a_slow_body_is_read():
    """``--max-sessions 1`` and 8 ``POST /reset`` whose bodies arrive late: one is served, 7 get 503 (was 8 x 200)."""
    process, url = start_server(1)
    try:
        results: list[int] = []
        started, go = threading.Barrier(9), threading.Event()
        threads = [threading.Thread(target=_slow_reset, args=(url, results, started, go)) for _ in range(8)]
        for thread in threads:
            thread.start()
        started.wait()
        time.sleep(1.0)  # the server has read every request's head and is waiting for the bodies
        go.set()
        for thread in threads:
            thread.join(timeout=120)
        assert sorted(results) == [200] + [503] * 7, results
        assert post(url + "/reset", b'{"seed": 1}')[0] == 200
    finally:
        process.kill()
        process.wait()
