"""One worker plays an LLM agent's episodes of many tasks at once (tests/chat_server.py on loopback).

The records must not depend on the concurrency: the same seed gives the same episodes whether they
are played one at a time or eight at once, across tasks, and a resumed run completes them identically.
"""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from agentgym_budget.eval.passkt import worker as passkt_worker
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import group_tasks, plan_episodes, run_passkt
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.wrappers import TurnBudget
from tests.chat_server import ScriptedChatServer

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")
TASKS, SAMPLES = 4, 2


def _seeded_admissible(body: dict[str, Any]) -> str:
    """An admissible action picked with the request's seed: different episodes, each reproducible."""
    for line in body["messages"][-1]["content"].splitlines():
        if line.startswith("Admissible actions:"):
            actions = [a.strip() for a in line.split(":", 1)[1].split("|")]
            return "Action: " + random.Random(body["seed"]).choice(actions)
    return "Action: look"


def _run(out: Path, concurrency: int) -> tuple[dict, int, int]:
    with ScriptedChatServer(_seeded_admissible, latency=0.05) as server:
        agent = f"openai:scripted:base_url={server.base_url},retries=0"
        config = PassKTConfig(
            COIN, [agent], ks=(1,), budgets=(3,), samples=SAMPLES, tasks=TASKS, workers=1,
            episode_concurrency=concurrency, resamples=100,
        )  # fmt: skip
        result = run_passkt(config, out, progress=False, plots=False)
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    stable = {(r["task_id"], r["sample"]): {k: v for k, v in r.items() if k != "elapsed_s"} for r in records}
    return stable, result.played, server.max_in_flight


@pytest.mark.slow
def test_episodes_of_several_tasks_in_flight_give_the_records_of_one_at_a_time(tmp_path: Path) -> None:
    one_at_a_time, played, in_flight = _run(tmp_path / "c1", 1)
    assert played == TASKS * SAMPLES and in_flight == 1
    at_once, played, in_flight = _run(tmp_path / "c8", 8)
    assert played == TASKS * SAMPLES
    assert in_flight > SAMPLES, "no more requests in flight than one task has episodes: tasks were not interleaved"
    assert at_once == one_at_a_time
    assert len({json.dumps(r["actions"]) for r in at_once.values()}) > 1, "the episodes should differ"

    log = tmp_path / "c8" / "episodes.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    resumed, played, _ = _run(tmp_path / "c8", 8)
    assert played == len(lines) - len(lines) // 2 and resumed == one_at_a_time


@pytest.mark.slow
def test_resets_run_in_the_env_thread_and_steps_on_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: dict[str, set[str]] = {"reset": set(), "step": set()}
    original_reset, original_step = TurnBudget.reset, TurnBudget.step

    def reset(self: TurnBudget, **kwargs: Any) -> Any:
        threads["reset"].add(threading.current_thread().name.rsplit("_", 1)[0])
        return original_reset(self, **kwargs)

    def step(self: TurnBudget, action: Any) -> Any:
        threads["step"].add(threading.current_thread().name)
        return original_step(self, action)

    monkeypatch.setattr(TurnBudget, "reset", reset)
    monkeypatch.setattr(TurnBudget, "step", step)
    inline, _, _ = _run(tmp_path / "inline", 4)
    assert threads == {"reset": {"agentgym-env"}, "step": {"MainThread"}}

    monkeypatch.setattr(passkt_worker, "STEPS_IN_ENV_THREAD", True)
    threads["step"].clear()
    in_thread, _, _ = _run(tmp_path / "in-thread", 4)
    assert threads["step"] == {"agentgym-env_0"}
    assert in_thread == inline


def test_tasks_are_grouped_into_jobs_that_fill_the_concurrency() -> None:
    def jobs(agent: str, workers: int, tasks: int = 6) -> list[tuple[str, ...]]:
        ids = tuple(f"t{i}" for i in range(tasks))
        config = PassKTConfig(COIN, [agent], ks=(1,), budgets=(5, 10), samples=2, tasks=ids, workers=workers)
        return [job.tasks for job in group_tasks(config, plan_episodes(config, ids))]

    assert jobs("openai:m:concurrency=4", workers=1) == [("t0", "t1", "t2", "t3", "t4", "t5")]
    assert jobs("openai:m:concurrency=4", workers=2) == [("t0", "t1", "t2"), ("t3", "t4", "t5")]
    assert jobs("openai:m:concurrency=1", workers=1) == [(f"t{i}",) for i in range(6)]
    assert jobs("random", workers=1) == [(f"t{i}",) for i in range(6)]
