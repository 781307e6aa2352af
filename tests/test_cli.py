"""The agentgym-budget command line, run in-process."""

from __future__ import annotations

import io
import json
from importlib import metadata
from pathlib import Path

import pytest

from agentgym_budget.cli import cmd_passkt, cmd_study, cmd_train
from agentgym_budget.cli.main import build_parser, main
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.eval.passkt.config import DEFAULT_BUDGETS, DEFAULT_KS
from agentgym_budget.runner.rollout import EnvRef

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


def test_passkt_defaults_are_the_main_job() -> None:
    args = build_parser().parse_args(["passkt"])
    assert cmd_passkt.breadths(args) == DEFAULT_KS == (1, 2, 4, 8) and args.budgets == DEFAULT_BUDGETS
    assert cmd_passkt.breadths(build_parser().parse_args(["passkt", "--n", "4"])) == (1, 2, 4)  # K <= n by default
    assert (args.n, args.tasks, args.mode, args.workers, args.seed, args.show_budget) == (
        8,
        20,
        "independent",
        2,
        0,
        False,
    )
    assert args.env is None and args.agent is None and args.out is None and args.streams == "common"
    assert cmd_passkt.DEFAULT_AGENTS == ("noisy-expert-recover", "noisy-expert-norecover")
    assert (
        EnvRef.parse(cmd_passkt.DEFAULT_ENV, cmd_passkt.DEFAULT_ENV_ARGS).label
        == "TextWorld-CoinCollector-v0(level=110)"
    )
    assert str(cmd_passkt.default_out()).startswith("runs/passkt-")


@pytest.mark.slow
def test_passkt_streams_pair_the_agents_unless_asked_for_independent_ones(tmp_path: Path) -> None:
    def seeds(streams: str) -> dict[str, list[int]]:
        out = tmp_path / streams
        agents = ["--agent", "noisy-expert-recover:eps=0.2", "--agent", "random"]
        assert main(["passkt", *TINY, *agents, "--streams", streams, "--out", str(out)]) == 0
        by_agent: dict[str, list[int]] = {}
        for line in (out / "episodes.jsonl").read_text().splitlines():
            record = json.loads(line)
            by_agent.setdefault(record["agent"], []).append(record["seed"])
        assert json.loads((out / "run.json").read_text()).get("streams", "common") == streams
        return by_agent

    common, independent = seeds("common"), seeds("independent")
    assert len(common) == len(independent) == 2
    assert len({tuple(sorted(v)) for v in common.values()}) == 1
    assert not set.intersection(*(set(v) for v in independent.values()))


@pytest.mark.slow
def test_passkt_then_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["passkt", *TINY, "--agent", "noisy-expert-recover:eps=0.2", "--agent", "random", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Pass@(K,T)" in printed and "noisy-expert-recover:eps=0.2  minus  random" in printed
    assert "8 episodes played, 0 reused" in printed
    assert printed.rstrip().splitlines()[-1] == (
        f"Next, open {out / 'difference.png'}: where the first agent's advantage lives in the (K, T) plane."
    )
    for name in ("episodes.jsonl", "run.json", "summary.json", "summary.csv", "difference.csv"):
        assert (out / name).stat().st_size > 0, name
    # The split actually used is recorded (the env's default), not null.
    assert json.loads((out / "run.json").read_text())["split"] == "train"
    assert {json.loads(line)["split"] for line in (out / "episodes.jsonl").read_text().splitlines()} == {"train"}
    for name in ("heatmap.png", "success_vs_T.png", "passk_vs_K.png", "difference.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG" and (out / name).stat().st_size > 5000, name
    assert main(argv) == 0
    assert "0 episodes played, 8 reused" in capsys.readouterr().out

    (out / "heatmap.png").unlink()
    assert main(["report", str(out), "--out", str(out), "--force"]) == 0
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
    assert main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "report")]) == 2
    assert "has no episodes.jsonl" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["passkt", "--k", "1,x"])


def test_sigterm_runs_the_commands_cleanup_and_exits_143(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse
    import importlib
    import os
    import signal
    import time

    cli_main = importlib.import_module("agentgym_budget.cli.main")
    cleaned = []

    def handler(args: argparse.Namespace) -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            return 0
        finally:
            cleaned.append(True)

    monkeypatch.setattr(cli_main, "parse_arguments", lambda argv: argparse.Namespace(handler=handler))
    before = signal.getsignal(signal.SIGTERM)
    began = time.perf_counter()
    assert cli_main.main([]) == 143
    assert time.perf_counter() - began < 4 and cleaned == [True]
    assert capsys.readouterr().err.strip() == "terminated"
    assert signal.getsignal(signal.SIGTERM) is before  # restored for whoever called main() in-process


def test_play_a_game_to_the_end(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ref = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")
    env = ref.make({"expert_plan"})
    _, info = env.reset(seed=0, options={"task": 0, "max_turns": 10})
    env.close()
    keys = [":actions", ":acton", ":hint", ":help", *info["expert_plan"], "look"]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(keys) + "\n"))
    argv = ["play", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--task", "0", "--budget", "10", "--hints"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "task coin-l3-0" in out and "[Turns left: 10 of 10]" in out and "Admissible: " in out
    assert f"Hint: {info['expert_plan'][0]}" in out
    assert f"*** You won in {len(info['expert_plan'])} turns. ***" in out  # the misspelled ':acton' spent no turn
    assert "Unknown meta-command ':acton'. Did you mean ':actions'?" in out
    assert out.split("\n> ", 1)[0].count(info["goal"]) == 1  # the goal once at reset


def test_play_runs_out_of_turns_and_quits(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("look\nlook\n"))
    assert main(["play", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--task", "0", "--budget", "2"]) == 0
    out = capsys.readouterr().out
    assert "*** Out of turns (2 of 2). ***" in out
    monkeypatch.setattr("sys.stdin", io.StringIO(":hint\n:quit\n"))
    assert main(["play", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--task", "coin-l3-0"]) == 0
    assert "No hint" in capsys.readouterr().out


# ------------------------------------------------------------------ issue 13: errors of a careless user
@pytest.mark.parametrize(
    "argv",
    [
        ["passkt", "--env-args", "levle=110"],
        ["probe", "--env-args", "levle=110"],
        ["recovery", "--env", "TextWorld-CoinCollector-v0", "--env-args", "levle=110"],
        ["play", "TextWorld-CoinCollector-v0", "--env-args", "levle=110"],
    ],
)
def test_a_misspelt_env_argument_lists_the_valid_ones(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = ["--out", str(tmp_path / "run")] if argv[0] != "play" else []
    assert main([*argv, *out]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: TextWorld-CoinCollector-v0 has no argument 'levle'. Did you mean 'level'?")
    assert "Its arguments: level (default 5), progress (default 'plan'), split (default 'train')" in err
    assert "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_a_required_env_argument_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "TextWorld-File-v0"]) == 2
    assert "TextWorld-File-v0 needs the argument 'path' (--env-args path=...)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("noisy-expert-recover:eps=1.5", "eps=1.5 is out of range: expected a number in [0, 1]"),
        ("noisy-expert-norecover:eps=-0.1", "eps=-0.1 is out of range"),
        ("openai:m:timeout=0", "timeout=0 is out of range: expected a number > 0"),
        ("openai:m:top_p=1.5", "top_p=1.5 is out of range: expected a number in (0, 1]"),
        ("openai:m:template=/no/such/template.json", "Cannot read the prompt template /no/such/template.json"),
    ],
)
@pytest.mark.parametrize("command", ["passkt", "probe", "recovery"])
def test_agent_parameters_are_checked_before_anything_is_written(
    command: str, agent: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--agent", agent, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: agent {agent!r}: ") and message in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_an_unknown_flag_shows_the_subcommands_usage_and_the_closest_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["passkt", "--workerz", "3", "--k", "1"])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert err.startswith("usage: agentgym-budget passkt [-h]")
    assert (
        "agentgym-budget passkt: error: unrecognized arguments: --workerz 3 (--workerz: did you mean '--workers'?)"
        in err
    )
    with pytest.raises(SystemExit):
        main(["report", "runs/x", "--forse"])
    err = capsys.readouterr().err
    assert err.startswith("usage: agentgym-budget report") and "did you mean '--force'" in err


BUDGET_LIST_COMMANDS = {
    "passkt": [],
    "report": ["runs/x"],
    "recovery": [],
    "train": ["--recipe", "budgetmix", "--out", "x"],
    "study": ["--out", "x"],
    "serve": ["WebShop-1k-v0"],
    "export-dataset": ["WebShop-1k-v0", "--episodes", "2", "-o", "x.parquet"],
}


@pytest.mark.parametrize("command", sorted(BUDGET_LIST_COMMANDS))
def test_every_command_takes_its_budgets_as_budgets_or_t(command: str) -> None:
    """One vocabulary: ``--budgets 10,20`` and ``--t 10,20`` are the same flag wherever a command takes budgets."""
    parser = build_parser()
    prefix = [command, *BUDGET_LIST_COMMANDS[command]]
    assert parser.parse_args([*prefix, "--budgets", "10,20"]).budgets == (10, 20)
    assert parser.parse_args([*prefix, "--t", "10,20"]).budgets == (10, 20)
    [sub] = [a for a in parser._actions if a.dest == "command"]
    assert "--budgets T,..., --t T,..." in sub.choices[command].format_help()


def test_the_commands_without_a_budget_list_name_no_synonym() -> None:
    commands = {name for name, _ in build_parser()._subparsers._group_actions[0].choices.items()}
    for command in commands - set(BUDGET_LIST_COMMANDS):
        help_text = build_parser()._subparsers._group_actions[0].choices[command].format_help()
        assert "--t " not in help_text and "--budgets" not in help_text, command


def test_a_flag_from_another_commands_vocabulary_gets_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, hint in (
        (["passkt", "--eval-budgets", "3,9"], "did you mean '--budgets'"),
        (["passkt", "--ks", "1,2"], "did you mean '--k'"),
        (["recovery", "--eval-budgets", "3,9"], "did you mean '--budgets'"),
    ):
        with pytest.raises(SystemExit):
            main(argv)
        assert hint in capsys.readouterr().err, argv


@pytest.mark.parametrize("command", ["passkt", "probe", "recovery", "report"])
def test_too_few_bootstrap_resamples_are_refused_by_the_parser(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = [command, *(["runs/x"] if command == "report" else []), "--bootstrap", "20"]
    with pytest.raises(SystemExit) as exited:
        main(arguments)
    assert exited.value.code == 2
    assert "expected at least 100 resamples (interval bounds are quantiles), got '20'" in capsys.readouterr().err


def test_list_of_an_unknown_family_is_an_error_listing_the_families(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--family", "textworl", "--envs"]) == 2
    assert capsys.readouterr().err == (
        "error: Unknown family 'textworl'. Did you mean 'textworld'? Families: alfworld, babyai, sciworld, textworld, twx, webshop.\n"
    )


def _reference_line(**fields: object) -> dict:
    record = {"agent": "expert", "env_id": "agentgym_budget/TextWorld-CoinCollector-v0", "env_kwargs": {"level": 3}}
    record |= {"split": "train", "task_id": "coin-l3-0", "sample": 0, "seed": 1, "budget": 10, "actions": ["look"]}
    return {**record, **fields}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (_reference_line(seed=-5), "field 'seed' is -5; expected a non-negative integer"),
        (_reference_line(seed="abc"), "field 'seed' is 'abc'; expected a non-negative integer"),
        (_reference_line(seed=None), "field 'seed' is None; expected a non-negative integer"),
        (_reference_line(budget="x"), "field 'budget' is 'x'; expected a positive integer"),
        (_reference_line(budget=float("nan")), "field 'budget' is nan; expected a positive integer"),
        (_reference_line(budget=0), "field 'budget' is 0; expected a positive integer"),
        (_reference_line(budget=1e400), "field 'budget' is inf; expected a positive integer"),
        ({k: v for k, v in _reference_line().items() if k != "task_id"}, "field 'task_id' is missing"),
        (_reference_line(actions="look"), "field 'actions' is 'look'; expected a list of strings"),
        ("[" * 100_000 + "]" * 100_000, "is nested too deeply"),
        ('{"task_id": ' + "[" * 100_000 + "]" * 100_000 + "}", "is nested too deeply"),
    ],
)
@pytest.mark.parametrize("command", ["probe --reference", "recovery --episodes"])
def test_reference_logs_with_bad_fields_are_named_by_line(
    command: str, line: dict | str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "episodes.jsonl"
    text = line if isinstance(line, str) else json.dumps(line)
    log.write_text(json.dumps(_reference_line()) + "\n" + text + "\n")
    name, flag = command.split()
    argv = [name, "--env", "TextWorld-CoinCollector-v0", "--env-args", "level=3", flag, str(log), "--states", "1"]
    argv += ["--natural", "0"] if name == "recovery" else []
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {log}:2 ") and problem in err and "Traceback" not in err
    assert not (tmp_path / "run" / "run.json").exists()


def test_train_and_study_default_env_args_belong_to_the_default_env() -> None:
    parse = build_parser().parse_args
    other = ["--env", "TextWorld-Cooking-v0", "--out", "x"]
    assert cmd_train.build_config(parse(["train", "--recipe", "sft", *other])).env_kwargs == ()
    assert cmd_train.build_config(parse(["train", "--recipe", "sft", "--out", "x"])).env_kwargs == (("level", 3),)
    assert cmd_study.build_study(parse(["study", *other])).env_kwargs == ""
    assert cmd_study.build_study(parse(["study", "--out", "x"])).env_kwargs == "level=103"  # the default preset's
    assert cmd_study.build_study(parse(["study", "--out", "x", "--preset", "smoke"])).env_kwargs == "level=3"


def test_a_study_preset_sets_its_task_and_budgets_and_flags_win_over_them() -> None:
    parse = build_parser().parse_args
    score = cmd_study.build_study(parse(["study", "--out", "x", "--preset", "score"]))
    assert (score.env_kwargs, score.train_budget, score.budgets, score.eval_budgets) == ("level=103", 5, (5, 7),
                                                                                         (3, 5, 7, 9))  # fmt: skip
    flags = ["--env-args", "level=3", "--train-budget", "4", "--budgets", "4,5,6", "--eval-budgets", "3,4,5,6,9"]
    given = cmd_study.build_study(parse(["study", "--out", "x", "--preset", "score", *flags]))
    assert (given.env_kwargs, given.train_budget, given.budgets, given.eval_budgets) == ("level=3", 4, (4, 5, 6),
                                                                                         (3, 4, 5, 6, 9))  # fmt: skip
    other = cmd_study.build_study(parse(["study", "--out", "x", "--preset", "score", "--env", "TextWorld-Cooking-v0"]))
    assert other.env_kwargs == ""  # a preset's task arguments belong to the default env


def test_tiny_size_sizes_the_built_in_model_of_train_and_study_only() -> None:
    parse = build_parser().parse_args
    study = cmd_study.build_study(parse(["study", "--out", "x", "--preset", "tiny", "--tiny-size", "4x256"]))
    assert (study.train.tiny.layers, study.train.tiny.hidden_size, study.train.tiny.heads) == (4, 256, 4)
    assert cmd_study.build_study(parse(["study", "--out", "x", "--preset", "tiny"])).train.tiny.layers == 2
    with pytest.raises(InvalidOptionError, match="--tiny-size 4x256 sizes the built-in tiny model, but the base"):
        cmd_study.build_study(parse(["study", "--out", "x", "--preset", "smollm2", "--tiny-size", "4x256"]))
    with pytest.raises(InvalidOptionError, match="--tiny-size 4x256 sizes the built-in tiny model, but the base"):
        cmd_study.build_study(parse(["study", "--out", "x", "--tiny-size", "4x256"]))  # default: SmolLM2
    with pytest.raises(InvalidOptionError, match="drop one of them"):
        cmd_train.build_config(
            parse(["train", "--recipe", "fixed", "--budget", "6", "--init", "d", "--out", "x", "--tiny-size", "2x64"])
        )
    with pytest.raises(SystemExit):
        parse(["train", "--recipe", "sft", "--out", "x", "--tiny-size", "4by256"])


def test_study_without_a_preset_runs_the_default_preset() -> None:
    parse = build_parser().parse_args
    plain = cmd_study.build_study(parse(["study", "--out", "x"]))
    assert plain == cmd_study.build_study(parse(["study", "--out", "x", "--preset", "default"]))
    assert plain != cmd_study.build_study(parse(["study", "--out", "x", "--preset", "smoke"]))


def test_study_help_states_the_sizes_the_default_preset_runs() -> None:
    """``study --help`` names, for every size flag, what a study without flags runs (it said 350 SFT steps for 10)."""
    import argparse

    plain = cmd_study.build_study(build_parser().parse_args(["study", "--out", "x"]))
    parser = argparse.ArgumentParser()
    cmd_study.add_arguments(parser)
    helps = {action.dest: " ".join(action.help.split()) for action in parser._actions}
    sizes = {"sft_steps": plain.train.sft.steps, "eval_tasks": plain.eval_tasks, "eval_samples": plain.eval_samples}
    sizes |= {"probe_states": plain.probe_states, "recovery_states": plain.recovery_states}
    sizes |= {"training_seeds": plain.training_seeds}
    for dest, value in sizes.items():
        assert helps[dest].endswith(f"(default: the preset's; {value} in --preset default)"), dest


def test_workers_and_threads_never_oversubscribe_the_cores_silently(capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_budget.cli.common import available_cores, fit_threads, note_busy_cores

    cores = available_cores()
    assert fit_threads(1, workers=cores) == 1 and capsys.readouterr().err == ""
    assert fit_threads(2, workers=cores) == 1  # the case: --workers 2 --threads 2 on 2 cores
    assert f"--threads 2 x {cores} worker(s) would oversubscribe the {cores} cores" in capsys.readouterr().err
    assert fit_threads(cores + 3) == cores and "using --threads" in capsys.readouterr().err
    note_busy_cores(cores)
    assert capsys.readouterr().err == ""
    note_busy_cores(cores + 1)
    assert f"--workers {cores + 1} on {cores} cores: the workers share the cores" in capsys.readouterr().err


@pytest.mark.slow
def test_every_command_with_workers_or_threads_checks_the_cores(tmp_path: Path, capsys) -> None:
    from agentgym_budget.cli.common import available_cores

    many = str(available_cores() + 1)
    assert main(["passkt", *TINY[:-3], "--workers", many, "--no-progress", "--out", str(tmp_path / "p")]) == 0
    assert f"--workers {many} on" in capsys.readouterr().err
    argv = ["prepare", "TextWorld-CoinCollector-v0", "--env-args", "level=3", "--tasks", "1", "--no-progress"]
    assert main([*argv, "--workers", many]) == 0
    assert f"--workers {many} on" in capsys.readouterr().err
    import inspect

    from agentgym_budget.cli import cmd_study, cmd_train

    assert "fit_threads(args.threads, workers=args.workers)" in inspect.getsource(cmd_study.run)
    assert "fit_threads(args.threads)" in inspect.getsource(cmd_train.run)
