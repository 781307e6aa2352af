"""`report`: grids the logs support or a clear error, never a run's own files, outputs always consistent.

The logs are written here directly (records as `passkt` writes them), so these tests play no episode.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_budget.cli.main import main
from agentgym_budget.errors import DataError, RunConfigError
from agentgym_budget.eval.passkt.report import report

ENV = "agentgym_budget/TextWorld-CoinCollector-v0"


def _write_run(directory: Path, agent: str, budgets: list[int], samples: int, tasks: int = 5, **config: object) -> Path:
    """A run directory with a complete log: ``agent`` wins sample s of task t at budget T iff (s + t) * 10 < T."""
    directory.mkdir(parents=True)
    records = [
        {
            "agent": agent,
            "env_id": ENV,
            "env_kwargs": {"level": 3},
            "split": "train",
            "task_id": f"coin-l3-{t}",
            "mode": "independent",
            "show_budget": False,
            "budget": budget,
            "sample": s,
            "seed": 100 * t + s,
            "won": (s + t) * 10 < budget,
            "turns": budget,
            "success_turn": None,
            "actions": [],
        }
        for t in range(tasks)
        for budget in budgets
        for s in range(samples)
    ]
    (directory / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    settings = {"env_id": ENV, "agents": [agent], "ks": [1, 2, 4, 8], "budgets": budgets, "samples": samples}
    (directory / "run.json").write_text(json.dumps({**settings, **config}))
    (directory / "summary.json").write_text('{"the run": "own summary"}')
    return directory


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return _write_run(tmp_path / "run", "random", [10, 20], samples=4)


def test_a_budget_the_log_does_not_hold_is_an_error_saying_what_it_holds(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run), "--k", "1,3", "--t", "12,20", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "error: T=12 is not in the logs: random: T=10,20, 5 tasks, n=4." in err
    assert not (tmp_path / "r").exists()
    assert (run / "summary.json").read_text() == '{"the run": "own summary"}'


def test_k_above_the_samples_is_an_error_with_the_reason(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run), "--k", "1,8", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "K=8 needs at least 8 samples per task and budget" in err and "n=4" in err and "K <= 4" in err
    with pytest.raises(DataError, match="--n 6 asks for more samples than the logs hold"):
        report([run], tmp_path / "r", samples=6)


def test_runs_on_different_grids_use_the_common_grid_and_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wide = _write_run(tmp_path / "wide", "expert", [10, 15, 20, 30, 40], samples=8)
    narrow = _write_run(tmp_path / "narrow", "random", [10, 20], samples=4)
    assert main(["report", str(wide), str(narrow), "--out", str(tmp_path / "both"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "note: Using the budgets every agent has: T=10,20 (left out: T=15,30,40;" in out
    assert "note: Using K up to 4" in out and "left out: K=8" in out
    assert "0 tasks" not in out and "(5 tasks x 8 samples" in out and "(5 tasks x 4 samples" in out
    summary = json.loads((tmp_path / "both" / "summary.json").read_text())
    assert [a["tasks"] for a in summary["agents"]] == [5, 5]
    assert {(c["k"], c["t"]) for c in summary["agents"][1]["grid"]} == {(k, t) for k in (1, 2, 4) for t in (10, 20)}
    assert all(c["pass"] is not None for a in summary["agents"] for c in a["grid"])
    assert summary["config"]["notes"] and summary["differences"][0]["tasks"] == 5
    # Asked explicitly for a budget only one run holds: an error naming the run that lacks it.
    assert main(["report", str(wide), str(narrow), "--t", "30", "--out", str(tmp_path / "x")]) == 2
    assert "T=30 is not in the logs: random: T=10,20, 5 tasks, n=4." in capsys.readouterr().err


def test_runs_without_a_common_budget_are_an_error(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", "expert", [10], samples=2)
    b = _write_run(tmp_path / "b", "random", [20], samples=2)
    with pytest.raises(DataError, match=r"share no turn budget T.*expert: T=10.*random: T=20"):
        report([a, b], tmp_path / "out")


def test_a_log_without_a_task_complete_at_every_budget_is_an_error(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run", "random", [10], samples=2, tasks=1)
    first = json.loads((run / "episodes.jsonl").read_text().splitlines()[0])
    with open(run / "episodes.jsonl", "a") as log:  # an interrupted run: task 1 only has T=20
        log.write(json.dumps({**first, "task_id": "coin-l3-1", "budget": 20}) + "\n")
    for budgets in ([10, 20], None):
        with pytest.raises(DataError, match=r"No task has episodes at every budget T=10,20 for random") as caught:
            report([run], tmp_path / "out", budgets=budgets)
        assert "0 tasks" not in str(caught.value) and "random: T=10,20, 2 tasks, n=2" in str(caught.value)
    assert report([run], tmp_path / "out", budgets=[10], plots=False).summary.grids[0].tasks == ("coin-l3-0",)


def test_report_never_writes_into_a_run_unless_forced(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(run), "--no-plots"]) == 0
    (written,) = (tmp_path / "runs").iterdir()
    assert written.name.startswith("report-") and (written / "summary.json").exists()
    assert f"into {Path('runs') / written.name}" in capsys.readouterr().out
    assert (run / "summary.json").read_text() == '{"the run": "own summary"}'

    assert main(["report", str(run), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert "is a run directory" in err and "--force" in err
    assert (run / "summary.json").read_text() == '{"the run": "own summary"}'
    with pytest.raises(RunConfigError, match="pass --force"):
        report([run], run)
    assert main(["report", str(run), "--out", str(run), "--force", "--no-plots"]) == 0
    assert json.loads((run / "summary.json").read_text())["agents"][0]["agent"] == "random"


@pytest.mark.slow
def test_the_files_of_one_report_always_belong_together(tmp_path: Path) -> None:
    expert = _write_run(tmp_path / "expert", "expert", [10, 20], samples=4)
    rand = _write_run(tmp_path / "random", "random", [10, 20], samples=4)
    out = tmp_path / "out"
    report([expert, rand], out, resamples=100)
    names = {p.name for p in out.iterdir()}
    assert {"difference.csv", "difference.png", "heatmap.png", "passk_vs_K.png", "success_vs_T.png"} <= names

    report([rand], out, resamples=100, plots=False)  # one agent, no plots: nothing of the first report stays
    assert {p.name for p in out.iterdir() if not p.name.startswith(".")} == {"summary.json", "summary.csv"}
    assert [p.name for p in out.iterdir() if p.name.startswith(".outputs")] == []
    assert [a["agent"] for a in json.loads((out / "summary.json").read_text())["agents"]] == ["random"]


def test_report_reads_logs_of_older_versions_without_a_split(tmp_path: Path) -> None:
    old = _write_run(tmp_path / "old", "expert", [10], samples=2)
    lines = [{**json.loads(line), "split": None} for line in (old / "episodes.jsonl").read_text().splitlines()]
    (old / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    new = _write_run(tmp_path / "new", "random", [10], samples=2)
    result = report([old, new], tmp_path / "out", plots=False, resamples=100)
    assert [g.label for g in result.summary.grids] == ["expert", "random"]  # one env configuration
    assert len(result.summary.differences) == 1
