"""The Ray backend of the evaluation runner: same records as the local pool, resume, errors, Ctrl-C, flags.

Every test that runs jobs uses the session's local 2-CPU cluster (``tests/ray_support.py``); they are
slow (each starts its worker actors, ~2-4 s) and together take about a minute.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
import ray

from agentgym_budget._internal.install_hint import install_command
from agentgym_budget.cli.main import main
from agentgym_budget.errors import MissingDependencyError, WorkerError
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import PassKTJob, episode_key, plan_episodes, run_passkt
from agentgym_budget.eval.passkt.worker import close_worker_resources, play_job
from agentgym_budget.eval.probes.plan import ProbeConfig, probe_key, run_probe
from agentgym_budget.eval.recovery.config import RecoveryConfig
from agentgym_budget.eval.recovery.plan import recovery_key, run_recovery
from agentgym_budget.runner.pool import Emit, make_backend, run_jobs
from agentgym_budget.runner.ray_executor import RayBackend
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.runner.store import read_jsonl
from tests.ray_support import ray_cluster, wait_for_free_cpus

__all__ = ["ray_cluster"]

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")
COIN_CHAIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=10")
AGENTS = ("noisy-expert-recover:eps=0.5", "random")
NOISY = ("noisy-expert-recover", "noisy-expert-norecover")
TIMING = ("elapsed_s",)
"""Record fields that measure time, the only ones allowed to differ between backends."""

# The job functions below travel to the Ray workers by value: the workers need not import `tests`.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _stable(records: list[dict], key) -> list[str]:
    """Records without timing fields, as canonical JSON, sorted by their key (arrival order differs)."""
    kept = [{k: v for k, v in r.items() if k not in TIMING} for r in records]
    return [json.dumps(r, sort_keys=True) for r in sorted(kept, key=lambda r: repr(key(r)))]


def _die(job: int, emit: Emit) -> None:
    emit(job)
    time.sleep(2)  # time for the result to reach the driver
    os._exit(3)


class Interrupt:
    """``on_episode`` that presses Ctrl-C after ``after`` logged episodes."""

    def __init__(self, after: int) -> None:
        self.after, self.seen = after, 0

    def __call__(self, record: dict) -> None:
        self.seen += 1
        if self.seen == self.after:
            raise KeyboardInterrupt


# ------------------------------------------------------------------ without a cluster
def test_a_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(MissingDependencyError, match="'ray' package.*" + re.escape(install_command("ray"))):
        RayBackend().run(play_job, [1], workers=1, on_result=print, finalize=None)


def test_ray_flags_are_checked_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["passkt", "--env", "TextWorld-CoinCollector-v0", "--agent", "random", "--ray-address", "auto"]
    assert main([*args, "--out", str(tmp_path / "run")]) == 2
    assert "add --backend ray" in capsys.readouterr().err and not (tmp_path / "run").exists()
    with pytest.raises(SystemExit):
        main(["passkt", "--backend", "dask"])
    assert "invalid choice: 'dask'" in capsys.readouterr().err
    assert make_backend("ray", ray_address="auto") == RayBackend(address="auto")


# ------------------------------------------------------------------ on the session's cluster
@pytest.mark.slow
def test_passkt_on_ray_interrupted_and_resumed_equals_the_local_pool(ray_cluster, tmp_path: Path) -> None:
    grid = {"ks": (1, 2), "budgets": (3, 6), "samples": 2, "tasks": 3, "seed": 5}
    local = run_passkt(PassKTConfig(COIN, AGENTS, workers=1, **grid), tmp_path / "local", progress=False, plots=False)
    config = PassKTConfig(COIN, AGENTS, workers=2, **grid)
    out = tmp_path / "ray"
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C in the driver after 5 logged episodes
        run_passkt(config, out, progress=False, plots=False, on_episode=Interrupt(5), backend=RayBackend())
    assert len(read_jsonl(out / "episodes.jsonl")) == 5
    wait_for_free_cpus()  # the interrupted run's actors were killed
    resumed = run_passkt(config, out, progress=False, plots=False, backend=RayBackend())
    assert (resumed.played, resumed.reused) == (local.played - 5, 5) and local.played == 3 * 2 * 2 * 2
    ray_records, local_records = read_jsonl(out / "episodes.jsonl"), read_jsonl(tmp_path / "local" / "episodes.jsonl")
    assert _stable(ray_records, episode_key) == _stable(local_records, episode_key)
    assert len({repr(episode_key(r)) for r in ray_records}) == len(ray_records)  # nothing played twice
    summaries = [json.loads((d / "summary.json").read_text()) for d in (out, tmp_path / "local")]
    assert summaries[0] == summaries[1]


@pytest.mark.slow
def test_probe_and_recovery_commands_on_ray_equal_the_local_pool(
    ray_cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probe = ProbeConfig((COIN,), NOISY, states=2, samples=2, workers=1, resamples=100)
    run_probe(probe, tmp_path / "probe-local", progress=False, plots=False)
    recovery = RecoveryConfig((COIN_CHAIN,), NOISY, states=2, ks=(0, 1), budgets=(3,), samples=1, natural=1, workers=1)
    run_recovery(recovery, tmp_path / "recovery-local", progress=False, plots=False)

    common = ["--env", "TextWorld-CoinCollector-v0", "--agent", NOISY[0], "--agent", NOISY[1], "--states", "2"]
    common += ["--backend", "ray", "--workers", "2", "--no-progress", "--no-plots"]
    probe_args = ["probe", *common, "--env-args", "level=3", "--m", "2", "--bootstrap", "100"]
    assert main([*probe_args, "--out", str(tmp_path / "probe-ray")]) == 0
    recovery_args = ["recovery", *common, "--env-args", "level=10", "--k", "0,1", "--budgets", "3", "--n", "1"]
    assert main([*recovery_args, "--natural", "1", "--out", str(tmp_path / "recovery-ray")]) == 0
    assert capsys.readouterr().out.count("2 worker(s) (Ray actors on a local cluster)") == 2

    for name, log, key in (("probe", "probes.jsonl", probe_key), ("recovery", "episodes.jsonl", recovery_key)):
        on_ray = read_jsonl(tmp_path / f"{name}-ray" / log)
        assert on_ray and _stable(on_ray, key) == _stable(read_jsonl(tmp_path / f"{name}-local" / log), key), name
    for name in ("probe", "recovery"):
        first, second = (
            json.loads((tmp_path / f"{name}-{where}" / "summary.json").read_text()) for where in ("local", "ray")
        )
        assert first["agents"] == second["agents"], name


@pytest.mark.slow
def test_a_failing_job_or_a_dying_worker_is_a_worker_error_and_delivered_results_are_kept(ray_cluster) -> None:
    config = PassKTConfig(COIN, ["random"], ks=(1,), budgets=(2,), samples=2, tasks=1)
    task = config.resolve_tasks()[0]
    good = PassKTJob(COIN, "independent", False, task, tuple(plan_episodes(config, [task])))
    bad = PassKTJob(COIN, "independent", False, "no-such-task", tuple(plan_episodes(config, ["no-such-task"])))
    results: list = []
    with pytest.raises(WorkerError) as caught:  # one worker: the good job is played first
        run_jobs(
            play_job,
            [good, bad],
            workers=1,
            on_result=results.append,
            finalize=close_worker_resources,
            backend=RayBackend(),
        )
    message = str(caught.value)
    assert message.startswith(
        "Job task 'no-such-task' of TextWorld-CoinCollector-v0(level=3) (2 episodes) failed in a Ray worker"
    )
    assert "UnknownTaskError" in message and "no-such-task" in message.split("Cause:", 1)[1] and "\x1b[" not in message
    assert [(r["task_id"], r["sample"]) for r in results] == [(task, 0), (task, 1)]

    delivered: list = []
    with pytest.raises(WorkerError, match=r"The Ray worker playing job 7 died \(.*Error\); results delivered so far"):
        run_jobs(_die, [7], workers=1, on_result=delivered.append, backend=RayBackend())
    assert delivered == [7]
    wait_for_free_cpus()
