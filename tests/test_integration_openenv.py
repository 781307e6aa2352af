"""OpenEnv: `agentgym-budget serve` in a fresh process on a loopback ephemeral port, four concurrent sessions.

The sessions run in threads of the server process, each with its own TextWorld engine, from a cold start.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time

import pytest

from agentgym_budget.cli.main import main
from agentgym_budget.errors import EpisodeOverError, InvalidOptionError
from agentgym_budget.integrations.openenv import RemoteSession

pytestmark = pytest.mark.slow

SERVE = ["serve", "TextWorld-CoinCollector-v0", "--env-args", "level=6", "--port", "0", "--max-sessions", "4"]
SERVE += ["--budget", "30"]
SERVE += ["--info-keys", "expert_action"]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    command = [sys.executable, "-m", "agentgym_budget.cli", *SERVE]
    environment = {**os.environ, "AGENTGYM_BUDGET_CACHE": str(tmp_path_factory.mktemp("cold-cache"))}
    log = tmp_path_factory.mktemp("server") / "stderr.log"
    stderr = log.open("w")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=environment)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    deadline = time.monotonic() + 240
    url = None
    while url is None:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            process.kill()
            pytest.fail(f"the server did not start: {log.read_text()[-2000:]}")
        if "listening on " in line:
            url = line.rsplit("listening on ", 1)[1].strip()
    assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
    yield url
    process.terminate()
    assert process.wait(timeout=60) is not None
    stderr.close()


def _expert_wins(url: str, ready: threading.Barrier) -> dict:
    with RemoteSession(url) as env:
        ready.wait(timeout=120)
        obs = env.reset(seed=0)
        assert (obs.turn, obs.max_turns, obs.turns_left, obs.done) == (0, None, None, False)  # budget hidden
        first_text = obs.text
        while not obs.done:
            obs = env.step(f"I know what to do.\nAction: {obs.info['expert_action']}")
        state = env.state()
        return {"obs": obs, "state": state, "first_text": first_text}


def _budget_truncates(url: str, ready: threading.Barrier) -> dict:
    with RemoteSession(url) as env:
        ready.wait(timeout=120)
        obs = env.reset(seed=1, max_turns=2, show_budget=True)
        assert (obs.max_turns, obs.turns_left) == (2, 2) and "[Turns left: 2 of 2]" in obs.text
        steps = [env.step("look"), env.step("Action: inventory")]
        with pytest.raises(EpisodeOverError, match="out of turns"):
            env.step("Action: look")
        return {"steps": steps}


def _bad_actions_get_clear_errors(url: str, ready: threading.Barrier) -> dict:
    with RemoteSession(url) as env:
        ready.wait(timeout=120)
        with pytest.raises(EpisodeOverError, match="No episode is running"):
            env.step("look")
        with pytest.raises(InvalidOptionError, match="Did you mean 'max_turns'"):
            env.reset(seed=2, max_turn=3)
        with pytest.raises(InvalidOptionError, match="'seed' must be an integer"):
            env.reset(seed="two")
        obs = env.reset(seed=2)
        obs = env.step("Action: <think>")  # any text is one turn with the game's usual feedback
        assert obs.turn == 1 and obs.command == "" and not obs.done
        return {"obs": obs}


def _same_seed_same_episode(url: str, ready: threading.Barrier) -> dict:
    with RemoteSession(url) as env:
        ready.wait(timeout=120)
        runs = []
        for _ in range(2):
            obs = env.reset(seed=5)
            trajectory = [obs.observation]
            for _ in range(3):
                obs = env.step(obs.info["expert_action"])
                trajectory.append(obs.observation)
            runs.append((obs.task_id, trajectory))
        return {"runs": runs}


def test_four_concurrent_sessions(server_url):
    ready = threading.Barrier(5)
    jobs = [_expert_wins, _budget_truncates, _bad_actions_get_clear_errors, _same_seed_same_episode]
    results: dict[str, object] = {}

    def run(job):
        try:
            results[job.__name__] = job(server_url, ready)
        except BaseException as err:  # reported below with the job's name
            results[job.__name__] = err
            ready.abort()

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    ready.wait(timeout=120)  # all four sessions are open now: a fifth is refused
    with pytest.raises(RuntimeError, match="CAPACITY_REACHED"), RemoteSession(server_url) as fifth:
        fifth.reset(seed=0)
    for thread in threads:
        thread.join(timeout=300)
    failures = {name: result for name, result in results.items() if isinstance(result, BaseException)}
    assert not failures, failures

    won = results["_expert_wins"]
    assert won["obs"].won and won["obs"].terminated and not won["obs"].truncated and won["obs"].reward == 1.0
    assert won["obs"].text.endswith(f"[Episode over: task completed in {won['obs'].turn} turns.]")
    assert "Admissible actions: " in won["first_text"] and won["obs"].command == "take coin"
    assert won["state"].won and won["state"].done and won["state"].total_reward == 1.0 and won["state"].seed == 0
    assert isinstance(won["state"].episode_id, str) and len(won["state"].episode_id) == 32  # assigned: none given

    first, last = results["_budget_truncates"]["steps"]
    assert (first.turn, first.turns_left, first.done, first.matched) == (1, 1, False, True)
    assert (last.turn, last.truncated, last.terminated, last.done, last.won) == (2, True, False, True, False)

    runs = results["_same_seed_same_episode"]["runs"]
    assert runs[0] == runs[1] and len(runs[0][1]) == 4


def test_malformed_actions_on_the_wire_are_explained(server_url):
    from websockets.sync.client import connect

    with connect(server_url.replace("http://", "ws://") + "/ws", open_timeout=60) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
        ws.send(json.dumps({"type": "step", "data": {"cmd": "look"}}))
        error = json.loads(ws.recv(timeout=60))
        assert error["type"] == "error" and error["data"]["code"] == "VALIDATION_ERROR"
        problems = {(tuple(e["loc"]), e["type"]) for e in error["data"]["errors"]}
        assert (("command",), "missing") in problems and (("cmd",), "extra_forbidden") in problems
        ws.send(json.dumps({"type": "step", "data": {"command": 5}}))
        error = json.loads(ws.recv(timeout=60))
        assert error["data"]["errors"][0]["type"] == "string_type"
        ws.send(json.dumps({"type": "step", "data": {"command": "look"}}))
        observation = json.loads(ws.recv(timeout=60))["data"]
        assert observation["observation"]["turn"] == 1 and observation["done"] is False


def test_serve_refuses_bad_settings_before_serving(capsys):
    assert main(["serve", "WebShop-1kk-v0", "--port", "0"]) == 2
    assert "Did you mean 'agentgym_budget/WebShop-1k-v0'" in capsys.readouterr().err
    assert main(["serve", "WebShop-1k-v0", "--reward", "process", "--process-reward", "gama=1", "--port", "0"]) == 2
    assert "Did you mean 'gamma'" in capsys.readouterr().err
    assert main(["serve", "WebShop-1k-v0", "--budgets", "10,60", "--max-budget", "50", "--port", "0"]) == 2
    assert "max_budget 50 is below the budget the config serves (60)" in capsys.readouterr().err
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["serve", "WebShop-1k-v0", "--port", str(port)]) == 2
    assert f"Cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_an_episode_id_is_assigned_when_the_client_gives_none():
    from agentgym_budget.integrations.openenv import BudgetEnvironment
    from agentgym_budget.integrations.pool import SessionPool
    from agentgym_budget.integrations.session_config import SessionConfig

    pool = SessionPool(SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=1"))
    env = BudgetEnvironment(pool)
    try:
        env.reset(seed=0)
        first = env.state.episode_id
        env.reset(seed=0)
        second = env.state.episode_id
        env.reset(seed=0, episode_id="mine")
        assert isinstance(first, str) and first and second and first != second and env.state.episode_id == "mine"
    finally:
        env.close()
        pool.close()
