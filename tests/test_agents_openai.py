"""The OpenAI-compatible agent against a real HTTP server on loopback (tests/chat_server.py)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agentgym_budget.agents.chat_client import ChatClient
from agentgym_budget.agents.openai_chat import OpenAIChatAgent
from agentgym_budget.agents.prompting import PromptTemplate, extract_action
from agentgym_budget.errors import AgentError, DataError
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import run_passkt
from agentgym_budget.runner.rollout import EnvRef, run_episode
from tests.chat_server import ScriptedChatServer

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")
SECRET = "sk-test-9f8e7d6c5b4a"


def _complete(client: ChatClient, n: int = 1) -> list:
    async def go() -> list:
        try:
            payload = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            return await asyncio.gather(*(client.complete(payload) for _ in range(n)))
        finally:
            await client.aclose()

    return asyncio.run(go())


def _expert_plan(task: str) -> list[str]:
    env = COIN.make({"expert_plan"})
    try:
        _, info = env.reset(seed=0, options={"task": task, "max_turns": 5})
        return info["expert_plan"]
    finally:
        env.close()


def test_agent_plays_a_real_game_through_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGB_TEST_KEY", SECRET)
    task = COIN.task_ids()[0]
    plan = _expert_plan(task)
    turn = iter(range(100))
    with ScriptedChatServer(
        lambda body: f"<think>route</think>Next:\nAction: **{plan[next(turn)].upper()}**"
    ) as server:
        agent = OpenAIChatAgent("scripted-model", base_url=server.base_url, api_key_env="AGB_TEST_KEY", history=1)
        env = COIN.make()
        try:
            result = run_episode(env, agent, task_id=task, budget=10, seed=42)
        finally:
            env.close()
    assert result.won and result.actions == plan
    assert result.agent_stats["requests"] == len(plan) == len(server.requests)
    assert result.agent_stats["completion_tokens"] == 7 * len(plan)
    assert result.agent_stats["prompt_tokens"] > 0 and result.agent_stats["unmatched_actions"] == 0
    headers, first = server.requests[0]
    assert headers["Authorization"] == f"Bearer {SECRET}"
    assert first["model"] == "scripted-model" and first["temperature"] == 0.7 and first["max_tokens"] == 256
    assert first["messages"][0]["role"] == "system" and "head west" in first["messages"][0]["content"]
    assert "Admissible actions:" in first["messages"][-1]["content"]
    assert "Turns left" not in json.dumps([body for _, body in server.requests])  # budget hidden
    assert len({body["seed"] for _, body in server.requests}) == len(plan)
    # history window of 1 turn: system + (user, assistant) + current user
    assert [len(body["messages"]) for _, body in server.requests] == [2] + [4] * (len(plan) - 1)
    assert server.requests[1][1]["messages"][2] == {"role": "assistant", "content": f"Action: {plan[0]}"}
    assert SECRET not in repr(agent) and SECRET not in repr(agent.client)


def test_budget_is_in_the_prompt_only_when_shown() -> None:
    task = COIN.task_ids()[0]
    with ScriptedChatServer() as server:
        env = COIN.make(show_budget=True)
        try:
            run_episode(env, OpenAIChatAgent("m", base_url=server.base_url), task_id=task, budget=2, seed=0)
        finally:
            env.close()
    prompts = [body["messages"][-1]["content"] for _, body in server.requests]
    assert "Turns left: 2 of 2" in prompts[0] and "Turns left: 1 of 2" in prompts[1]


def test_retries_with_backoff_on_server_errors() -> None:
    faults = [("status", 500, '{"error": "boom"}'), ("status", 429, "{}", {"Retry-After": "0"})]
    with ScriptedChatServer(faults=faults) as server:
        (result,) = _complete(ChatClient(server.base_url, backoff=0.01))
    assert result.retries == 2 and result.text.startswith("Action:") and len(server.requests) == 3


def test_timeouts_are_retried() -> None:
    with ScriptedChatServer(faults=[("delay", 1.5)]) as server:
        (result,) = _complete(ChatClient(server.base_url, timeout=0.3, retries=2, backoff=0.01))
    assert result.retries == 1 and len(server.requests) == 2


def test_client_errors_are_not_retried() -> None:
    with (
        ScriptedChatServer(faults=[("status", 400, '{"error": "unknown model m"}')]) as server,
        pytest.raises(AgentError, match=r"HTTP 400.*unknown model m.*not retried"),
    ):
        _complete(ChatClient(server.base_url, backoff=0.01))
    assert len(server.requests) == 1


@pytest.mark.slow
def test_exhausted_retries_and_malformed_replies_raise_agent_errors() -> None:
    with (
        ScriptedChatServer(faults=[("status", 503, "{}")] * 3) as server,
        pytest.raises(AgentError, match="failed after 3 attempts; last problem: HTTP 503"),
    ):
        _complete(ChatClient(server.base_url, retries=2, backoff=0.01))
    with (
        ScriptedChatServer(faults=[("raw", "<html>gateway</html>")]) as server,
        pytest.raises(AgentError, match="not a chat completion"),
    ):
        _complete(ChatClient(server.base_url, backoff=0.01))
    with pytest.raises(AgentError, match="failed after 2 attempts"):
        _complete(ChatClient("http://127.0.0.1:9/v1", retries=1, backoff=0.01, timeout=2))


def test_no_authorization_header_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGB_TEST_KEY", raising=False)
    with ScriptedChatServer() as server:
        _complete(ChatClient(server.base_url, api_key_env="AGB_TEST_KEY"))
    assert "Authorization" not in server.requests[0][0]


@pytest.mark.slow
def test_concurrency_limit_caps_requests_in_flight() -> None:
    with ScriptedChatServer(latency=0.2) as server:
        results = _complete(ChatClient(server.base_url, concurrency=2), n=6)
    assert len(results) == 6 and len(server.requests) == 6
    assert server.max_in_flight <= 2


def test_connections_are_kept_alive_and_reused() -> None:
    with ScriptedChatServer() as server:
        client = ChatClient(server.base_url, concurrency=2)

        async def go() -> None:
            try:
                payload = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
                for _ in range(5):
                    await asyncio.gather(client.complete(payload), client.complete(payload))
            finally:
                await client.aclose()

        asyncio.run(go())
    assert len(server.requests) == 10 and server.connections <= 2


def test_credentials_in_the_url_are_sent_unless_a_key_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGB_TEST_KEY", raising=False)
    with ScriptedChatServer() as server:
        url = server.base_url.replace("http://", "http://me:pw@")
        _complete(ChatClient(url, api_key_env="AGB_TEST_KEY"))
        monkeypatch.setenv("AGB_TEST_KEY", SECRET)
        _complete(ChatClient(url, api_key_env="AGB_TEST_KEY"))
    assert server.requests[0][0]["Authorization"] == "Basic bWU6cHc="  # base64("me:pw")
    assert server.requests[1][0]["Authorization"] == f"Bearer {SECRET}"


def test_requests_go_through_the_proxy_of_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedChatServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
        monkeypatch.setenv("NO_PROXY", "")
        (result,) = _complete(ChatClient("http://chat.invalid/v1", retries=0))
    assert result.text.startswith("Action:")
    assert proxy.targets == ["http://chat.invalid/v1/chat/completions"]


@pytest.mark.slow
def test_pass_at_kt_run_with_the_llm_agent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two worker processes, episodes played concurrently; the key never reaches the results."""
    monkeypatch.setenv("AGB_TEST_KEY", SECRET)
    with ScriptedChatServer() as server:
        name = f"openai:scripted:base_url={server.base_url},api_key_env=AGB_TEST_KEY,backoff=0.01,concurrency=3"
        config = PassKTConfig(COIN, [name], ks=(1, 2), budgets=(2, 4), samples=2, tasks=2, workers=2)
        result = run_passkt(config, tmp_path, progress=False, plots=False)
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2 * 2 * 2 and result.played == 8
    assert {r["agent"] for r in records} == {"openai:scripted"}
    assert sum(r["turns"] for r in records) == len(server.requests)
    assert all(r["agent_stats"]["requests"] == r["turns"] for r in records)
    assert all(r["agent_stats"]["completion_tokens"] == 7 * r["turns"] for r in records)
    assert all(headers["Authorization"] == f"Bearer {SECRET}" for headers, _ in server.requests)
    for path in tmp_path.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path


def test_extract_action_variants() -> None:
    admissible = ["go north", "take coin", "open door"]
    assert extract_action("Action: take coin", admissible) == ("take coin", True)
    assert extract_action("  action = `GO  North` ", admissible) == ("go north", True)
    assert extract_action("<think>Action: open door</think>\nAction: take coin.", admissible) == ("take coin", True)
    assert extract_action("1. open door", admissible) == ("open door", True)
    assert extract_action("I'd rather dance", admissible) == ("I'd rather dance", False)
    assert extract_action("<think>never closed... Action: go north", admissible) == ("", False)
    assert extract_action("", admissible) == ("", False)


def test_prompt_templates_from_files(tmp_path: Path) -> None:
    path = tmp_path / "template.json"
    path.write_text(json.dumps({"system": "GOAL={goal}", "turn": "{observation}|{actions}|{budget}"}))
    template = PromptTemplate.from_file(path)
    messages = template.messages("win", [], "room", ["a", "b"], turns_left=1, max_turns=3)
    assert messages[0]["content"] == "GOAL=win"
    assert messages[1]["content"] == "room|\nAdmissible actions: a | b|\nTurns left: 1 of 3\n"
    agent = OpenAIChatAgent("m", base_url="http://127.0.0.1:9/v1", template=str(path), show_actions=False)
    agent._goal = "win"
    assert "Admissible" not in agent.messages("room", {"admissible_actions": ["a"]})[-1]["content"]
    path.write_text(json.dumps({"sytem": "x"}))
    with pytest.raises(DataError, match="keys among"):
        PromptTemplate.from_file(path)


# ------------------------------------------------------------------ issue 13: key redaction, deadline, usage
@pytest.mark.parametrize("status", [401, 500])
def test_the_key_is_redacted_from_errors_of_a_server_that_echoes_headers(
    monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setenv("AGB_TEST_KEY", SECRET)
    with (
        ScriptedChatServer(faults=[("echo", status)] * 2) as server,
        pytest.raises(AgentError, match=rf"HTTP {status}.*request_headers") as caught,
    ):
        _complete(ChatClient(server.base_url, api_key_env="AGB_TEST_KEY", retries=1, backoff=0.01))
    assert server.requests[0][0]["Authorization"] == f"Bearer {SECRET}"  # the key was sent, and echoed back
    message = str(caught.value)
    assert SECRET not in message and "Bearer ***" in message
    assert SECRET[-8:] not in message


def test_malformed_replies_do_not_leak_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGB_TEST_KEY", SECRET)
    echo = f'<html>proxy saw "authorization: Bearer {SECRET}" and key={SECRET}</html>'
    with (
        ScriptedChatServer(faults=[("raw", echo)]) as server,
        pytest.raises(AgentError, match="not a chat completion") as caught,
    ):
        _complete(ChatClient(server.base_url, api_key_env="AGB_TEST_KEY"))
    assert SECRET not in str(caught.value) and "key=***" in str(caught.value)


@pytest.mark.slow
def test_a_failed_run_writes_and_prints_no_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole path: worker process, WorkerError, CLI error line, files of the run."""
    from agentgym_budget.cli.main import main

    monkeypatch.setenv("AGB_TEST_KEY", SECRET)
    with ScriptedChatServer(faults=[("echo", 403)] * 4) as server:
        name = f"openai:m:base_url={server.base_url},api_key_env=AGB_TEST_KEY,retries=0"
        argv = ["passkt", "--env", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--agent", name]
        argv += ["--tasks", "1", "--n", "1", "--k", "1", "--t", "3", "--workers", "2", "--no-progress"]
        assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    printed = capsys.readouterr()
    assert "HTTP 403" in printed.err and "Bearer ***" in printed.err
    assert SECRET not in printed.err + printed.out
    for path in (tmp_path / "run").rglob("*"):
        assert path.is_dir() or SECRET.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_the_timeout_is_a_total_deadline_even_for_a_server_that_dribbles() -> None:
    # The reply (about 300 bytes) would take minutes at one byte per 0.5 s; a per-read timeout
    # restarts with every byte, so only a total deadline stops it.
    with ScriptedChatServer(faults=[("dribble", 0.5)]) as server:
        began = time.monotonic()
        with pytest.raises(AgentError, match=r"no complete answer within 1 s"):
            _complete(ChatClient(server.base_url, timeout=1.0, retries=0))
        elapsed = time.monotonic() - began
    assert elapsed < 30, f"the request was held {elapsed:.0f} s with timeout=1"


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": "many", "completion_tokens": 1},
        {"prompt_tokens": [1, 2], "completion_tokens": 1},
        {"prompt_tokens": 1, "completion_tokens": 1e400},
        {"prompt_tokens": -3, "completion_tokens": 1},
        {"prompt_tokens": None, "completion_tokens": 1},
        {"prompt_tokens": 2.5, "completion_tokens": 1},
        {"prompt_tokens": True, "completion_tokens": 1},
        ["prompt_tokens", 3],
        "lots",
    ],
)
def test_malformed_usage_is_an_agent_error(usage: object) -> None:
    body = json.dumps(
        {"choices": [{"message": {"role": "assistant", "content": "Action: look"}}], "usage": usage}
    ).replace("Infinity", "1e400")
    with ScriptedChatServer(faults=[("raw", body)]) as server, pytest.raises(AgentError, match="malformed usage"):
        _complete(ChatClient(server.base_url))


@pytest.mark.parametrize("usage", [None, {}, {"prompt_tokens": 5}, {"prompt_tokens": 5.0, "completion_tokens": 0}])
def test_absent_usage_counts_zero(usage: object) -> None:
    body = {"choices": [{"message": {"role": "assistant", "content": "Action: look"}}]}
    if usage is not None:
        body["usage"] = usage
    with ScriptedChatServer(faults=[("raw", json.dumps(body))]) as server:
        (result,) = _complete(ChatClient(server.base_url))
    assert result.text == "Action: look" and result.prompt_tokens == (5 if usage and "prompt_tokens" in usage else 0)
