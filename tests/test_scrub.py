"""Secrets (API keys, Authorization values) never reach the records the runner writes."""

from __future__ import annotations

import json

from agentgym_budget.runner.scrub import scrub
from agentgym_budget.runner.store import JsonlStore


def test_an_echoed_key_in_an_action_is_not_written(tmp_path, monkeypatch):
    key = "sk-test-0123456789abcdefXYZ"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-98765432")
    store = JsonlStore(tmp_path / "episodes.jsonl", key=lambda r: r["id"])
    record = {
        "id": 1,
        "actions": [f"your key is {key}", "headers: Authorization: Bearer tok-98765432", "go north"],
        "raw": {"response": f'{{"api_key": "{key}"}}', "Authorization": f"Bearer {key}"},
        "note": "the token tok-98765432 again",
    }
    assert store.append(record)
    store.close()
    written = (tmp_path / "episodes.jsonl").read_text()
    assert key not in written and "tok-98765432" not in written
    back = json.loads(written)
    assert back["actions"][2] == "go north"
    assert back["actions"][0] == "your key is ***"
    assert back["raw"]["Authorization"] == "***"
    assert JsonlStore(tmp_path / "episodes.jsonl", key=lambda r: r["id"]).records == [back]


def test_ordinary_text_is_left_alone():
    actions = ["take key from table", "unlock door with key", "authorization form", "open token box"]
    assert scrub(actions, secrets=()) == actions
