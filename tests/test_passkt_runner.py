"""The Pass@(K,T) runner: logs, parallel jobs, modes, determinism, resume after a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgym_budget.agents import RandomAgent, register_agent, unregister_agent
from agentgym_budget.errors import DataError, InvalidBudgetError, InvalidOptionError, RunConfigError, WorkerError
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import episode_key, plan_episodes, run_passkt
from agentgym_budget.runner.pool import Emit, run_jobs
from agentgym_budget.runner.rollout import EnvRef, episode_turn_outcome
from agentgym_budget.runner.store import JsonlStore, atomic_write_text, read_jsonl

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")
AGENTS = ("noisy-expert-recover:eps=0.5", "random")
VOLATILE = ("elapsed_s",)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / "episodes.jsonl").read_text().splitlines()]


def _stable(records: list[dict]) -> list[dict]:
    return sorted(
        ({k: v for k, v in r.items() if k not in VOLATILE} for r in records), key=lambda r: repr(episode_key(r))
    )


# ------------------------------------------------------------------ store
def test_store_repairs_a_cut_line_and_never_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with JsonlStore(path, key=lambda r: r["id"]) as store:
        assert store.append({"id": 1}) and store.append({"id": 2})
        assert not store.append({"id": 1})
    with open(path, "a") as handle:
        handle.write('{"id": 3, "x"')
    assert [r["id"] for r in read_jsonl(path)] == [1, 2]  # reading skips the cut line without touching it
    assert path.read_text().endswith('"x"')
    with JsonlStore(path, key=lambda r: r["id"]) as store:
        assert store.keys == {1, 2}
        assert store.append({"id": 3})
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == [1, 2, 3]


def test_store_rejects_corruption_in_the_middle(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"id": 1}\nnot json\n{"id": 2}\n')
    with pytest.raises(DataError, match=r"log.jsonl:2 is not valid JSON"):
        JsonlStore(path, key=lambda r: r["id"])
    path.write_text("[1, 2]\n")
    with pytest.raises(DataError, match="not a JSON object"):
        read_jsonl(path)


def test_atomic_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    target = atomic_write_text(tmp_path / "summary.json", "{}")
    atomic_write_text(target, '{"a": 1}')
    assert target.read_text() == '{"a": 1}' and [p.name for p in tmp_path.iterdir()] == ["summary.json"]


# ------------------------------------------------------------------ pool
def _job(job: int, emit: Emit) -> None:
    if job < 0:
        raise ValueError(f"job {job} is broken")
    for i in range(job):
        emit((job, i))


@pytest.mark.slow
def test_pool_streams_every_result_from_worker_processes() -> None:
    results: list = []
    run_jobs(_job, [3, 1, 4, 2], workers=2, on_result=results.append)
    assert sorted(results) == sorted((j, i) for j in (3, 1, 4, 2) for i in range(j))


@pytest.mark.slow
def test_pool_reports_the_failing_job() -> None:
    results: list = []
    with pytest.raises(WorkerError, match=r"Job -1 failed in a worker process.*ValueError: job -1 is broken"):
        run_jobs(_job, [2, -1], workers=2, on_result=results.append)
    with pytest.raises(ValueError, match="broken"):
        run_jobs(_job, [-1], workers=1, on_result=results.append)


_HELD_LOCKS: list = []


def _job_holding_a_lock(job: int, emit: Emit) -> None:
    """Like a worker whose libraries make locks (tqdm does): a terminated worker leaks them."""
    import multiprocessing

    _HELD_LOCKS.append(multiprocessing.get_context("spawn").Lock())
    emit(job)


def _slow_finalize() -> None:
    time.sleep(0.5)
    Path(os.environ["FINALIZE_MARKERS"], str(os.getpid())).write_text("done")


@pytest.mark.slow
def test_pool_workers_finish_their_cleanup_after_the_last_job(tmp_path: Path) -> None:
    """Every worker runs ``finalize`` to its end and exits by itself: nothing leaked at shutdown."""
    script = (
        "from tests.test_passkt_runner import _job_holding_a_lock, _slow_finalize\n"
        "from agentgym_budget.runner.pool import run_jobs\n"
        "run_jobs(_job_holding_a_lock, [1, 2, 3, 4], workers=2, on_result=print, finalize=_slow_finalize)\n"
    )
    env = {**os.environ, "FINALIZE_MARKERS": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == ["1", "2", "3", "4"]
    assert len(list(tmp_path.iterdir())) == 2, "a worker was stopped before its finalize ended"
    assert "leaked" not in done.stderr, done.stderr


# ------------------------------------------------------------------ configuration
def test_prefix_mode_is_refused_when_the_budget_is_shown() -> None:
    with pytest.raises(RunConfigError, match=r"only valid when the agent cannot see its budget.*independent"):
        PassKTConfig(COIN, ["random"], mode="prefix", show_budget=True)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"ks": (1, 16)}, RunConfigError, "K=16 needs at least 16 samples"),
        ({"mode": "both"}, RunConfigError, "Unknown mode"),
        ({"budgets": (0, 5)}, InvalidBudgetError, "Invalid turn budget 0"),
        ({"agents": ("random", "random")}, InvalidOptionError, "listed twice"),
        ({"agents": ()}, InvalidOptionError, "at least one agent"),
        ({"workers": 0}, InvalidOptionError, "workers"),
        ({"resamples": 50}, InvalidOptionError, "at least 100 resamples"),
        ({"confidence": 95}, InvalidOptionError, r"confidence must be in \(0, 1\)"),
    ],
)
def test_invalid_configurations(kwargs: dict, error: type[Exception], match: str) -> None:
    settings = {"agents": ("random",), **kwargs}
    with pytest.raises(error, match=match):
        PassKTConfig(COIN, **settings)


def test_interval_options_are_checked_before_any_episode_is_played() -> None:
    from agentgym_budget.eval.probes.plan import ProbeConfig
    from agentgym_budget.eval.recovery.config import RecoveryConfig

    for config in (ProbeConfig, RecoveryConfig):
        with pytest.raises(InvalidOptionError, match="at least 100 resamples"):
            config((COIN,), ("random",), resamples=10)


def test_plan_covers_the_grid_with_seeds_shared_across_budgets_and_agents() -> None:
    config = PassKTConfig(COIN, AGENTS, ks=(1, 2), budgets=(2, 4), samples=2, tasks=2)
    plans = plan_episodes(config, ("a", "b"))
    assert len(plans) == 2 * 2 * 2 * 2
    seeds = {(p.task_id, p.sample): set() for p in plans}
    for plan in plans:
        seeds[(plan.task_id, plan.sample)].add(plan.seed)
    assert all(len(s) == 1 for s in seeds.values()) and len({s.pop() for s in seeds.values()}) == 4
    prefix = PassKTConfig(COIN, AGENTS, ks=(1, 2), budgets=(2, 4), samples=2, tasks=2, mode="prefix")
    assert {p.budget for p in plan_episodes(prefix, ("a",))} == {4}


# ------------------------------------------------------------------ modes, determinism, outputs
@pytest.mark.slow
def test_independent_and_prefix_modes_give_identical_episode_outcomes(tmp_path: Path) -> None:
    grid = {"ks": (1, 2), "budgets": (2, 3, 5, 9), "samples": 3, "tasks": 2, "workers": 1}
    independent = run_passkt(PassKTConfig(COIN, AGENTS, **grid), tmp_path / "ind", progress=False, plots=False)
    prefix = run_passkt(
        PassKTConfig(COIN, AGENTS, mode="prefix", **grid), tmp_path / "pre", progress=False, plots=False
    )
    by_slot = {(r["agent"], r["task_id"], r["sample"]): r for r in _records(tmp_path / "pre")}
    compared = 0
    outcomes = set()
    for record in _records(tmp_path / "ind"):
        long_run = by_slot[(record["agent"], record["task_id"], record["sample"])]
        expected = episode_turn_outcome(long_run, record["budget"])
        assert (record["won"], record["turns"], record["return"]) == expected
        assert record["actions"] == long_run["actions"][: record["turns"]]
        outcomes.add(record["won"])
        compared += 1
    assert compared == 2 * 2 * 4 * 3 and outcomes == {True, False}
    assert (independent.summary.grids[0].estimate == prefix.summary.grids[0].estimate).all()
    assert all(r["success_turn"] is None or r["won"] for r in _records(tmp_path / "pre"))


@pytest.mark.slow
def test_same_command_and_seed_give_the_same_results_serial_or_parallel(tmp_path: Path) -> None:
    grid = {"ks": (1, 2), "budgets": (3, 6), "samples": 2, "tasks": 2, "seed": 5}
    run_passkt(PassKTConfig(COIN, AGENTS, workers=1, **grid), tmp_path / "a", progress=False, plots=False)
    run_passkt(PassKTConfig(COIN, AGENTS, workers=2, **grid), tmp_path / "b", progress=False, plots=False)
    first, second = _stable(_records(tmp_path / "a")), _stable(_records(tmp_path / "b"))
    assert first == second and len(first) == 16
    summary_a = json.loads((tmp_path / "a" / "summary.json").read_text())
    summary_b = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary_a == summary_b
    other = PassKTConfig(COIN, AGENTS, workers=1, **{**grid, "seed": 6})
    run_passkt(other, tmp_path / "c", progress=False, plots=False)
    assert {r["seed"] for r in _records(tmp_path / "c")}.isdisjoint({r["seed"] for r in first})


@pytest.mark.slow
def test_records_summaries_and_plots(tmp_path: Path) -> None:
    config = PassKTConfig(COIN, AGENTS, ks=(1, 2), budgets=(2, 6), samples=2, tasks=1, workers=1)
    result = run_passkt(config, tmp_path, progress=False)
    record = _records(tmp_path)[0]
    required = {"agent", "env_id", "task_id", "budget", "sample", "seed", "won", "turns", "return", "success_turn"}
    assert required <= set(record)
    assert record["env_id"] == "agentgym_budget/TextWorld-CoinCollector-v0" and record["env_kwargs"] == {"level": 3}
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [a["agent"] for a in summary["agents"]] == ["noisy-expert-recover:eps=0.5", "random"]
    assert len(summary["agents"][0]["grid"]) == 4 and summary["differences"][0]["first"] == AGENTS[0]
    assert "1 - C(n-c,K)/C(n,K)" in summary["definition"]
    csv_lines = (tmp_path / "summary.csv").read_text().splitlines()
    assert csv_lines[0].startswith("agent,env_id,mode,show_budget,k,t,pass_at_k,ci_low,ci_high") and len(csv_lines) == 9
    for name in ("heatmap.png", "success_vs_T.png", "passk_vs_K.png", "difference.png"):
        data = (tmp_path / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 5000, name
    assert {p.name for p in result.files} >= {"summary.json", "summary.csv", "difference.csv", "heatmap.png"}


class BudgetProbe(RandomAgent):
    """Random agent that reports what it was told about its budget."""

    def reset(self, goal, observation, info, *, seed, budget=None):  # type: ignore[no-untyped-def]
        super().reset(goal, observation, info, seed=seed, budget=budget)
        self.seen = {"budget": budget, "info_keys": sorted(info), "notice": "Turns left" in observation}

    def stats(self) -> dict:
        return self.seen


@pytest.fixture
def budget_probe() -> Iterator[str]:
    register_agent("budget-probe", BudgetProbe, description="test agent")
    yield "budget-probe"
    unregister_agent("budget-probe")


@pytest.mark.parametrize("show", [False, True])
def test_show_budget_reaches_the_agent_only_when_asked(tmp_path: Path, show: bool, budget_probe: str) -> None:
    config = PassKTConfig(COIN, [budget_probe], ks=(1,), budgets=(3,), samples=1, tasks=1, workers=1, show_budget=show)
    run_passkt(config, tmp_path, progress=False, plots=False)
    record = _records(tmp_path)[0]
    seen = record["agent_stats"]
    assert record["show_budget"] is show
    assert seen["budget"] == (3 if show else None) and seen["notice"] is show
    assert ("turns_left" in seen["info_keys"]) is show and ("max_turns" in seen["info_keys"]) is show


# ------------------------------------------------------------------ resume
def test_rerun_resumes_extends_and_refuses_other_settings(tmp_path: Path) -> None:
    grid = {"ks": (1,), "budgets": (2, 4), "samples": 2, "tasks": 1, "workers": 1}
    first = run_passkt(PassKTConfig(COIN, AGENTS, **grid), tmp_path, progress=False, plots=False)
    assert (first.played, first.reused) == (8, 0)
    again = run_passkt(PassKTConfig(COIN, AGENTS, **grid), tmp_path, progress=False, plots=False)
    assert (again.played, again.reused) == (0, 8)
    wider = run_passkt(
        PassKTConfig(COIN, AGENTS, **{**grid, "budgets": (2, 4, 6), "samples": 3}),
        tmp_path,
        progress=False,
        plots=False,
    )
    assert (wider.played, wider.reused) == (18 - 8, 8)
    assert len({episode_key(r) for r in _records(tmp_path)}) == len(_records(tmp_path)) == 18
    with pytest.raises(RunConfigError, match=r"seed: 0 -> 1"):
        run_passkt(PassKTConfig(COIN, AGENTS, **{**grid, "seed": 1}), tmp_path, progress=False, plots=False)


@pytest.mark.slow
def test_resume_after_the_run_is_killed(tmp_path: Path) -> None:
    """SIGKILL a real CLI run (parent and workers) mid-way, cut its last line, rerun: no loss, no duplicate."""
    out, clean = tmp_path / "killed", tmp_path / "clean"
    args = ["passkt", "--env", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--tasks", "2"]
    args += ["--agent", "noisy-expert-recover:eps=0.5", "--agent", "noisy-expert-norecover:eps=0.5"]
    args += ["--k", "1,2", "--t", "5,10,20,40", "--n", "6", "--workers", "2", "--no-plots", "--no-progress"]
    planned = 2 * 2 * 4 * 6
    process = subprocess.Popen(
        [sys.executable, "-m", "agentgym_budget.cli", *args, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    log = out / "episodes.jsonl"
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if log.exists() and log.read_bytes().count(b"\n") >= 10:
                break
            time.sleep(0.02)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    before = log.read_bytes()
    assert 10 <= before.count(b"\n") < planned, "the run was not interrupted mid-way"
    with open(log, "ab") as handle:
        handle.write(b'{"agent": "noisy-expert-recover:eps=0.5", "env_id": "agentgym_bu')  # a write cut by the kill
    from agentgym_budget.cli.main import main

    assert main([*args, "--out", str(out)]) == 0
    resumed = _records(out)
    assert len(resumed) == planned == len({episode_key(r) for r in resumed})
    kept = [json.loads(line) for line in before.splitlines() if line.strip()]
    assert resumed[: len(kept)] == kept
    assert main([*args, "--workers", "1", "--out", str(clean)]) == 0
    assert _stable(resumed) == _stable(_records(clean))
