"""The server's limits on every route: sessions across WebSocket and HTTP, sizes, bad bodies, bad frames, idle."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("openenv")
import websockets.sync.client
from starlette.testclient import TestClient

from agentgym_budget.integrations.openenv import create_app
from agentgym_budget.integrations.server_limits import ServerLimits
from agentgym_budget.integrations.session_config import SessionConfig
from tests.server_load import load, post, start_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client():
    app = create_app(SessionConfig("TextWorld-CoinCollector-v0", max_turns=10), max_sessions=2)
    with TestClient(app) as client:
        yield client


def test_http_errors_are_json_4xx_never_500(client):
    response = client.post("/step", json={"action": {"command": "look"}})
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/json")
    bad = client.post("/step", content=b"[1, 2", headers={"content-type": "application/json"})
    assert 400 <= bad.status_code < 500
    huge = client.post("/reset", content=b"{" + b" " * (2 << 20) + b"}", headers={"content-type": "application/json"})
    assert huge.status_code == 413 and huge.json()["error"] == "MessageTooLarge"


def test_non_object_frames_get_an_error_frame_and_the_session_goes_on(client):
    with client.websocket_connect("/ws") as ws:
        for frame in ("[1, 2]", '"text"', "42", "null", "x" * (2 << 20)):
            ws.send_text(frame)
            reply = json.loads(ws.receive_text())
            assert reply["type"] == "error", reply
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 0}}))
        reply = json.loads(ws.receive_text())
        assert reply["type"] == "observation", reply


def test_sessions_are_counted_across_websocket_and_http(client):
    with client.websocket_connect("/ws"), client.websocket_connect("/ws"):
        response = client.post("/reset", json={"seed": 0})
        assert response.status_code == 503 and response.json()["error"] == "CapacityReached"
        with client.websocket_connect("/ws") as third:
            reply = json.loads(third.receive_text())
            assert reply["data"]["code"] == "CAPACITY_REACHED"
    assert client.post("/reset", json={"seed": 0}).status_code == 200


def test_an_idle_session_is_closed(client):
    app = client.app
    while not isinstance(app, ServerLimits):
        app = app.middleware_stack if hasattr(app, "middleware_stack") and app.middleware_stack else app.app
    previous, app.idle_timeout = app.idle_timeout, 0.5
    try:
        with client.websocket_connect("/ws") as ws:
            reply = json.loads(ws.receive_text())
            assert reply["data"]["code"] == "IDLE_TIMEOUT"
    finally:
        app.idle_timeout = previous


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match="max_sessions"):
        ServerLimits(None, max_sessions=0)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
_FRAMES = _JSON | st.fixed_dictionaries(
    {"type": st.sampled_from(["reset", "step", "state", "close", "x"]), "data": _JSON}
)


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(frames=st.lists(_FRAMES, min_size=1, max_size=4), body=_FRAMES, route=st.sampled_from(["/reset", "/step"]))
def test_fuzzed_requests_never_get_500_or_lose_the_session(client, frames, body, route):
    assert client.post(route, json=body).status_code < 500
    with client.websocket_connect("/ws") as ws:
        for frame in frames:
            if isinstance(frame, dict) and frame.get("type") == "close":
                continue
            ws.send_text(json.dumps(frame))
            reply = json.loads(ws.receive_text())
            assert reply["type"] in {"error", "observation", "state"}, reply
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.receive_text())["type"] == "observation"


def test_a_real_server_holds_max_sessions_under_32_concurrent_http_resets():
    """``python -m tests.server_load 32 2``: a ``serve`` process, 32 concurrent ``POST /reset``, ``--max-sessions 2``."""
    figures = load(requests=32, max_sessions=2)
    assert set(figures["statuses"]) <= {"200", "503"} and figures["statuses"].get("200", 0) >= 1, figures
    assert figures["refusals_are_json"], figures
    assert figures["interpreters"] <= 2 and figures["peak_interpreters"] <= 2, figures
    step = figures["step_without_session"]
    assert step["status"] == 409 and step["content_type"].startswith("application/json"), step
    assert step["body"]["error"] == "EpisodeOverError", step
    assert figures["oversized"]["status"] == 413, figures


def test_serve_flags_set_the_limits():
    flags = ("--max-message-bytes", "4096", "--idle-timeout", "0.5", "--read-timeout", "0.5")
    process, url = start_server(2, *flags, "--max-budget", "40", "--max-history-bytes", "2048")
    try:
        status, _, body = post(url + "/reset", json.dumps({"seed": 0, "task": "x" * 5000}).encode())
        assert status == 413 and "4,096 bytes" in body["message"], body
        assert post(url + "/reset", json.dumps({"seed": 0}).encode())[0] == 200
        status, _, body = post(url + "/reset", json.dumps({"seed": 0, "max_turns": 41}).encode())
        assert status == 400 and "at most 40 turns" in body["message"], body
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as stalled:
            stalled.sendall(b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n{")
            assert stalled.recv(100).startswith(b"HTTP/1.1 408 ")
        with websockets.sync.client.connect(url.replace("http", "ws", 1) + "/ws") as ws:
            started = time.monotonic()
            reply = json.loads(ws.recv(timeout=30))
            assert reply["data"]["code"] == "IDLE_TIMEOUT" and time.monotonic() - started < 10, reply
        with websockets.sync.client.connect(url.replace("http", "ws", 1) + "/ws") as ws:
            ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            ws.recv(timeout=30)
            ws.send(json.dumps({"type": "step", "data": {"command": "x" * 2000}}))  # 2,049 bytes as stored
            reply = json.loads(ws.recv(timeout=30))
            assert "the limit of 2,048 bytes an episode" in reply["data"]["message"], reply
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--idle-timeout", "0", "expected a positive number of seconds like 600 or 0.5, got '0'"),
        ("--idle-timeout", "nan", "expected a positive number of seconds like 600 or 0.5, got 'nan'"),
        ("--max-message-bytes", "10", "expected a whole number of bytes from 1024 to 16777216 (16 MiB), got '10'"),
        ("--max-message-bytes", "1MiB", "expected a whole number of bytes from 1024 to 16777216 (16 MiB), got '1MiB'"),
        ("--read-timeout", "-1", "expected a positive number of seconds like 600 or 0.5, got '-1'"),
        ("--max-history-bytes", "10", "expected a whole number of bytes from 1024 to 1073741824 (1 GiB), got '10'"),
    ],
)
def test_serve_flags_are_validated_with_what_was_given_and_expected(flag, value, expected):
    result = subprocess.run(
        [sys.executable, "-m", "agentgym_budget", "serve", "TextWorld-CoinCollector-v0", flag, value],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and f"argument {flag}: {expected}" in result.stderr, result.stderr
