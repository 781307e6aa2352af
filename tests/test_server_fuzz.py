"""Fuzz targets of the server's surfaces (hypothesis, bounded): HTTP bodies, WebSocket frames, slow bodies at capacity.

Each target draws what a hostile client can send, built to reach the defects of issue 38: non-finite
numbers, integers of thousands of digits, nesting from 1 to 60,000 levels, escaped lone surrogates,
binary frames, and request bodies arriving in chunks interleaved across requests. The properties
are the server's promises: never a 500, an error frame keeps the session, and at most
``max_sessions`` requests are served at once whatever the order in which their bytes arrive.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("openenv")
import itertools

from starlette.testclient import TestClient

from agentgym_budget.integrations.openenv import create_app
from agentgym_budget.integrations.session_config import SessionConfig

pytestmark = pytest.mark.slow

_FUZZ = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

_ATOMS = st.sampled_from(
    ["NaN", "Infinity", "-Infinity", "1e400", "-1e999", '"\\ud800"', '"a\\udfffb"', "true", "null", "-1", "0", '"look"']
)
_NUMBERS = st.integers(-(10**30), 10**30).map(str) | st.floats(allow_nan=False, allow_infinity=False).map(repr)
_BIG = st.integers(18, 6_000).map(lambda digits: "9" * digits)
_DEEP = st.integers(1, 60_000).map(lambda depth: "[" * depth + "]" * depth)
_KEYS = st.text(max_size=6).map(json.dumps) | st.just('"\\ud800"') | st.sampled_from(['"seed"', '"task"', '"command"'])


def _containers(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    arrays = st.lists(children, max_size=3).map(lambda items: "[" + ", ".join(items) + "]")
    objects = st.lists(st.tuples(_KEYS, children), max_size=3).map(
        lambda pairs: "{" + ", ".join(f"{key}: {value}" for key, value in pairs) + "}"
    )
    return arrays | objects


_VALUES = st.one_of(
    _ATOMS,
    _BIG,
    _DEEP,
    st.recursive(_ATOMS | _NUMBERS | _BIG | _DEEP | st.text(max_size=8).map(json.dumps), _containers, max_leaves=6),
)
_TEXT = st.one_of(
    _VALUES,
    _VALUES.map(lambda value: f'{{"type": "step", "data": {{"command": {value}}}}}'),
    _VALUES.map(lambda value: f'{{"type": "reset", "data": {{"seed": {value}}}}}'),
    _VALUES.map(lambda value: f'{{"type": "reset", "data": {value}}}'),
    _VALUES.map(lambda value: f'{{"type": "state", "data": {value}}}'),
    _VALUES.map(lambda value: f'{{"seed": {value}, "task": {value}}}'),
    _VALUES.map(lambda value: f'{{"action": {{"command": {value}}}}}'),
)
_FRAMES = _TEXT | st.binary(max_size=64) | _TEXT.map(lambda text: text.encode("utf-8", "surrogatepass"))


@pytest.fixture(scope="module")
def app():
    return create_app(SessionConfig("WebShop-1k-v0", max_turns=10), max_sessions=1)


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app) as client:
        yield client


@_FUZZ
@given(body=_TEXT, route=st.sampled_from(["/reset", "/step", "/state", "/metadata", "/agentgym_budget/tasks"]))
def test_http_bodies_never_get_a_500(client, body, route):
    raw = body.encode("utf-8", "surrogatepass")
    headers = {"content-type": "application/json"}
    response = client.request("GET" if route == "/state" else "POST", route, content=raw, headers=headers)
    assert response.status_code < 500, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json"), response.text[:300]


@_FUZZ
@given(frames=st.lists(_FRAMES, min_size=1, max_size=4))
def test_websocket_frames_keep_the_session(client, frames):
    with client.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.receive_text())["type"] == "observation"
        for frame in frames:
            (ws.send_bytes if isinstance(frame, bytes) else ws.send_text)(frame)
            reply = json.loads(ws.receive_text())
            assert reply["type"] in {"error", "observation", "state"}, reply
            assert reply["data"].get("code") != "SESSION_ERROR", reply
        ws.send_text(json.dumps({"type": "state"}))
        assert json.loads(ws.receive_text())["type"] == "state"  # still the same, live session


def _scope(path: str, length: int) -> dict:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(length).encode())]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "state": {},
    }


async def _interleaved(app, schedule: list[int], count: int) -> list[tuple[int, float, float]]:
    """``count`` ``POST /reset`` whose body bytes arrive in ``schedule`` order: ``(status, start, end)`` each."""
    body = json.dumps({"seed": 0}).encode()
    queues: list[asyncio.Queue] = [asyncio.Queue() for _ in range(count)]
    sent = [0] * count
    spans: list[tuple[int, float, float]] = []
    loop = asyncio.get_running_loop()

    async def one(index: int) -> None:
        status = [0]

        async def send(message: dict) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]

        start = loop.time()
        await app(_scope("/reset", len(body)), queues[index].get, send)
        spans.append((status[0], start, loop.time()))

    tasks = [asyncio.create_task(one(index)) for index in range(count)]
    await asyncio.sleep(0.01)
    for index in [*schedule, *list(range(count)) * len(body)]:
        if sent[index] < len(body):
            sent[index] += 1
            more = sent[index] < len(body)
            queues[index].put_nowait(
                {"type": "http.request", "body": body[sent[index] - 1 : sent[index]], "more_body": more}
            )
            await asyncio.sleep(0.005)
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
    return spans


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data(), count=st.integers(2, 4))
def test_slow_bodies_never_exceed_max_sessions(app, data, count):
    schedule = data.draw(st.lists(st.integers(0, count - 1), max_size=40))
    spans = asyncio.run(_interleaved(app, schedule, count))
    served = sorted((start, end) for status, start, end in spans if status == 200)
    assert {status for status, _, _ in spans} <= {200, 503}, spans
    assert all(end <= next_start for (_, end), (next_start, _) in itertools.pairwise(served)), spans
