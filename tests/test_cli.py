"""The agentgym-budget command line, run in-process."""

from __future__ import annotations

import io
import json
from importlib import metadata
from pathlib import Path

import pytest

from agentgym_budget.cli import cmd_passkt
from agentgym_budget.cli.main import build_parser, main
from agentgym_budget.eval.passkt import DEFAULT_BUDGETS, DEFAULT_KS
from agentgym_budget.eval.rollout import EnvRef

TINY = ["--env", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--tasks", "1", "--n", "2", "--k", "1,2"]
TINY += ["--t", "2,6", "--workers", "1", "--no-progress"]


def test_console_script_is_declared() -> None:
    scripts = {e.name: e.value for e in metadata.entry_points(group="console_scripts")}
    assert scripts.get("agentgym-budget") == "agentgym_budget.cli.main:main"


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "agentgym_budget/TextWorld-Cooking-v0" in out and "textworld" in out and "train,valid,test" in out
    assert "noisy-expert-norecover" in out and "openai:MODEL" in out
    assert main(["list", "--family", "nope", "--envs"]) == 0
    assert "none for family 'nope'" in capsys.readouterr().out


def test_passkt_defaults_are_the_main_job() -> None:
    args = build_parser().parse_args(["passkt"])
    assert args.k == DEFAULT_KS == (1, 2, 4, 8) and args.t == DEFAULT_BUDGETS
    assert (args.n, args.tasks, args.mode, args.workers, args.seed, args.show_budget) == (
        8,
        20,
        "independent",
        2,
        0,
        False,
    )
    assert args.env is None and args.agent is None and args.out is None
    assert cmd_passkt.DEFAULT_AGENTS == ("noisy-expert-recover", "noisy-expert-norecover")
    assert (
        EnvRef.parse(cmd_passkt.DEFAULT_ENV, cmd_passkt.DEFAULT_ENV_ARGS).label
        == "TextWorld-CoinCollector-v0(level=110)"
    )
    assert str(cmd_passkt.default_out()).startswith("runs/passkt-")


def test_passkt_then_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["passkt", *TINY, "--agent", "noisy-expert-recover:eps=0.2", "--agent", "random", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Pass@(K,T)" in printed and "noisy-expert-recover:eps=0.2  minus  random" in printed
    assert "8 episodes played, 0 reused" in printed
    for name in ("episodes.jsonl", "run.json", "summary.json", "summary.csv", "difference.csv"):
        assert (out / name).stat().st_size > 0, name
    for name in ("heatmap.png", "success_vs_T.png", "passk_vs_K.png", "difference.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG" and (out / name).stat().st_size > 5000, name
    assert main(argv) == 0
    assert "0 episodes played, 8 reused" in capsys.readouterr().out

    (out / "heatmap.png").unlink()
    assert main(["report", str(out)]) == 0
    report = capsys.readouterr().out
    assert "T=2" in report and "K=2" in report and "minus" in report
    assert (out / "heatmap.png").stat().st_size > 5000
    combined = tmp_path / "combined"
    assert main(["report", str(out), str(out), "--out", str(combined), "--k", "1", "--no-plots"]) == 0
    summary = json.loads((combined / "summary.json").read_text())
    assert [cell["k"] for cell in summary["agents"][0]["grid"]] == [1, 1]
    assert not (combined / "heatmap.png").exists()


def test_errors_are_one_line_with_exit_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["passkt", *TINY, "--mode", "prefix", "--show-budget", "--out", str(tmp_path / "a")]) == 2
    assert "error: prefix mode reads every budget" in capsys.readouterr().err
    assert main(["passkt", *TINY, "--agent", "randm", "--out", str(tmp_path / "b")]) == 2
    assert "Did you mean 'random'" in capsys.readouterr().err
    assert main(["passkt", *TINY, "--env", "TextWorld-Coin-v0", "--out", str(tmp_path / "c")]) == 2
    assert "Unknown environment id" in capsys.readouterr().err
    assert main(["report", str(tmp_path), str(tmp_path)]) == 2
    assert "needs --out" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "has no episodes.jsonl" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["passkt", "--k", "1,x"])


def test_play_a_game_to_the_end(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ref = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")
    env = ref.make({"expert_plan"})
    _, info = env.reset(seed=0, options={"task": 0, "max_turns": 10})
    env.close()
    keys = [":actions", ":hint", ":help", *info["expert_plan"], "look"]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(keys) + "\n"))
    argv = ["play", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--task", "0", "--budget", "10", "--hints"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "task coin-l3-0" in out and "[Turns left: 10 of 10]" in out and "Admissible: " in out
    assert f"Hint: {info['expert_plan'][0]}" in out
    assert f"*** You won in {len(info['expert_plan'])} turns. ***" in out


def test_play_runs_out_of_turns_and_quits(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("look\nlook\n"))
    assert main(["play", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--task", "0", "--budget", "2"]) == 0
    out = capsys.readouterr().out
    assert "*** Out of turns (2 of 2). ***" in out
    monkeypatch.setattr("sys.stdin", io.StringIO(":hint\n:quit\n"))
    assert main(["play", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--task", "coin-l3-0"]) == 0
    assert "No hint" in capsys.readouterr().out
