"""A real ``passkt`` run through the CLI whose model server echoes the API key: no file of the run holds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.chat_server import ScriptedChatServer

pytestmark = pytest.mark.slow

KEY = "sk-e2eSECRET0123456789abcdefXYZ"
URL_PASSWORD = "urlPW-s3cret-4711"


def test_a_passkt_run_writes_no_secret_to_any_file_of_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"

    def echo(body: dict) -> str:  # a server that puts the request's credentials into the answer
        headers = server.requests[-1][0]
        return f"Your headers: Authorization: {headers.get('Authorization')} api_key={KEY}\nAction: look {KEY}"

    with ScriptedChatServer(echo) as server:
        base_url = server.base_url.replace("http://", f"http://user:{URL_PASSWORD}@")
        agent = f"openai:echo:base_url={base_url},api_key_env=AGB_E2E_KEY,backoff=0.01"
        command = [sys.executable, "-m", "agentgym_budget", "passkt", "--env", "TextWorld-CoinCollector-v0"]
        command += ["--env-args", "level=3", "--agent", agent, "--k", "1", "--t", "2", "--n", "1", "--tasks", "2"]
        command += ["--workers", "1", "--no-progress", "--out", str(out)]
        environment = {**os.environ, "AGB_E2E_KEY": KEY, "PYTHONWARNINGS": "ignore"}
        result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=environment)
    assert result.returncode == 0, result.stderr[-3000:]
    assert all(headers["Authorization"] == f"Bearer {KEY}" for headers, _ in server.requests)  # the key was used
    files = [path for path in out.rglob("*") if path.is_file()]
    assert any(path.name == "episodes.jsonl" for path in files) and len(server.requests) >= 2
    for path in files:
        data = path.read_bytes()
        assert KEY.encode() not in data and URL_PASSWORD.encode() not in data, path
    assert b"look ***" in (out / "episodes.jsonl").read_bytes()  # the echoed action was recorded, scrubbed
    assert KEY not in result.stdout + result.stderr and URL_PASSWORD not in result.stdout + result.stderr
