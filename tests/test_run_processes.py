"""Run processes: workers die with their parent, one writer per output directory, log lines named."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentgym_budget.cli.main import main
from agentgym_budget.errors import DataError, RunConfigError
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import run_passkt
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.runner.run_lock import lock_directory

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")
LONG_RUN = ["--env", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--agent", "random", "--tasks", "40"]
LONG_RUN += ["--n", "8", "--k", "1", "--t", "10,20,30,40", "--workers", "2", "--no-progress", "--no-plots"]

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to find the workers")


def _children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, ppid = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, IndexError, ValueError):
            continue
        if int(ppid) == pid and state != "Z":
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _wait(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {seconds:.0f} s")
        time.sleep(0.2)


@linux_only
@pytest.mark.slow
def test_kill_9_of_a_cli_run_ends_its_workers_and_leaves_no_blocking_lock(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [sys.executable, "-m", "agentgym_budget.cli", "passkt", *LONG_RUN, "--out", str(out)]
    parent = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        log = out / "episodes.jsonl"
        _wait(lambda: log.exists() and log.stat().st_size > 0, 240, "the first logged episode")
        workers = _children(parent.pid)
        assert len(workers) >= 2, workers  # two workers (and multiprocessing's resource tracker)

        # A second run into the same directory is refused while the first one writes there.
        second = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert second.returncode == 2
        assert f"is in use by another command (passkt, pid {parent.pid})" in second.stderr

        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        _wait(lambda: not any(_alive(w) for w in workers), 20, f"workers {workers} to exit after kill -9 of the parent")
    finally:
        if parent.poll() is None:
            parent.kill()

    # The lock file is still there, but the lock died with its process: a rerun resumes.
    assert (out / ".lock").exists()
    logged = log.read_text().count("\n")
    config = PassKTConfig(COIN, ["random"], ks=(1,), budgets=(10,), samples=2, tasks=1, workers=1)
    resumed = run_passkt(config, out, progress=False, plots=False)
    assert resumed.played + resumed.reused == 2
    records = [json.loads(line) for line in log.read_text().splitlines()]
    keys = [(r["task_id"], r["budget"], r["sample"]) for r in records]
    assert len(keys) == len(set(keys)) >= logged


@pytest.mark.slow
def test_a_second_writer_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from agentgym_budget.runner.run_lock import lock_directory\n"
            "with lock_directory(sys.argv[1], 'probe'):\n"
            "    print('locked', flush=True); time.sleep(60)\n",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with (
            pytest.raises(RunConfigError, match=rf"in use by another command \(probe, pid {holder.pid}\)"),
            lock_directory(tmp_path, "passkt"),
        ):
            pass
        config = PassKTConfig(COIN, ["random"], ks=(1,), budgets=(2,), samples=1, tasks=1, workers=1)
        with pytest.raises(RunConfigError, match="in use by another command"):
            run_passkt(config, tmp_path, progress=False, plots=False)
        assert not (tmp_path / "episodes.jsonl").exists()
    finally:
        holder.kill()
        holder.wait()
    with lock_directory(tmp_path, "passkt"):  # released by the kernel when the holder died
        pass


def _episode(**fields: object) -> dict:
    record = {"agent": "random", "env_id": COIN.env_id, "env_kwargs": {"level": 3}, "split": "train"}
    record |= {"task_id": "coin-l3-0", "mode": "independent", "show_budget": False, "budget": 2, "sample": 0}
    record |= {"seed": 1, "won": False, "turns": 2, "success_turn": None, "actions": ["look", "look"]}
    return {**record, **fields}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"agent": "random", "won": True}, "field 'env_id' is missing"),
        (_episode(budget="x"), "field 'budget' is 'x'; expected a positive integer"),
        (_episode(seed=-5), "field 'seed' is -5"),
        (_episode(sample=None), "field 'sample' is None"),
        (_episode(won="yes"), "field 'won' is not true/false"),
    ],
)
def test_a_log_line_without_key_fields_is_named_by_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: dict, problem: str
) -> None:
    log = tmp_path / "run" / "episodes.jsonl"
    log.parent.mkdir()
    log.write_text("\n".join(json.dumps(r) for r in [_episode(), _episode(sample=1), line]) + "\n")
    config = PassKTConfig(COIN, ["random"], ks=(1,), budgets=(2,), samples=1, tasks=1, workers=1)
    with pytest.raises(DataError, match=rf"episodes.jsonl:3 is not a usable record: {problem}"):
        run_passkt(config, log.parent, progress=False, plots=False)
    assert main(["report", str(log.parent), "--out", str(tmp_path / "report")]) == 2
    assert f"episodes.jsonl:3 is not a usable record: {problem}" in capsys.readouterr().err
