"""The study: three recipes trained, then evaluated as ``hf:`` agents on held-out tasks (extra ``trl``)."""

from __future__ import annotations

import json
import sys

import pytest

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.runner.env_ref import EnvRef
from tests.train_support import COIN, tiny_config

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")


def small_study(**changes):
    from agentgym_budget.study.run import StudyConfig

    settings = dict(
        train_budget=3,
        budgets=(2, 3),
        eval_budgets=(2, 3),
        eval_ks=(1,),
        eval_samples=1,
        eval_tasks=2,
        probe_states=2,
        recovery_states=2,
        workers=1,
        train=tiny_config("sft"),
    )
    env_id, env_kwargs = COIN
    return StudyConfig(env_id, changes.pop("env_kwargs", env_kwargs), **(settings | changes))


def test_study_settings_are_checked():
    with pytest.raises(InvalidOptionError, match="train_budget=5 must be one of eval_budgets"):
        small_study(train_budget=5)
    with pytest.raises(InvalidOptionError, match="exceed eval_samples"):
        small_study(eval_ks=(1, 2))
    study = small_study()
    assert study.recipe("fixed", "sft/final").init == "sft/final" and study.recipe("fixed").budget == 3
    assert study.recipe("budgetmix").budgets == (2, 3) and study.recipe("sft").budget == 3
    assert study.recipe("curriculum").budget_stages == (2, 3)
    with pytest.raises(InvalidOptionError, match="progress that stays 0 until the episode is won"):
        small_study(env_kwargs="level=1,progress=score", arms=("fixed", "budgetmix_turn", "budgetmix_process"))
    assert small_study(arms=("fixed", "budgetmix_process")).arms == ("fixed", "budgetmix_process")  # "plan" moves
    with pytest.raises(InvalidOptionError, match=r"Unknown study arm\(s\) \['curriculm'\]. Did you mean 'curriculum'"):
        small_study(arms=("fixed", "curriculm"))
    assert "workers" not in study.to_json()  # processes change no result: a resume may use others


def test_a_moved_study_renames_its_agents_in_the_evaluation_logs(tmp_path):
    from agentgym_budget.study.evaluation import relocate_logs

    agents = {name: f"hf:{tmp_path / 'new' / name / 'final'}" for name in ("sft", "fixed@1")}
    logged = [
        {"agent": "hf:/gone/study/sft/final", "task_id": "t", "won": True},
        {"agent": "hf:/gone/study/fixed@1/final", "task_id": "t", "won": False},
        {"agent": agents["sft"], "task_id": "u", "won": True},  # already here
        {"agent": "hf:/elsewhere/other/final", "task_id": "t", "won": True},  # not a run of this study
        {"agent": "noisy-expert-recover:eps=0.2", "task_id": "t", "won": True},
    ]
    log = tmp_path / "new" / "passkt" / "episodes.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(record) + "\n" for record in logged))

    assert relocate_logs(tmp_path / "new", agents) == 2
    assert [json.loads(line)["agent"] for line in log.read_text().splitlines()] == [
        agents["sft"],
        agents["fixed@1"],
        agents["sft"],
        "hf:/elsewhere/other/final",
        "noisy-expert-recover:eps=0.2",
    ]
    assert relocate_logs(tmp_path / "new", agents) == 0


def test_the_process_arms_train_budgetmix_with_turn_credit_with_and_without_the_process_reward():
    from agentgym_budget.study.run import StudyConfig

    arms = ("fixed", "budgetmix_turn", "budgetmix_process")
    study = StudyConfig("TextWorld-Cooking-v0", "difficulty=1", arms=arms)
    turn, process = study.recipe("budgetmix_turn", "sft/final"), study.recipe("budgetmix_process", "sft/final", 1)
    assert (turn.grpo.credit, turn.process_reward, turn.recipe) == ("turn", False, "budgetmix")
    assert (process.grpo.credit, process.process_reward, process.seed) == ("turn", True, study.seed + 1)
    assert study.to_json()["arms"] == arms


@pytest.mark.slow
def test_study_trains_its_arms_and_evaluates_them_on_test_tasks(tmp_path, capfd):
    pytest.importorskip("trl")
    from agentgym_budget.study.run import run_study

    study = run_study(small_study(), tmp_path, progress=False)
    printed = capfd.readouterr()
    assert "it/s]" not in printed.out + printed.err  # no library's bar, in this process or its workers

    steps_with_signal = _check_training(study, tmp_path)
    _check_evaluation_on_test_tasks(study, tmp_path)
    _check_timing(study, tmp_path)
    _check_claims(study)
    text = (tmp_path / "study.md").read_text()
    _check_report(study, text, steps_with_signal)
    _check_turns(study, tmp_path, text)


STUDY_ARMS = ("sft", "fixed", "budgetmix", "curriculum")  # the arms small_study() trains


def _check_training(study, study_dir):
    """Every arm trained, each run where the study moves it; returns each RL arm's steps with a learning signal."""
    assert set(study["training"]) == set(STUDY_ARMS)
    assert study["training"]["budgetmix"]["rl"]["episodes"] == 8
    assert set(study["training"]["budgetmix"]["rl"]["success_by_budget"]) <= {"2", "3"}
    signal = {name: study["training"][name]["rl"]["steps_with_signal"] for name in ("fixed", "budgetmix")}
    assert all(0 <= count <= study["training"][name]["rl"]["steps"] for name, count in signal.items()), signal
    assert json.loads((study_dir / "fixed" / "run.json").read_text())["init"] == "../sft/final"  # moves with the study
    assert json.loads((study_dir / "curriculum" / "run.json").read_text())["recipe"] == "curriculum"
    return signal


def _check_evaluation_on_test_tasks(study, study_dir):
    """pass@1 of every arm at every budget, played as its final checkpoint on test tasks; probe and recovery ran."""
    rows = study["pass@1"]
    assert sorted((r["agent"], r["budget"]) for r in rows) == sorted(
        (agent, budget) for agent in STUDY_ARMS for budget in (2, 3)
    )
    for row in rows:
        assert row["tasks"] == 2 and row["low"] <= row["pass@1"] <= row["high"]
    episodes = [json.loads(line) for line in (study_dir / "passkt" / "episodes.jsonl").read_text().splitlines()]
    assert {e["agent"] for e in episodes} == {f"hf:{study_dir / name / 'final'}" for name in STUDY_ARMS}
    assert {e["split"] for e in episodes} == {"test"}
    for stage in ("probe", "recovery"):
        assert (study_dir / stage / "summary.json").is_file()


def _check_timing(study, study_dir):
    """Every stage timed in timing.json, and no time in study.json."""
    timing = json.loads((study_dir / "timing.json").read_text())
    assert set(timing) == {*STUDY_ARMS, "passkt", "probe", "recovery"}  # one worker: no runs side by side
    assert all(entry["wall_s"] > 0 and entry["cpu_s"] > 0 and "within" not in entry for entry in timing.values())
    assert "wall_s_last_invocation" not in json.dumps(study)  # study.json holds no time


def _check_claims(study):
    """The five claims in order, each with a verdict, fed by the evaluation logs."""
    claims = {claim["claim"]: claim for claim in study["claims"]}
    assert list(claims) == [
        "budget_dependence",
        "single_step",
        "recovery",
        "budgetmix_robustness",
        "process_supervision",
    ]
    assert all(claim["verdict"] in {"supported", "not_supported", "undecided"} for claim in claims.values())
    assert "0" in claims["recovery"]["per_k"] and claims["process_supervision"]["verdict"] == "undecided"
    kept = study["probe_step_values"]["states_kept"]
    assert bool(claims["single_step"]["sizes"]) == (kept > 0)  # the probes' log reaches the claim
    assert "curriculum" in json.dumps(claims["budgetmix_robustness"]["per_budget"])
    assert study["probe_step_values"]["states_examined"] >= study["probe_step_values"]["states_kept"]
    assert claims["budget_dependence"]["sizes"]["fixed T=3"]["tasks"] == 2


def _check_report(study, text, steps_with_signal):
    """study.md's tables and sections."""
    assert "| agent | T=2 | T=3 |" in text and "| budgetmix | " in text and "| budgetmix - sft | " in text
    assert "errors (commands other than the expert action) masked from the loss" in text
    assert f"| fixed | {study['training']['fixed']['rl']['steps']} | {steps_with_signal['fixed']} | T=" in text
    assert "## Time" in text and "| total |" in text
    assert "## Claims" in text and "## What this study can and cannot show" in text


def _check_turns(study, study_dir, text):
    """Each agent's turns, inadmissible and free-text shares and expert first moves, counted from its episodes."""
    passkt = [json.loads(line) for line in (study_dir / "passkt" / "episodes.jsonl").read_text().splitlines()]
    assert set(study["turns"]) == set(study["agents"])
    solver = EnvRef.parse(study["config"]["env_id"], study["config"]["env_kwargs"], "test").make_base(["expert_plan"])

    def first_move(task_id):
        return solver.reset(options={"task": task_id})[1]["expert_plan"][0].lower()

    for name, spent in study["turns"].items():
        played = [r for r in passkt if r["agent"] == study["agents"][name]]
        assert spent["turns"] == sum(r["turns"] for r in played) > 0 and spent["episodes"] == len(played)
        unmatched = sum(r["agent_stats"]["unmatched_actions"] for r in played)
        assert spent["inadmissible"] == round(unmatched / spent["turns"], 6)
        assert f"| {name} | {spent['episodes']} | {spent['turns']} | {spent['inadmissible']:.1%} |" in text
        firsts = [first_move(r["task_id"]) == r["actions"][0].lower() for r in played]
        assert spent["first_move_expert"] == round(sum(firsts) / len(firsts), 6)
        assert f"{spent['free_text']:.1%} | {spent['first_move_expert']:.1%} |" in text


def test_turn_quality_compares_each_first_action_with_the_solvers_first_command(tmp_path):
    from agentgym_budget.study.evaluation import expert_first_moves, turn_quality

    held_out = EnvRef.parse(*COIN, "test")
    tasks = list(held_out.task_ids()[:2])
    moves = expert_first_moves(held_out, tasks)
    assert set(moves) == set(tasks) and all(move.startswith("go ") for move in moves.values())
    stats = {"unmatched_actions": 0, "free_text_turns": 0}
    records = [  # the solver's first move first, then last, then first (spelt loosely)
        {"agent": "hf:a", "task_id": tasks[0], "turns": 2, "actions": [moves[tasks[0]].upper(), "look"]},
        {"agent": "hf:a", "task_id": tasks[1], "turns": 2, "actions": ["look", moves[tasks[1]]]},
        {"agent": "hf:a", "task_id": tasks[1], "turns": 2, "actions": [f" {moves[tasks[1]]} ", "inventory"]},
    ]
    (tmp_path / "passkt").mkdir()
    lines = [json.dumps({**record, "agent_stats": stats}) for record in records]
    (tmp_path / "passkt" / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    assert turn_quality(tmp_path, {"sft": "hf:a"}, held_out)["sft"]["first_move_expert"] == round(2 / 3, 6)
    assert "first_move_expert" not in turn_quality(tmp_path, {"sft": "hf:a"})["sft"]  # no env: not compared


def _stage(tmp_path, machine, start: float, end: float, seconds: float, records: int = 1) -> None:
    """A stage that runs ``seconds`` under load ``start`` (``end`` when it ends) and logs ``records`` records."""
    import time

    from agentgym_budget.study import timing

    def work() -> None:
        machine["load"] = start
        time.sleep(seconds)
        (tmp_path / "sft").mkdir(exist_ok=True)
        with open(tmp_path / "sft" / "metrics.jsonl", "a") as log:
            log.write('{"step": 1}\n' * records)
        machine["load"] = end

    machine["load"] = start
    timing.timed(tmp_path, "sft", work)


def test_a_resume_that_finds_a_stage_done_adds_no_time_and_keeps_the_loads_it_ran_under(tmp_path, monkeypatch):
    from agentgym_budget.study import timing

    machine = {"load": 0.0}
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (machine["load"], 0.0, 0.0))
    _stage(tmp_path, machine, 3.0, 4.0, 0.2)
    first = json.loads((tmp_path / "timing.json").read_text())["sft"]
    _stage(tmp_path, machine, 0.5, 0.6, 0.3, records=0)  # the resume: the stage is done, nothing logged
    assert json.loads((tmp_path / "timing.json").read_text())["sft"] == first
    assert (first["load_start"], first["load_end"]) == (3.0, 4.0) and first["wall_s"] >= 0.2
    _stage(tmp_path, machine, 2.0, 2.5, 0.4)  # more work than before: its loads are the ones
    entry = json.loads((tmp_path / "timing.json").read_text())["sft"]
    assert (entry["load_start"], entry["load_end"]) == (2.0, 2.5) and entry["wall_s"] >= 0.6
    assert "interrupted" not in entry


@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
def test_a_stage_stopped_midway_keeps_its_time(tmp_path, stop):
    """Ctrl-C, or SIGTERM under the command line's handler, ends a stage with its time so far recorded."""
    import importlib
    import os
    import signal
    import time

    from agentgym_budget.study import timing

    cli_main = importlib.import_module("agentgym_budget.cli.main")  # the package's `main` is the function

    def work() -> None:
        time.sleep(0.2)
        if stop == "ctrl-c":
            raise KeyboardInterrupt
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
        pytest.fail("SIGTERM did not interrupt the stage")

    previous = signal.signal(signal.SIGTERM, cli_main._raise_terminated)
    try:
        with pytest.raises(KeyboardInterrupt):
            timing.timed(tmp_path, "passkt", work)
        with pytest.raises(KeyboardInterrupt):
            timing.timed(tmp_path, "passkt", work)
    finally:
        signal.signal(signal.SIGTERM, previous)
    entry = json.loads((tmp_path / "timing.json").read_text())["passkt"]
    assert entry["interrupted"] == 2 and 0.4 <= entry["wall_s"] < 5


@pytest.mark.slow
def test_the_smoke_preset_runs_the_whole_study_from_the_command_line(tmp_path):
    """``agentgym-budget study --preset smoke`` as a user types it, in its own process: every stage, the five
    claims, study.md; a rerun resumes to the same study.json."""
    pytest.importorskip("trl")
    import subprocess

    from agentgym_budget.study.presets import preset_settings

    out = tmp_path / "smoke"
    command = [sys.executable, "-m", "agentgym_budget.cli", "study", "--preset", "smoke", "--out", str(out)]
    command += ["--workers", "2", "--no-progress"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    study = json.loads((out / "study.json").read_text())
    smoke = preset_settings("smoke")
    config = study["config"]
    assert (config["eval_tasks"], config["eval_samples"], config["training_seeds"]) == (
        smoke["eval_tasks"],
        smoke["eval_samples"],
        smoke["training_seeds"],
    )
    assert sorted(study["agents"]) == ["budgetmix", "curriculum", "fixed", "sft"]
    for agent in study["agents"]:
        assert (out / agent / "final" / "model.safetensors").stat().st_size > 0, agent
    assert [claim["claim"] for claim in study["claims"]] == [
        "budget_dependence",
        "single_step",
        "recovery",
        "budgetmix_robustness",
        "process_supervision",
    ]
    timing = json.loads((out / "timing.json").read_text())
    assert set(timing) == {*study["agents"], "rl_runs", "passkt", "probe", "recovery"}  # 3 RL runs, 2 at a time
    rl_runs = [entry for entry in timing.values() if entry.get("within") == "rl_runs"]
    assert len(rl_runs) == 3 and timing["rl_runs"]["wall_s"] < sum(entry["wall_s"] for entry in rl_runs)
    report = (out / "study.md").read_text()
    assert "## Claims" in report and "## Time" in report
    assert "| rl_runs: the runs in it, 2 side by side |" in report and "| fixed (in rl_runs) |" in report
    written = (out / "study.json").read_bytes()

    again = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (out / "study.json").read_bytes() == written


@pytest.mark.slow
def test_a_scoring_study_evaluates_score_agents_and_decides_single_step_on_exact_probes(tmp_path):
    """``--preset score-smoke``: the arms train scoring policies, the evaluation plays them as ``score:`` agents
    and the single-step claim reads each probe's exact probability of an optimal action."""
    pytest.importorskip("trl")
    from agentgym_budget.cli.main import main
    from agentgym_budget.study.claims import claim_records

    out = tmp_path / "score"
    assert main(["study", "--preset", "score-smoke", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    study = json.loads((out / "study.json").read_text())
    assert study["config"]["policy"] == "score" and study["config"]["train"]["policy"] == "score"
    assert study["agents"] == {
        name: f"score:{out / name / 'final'}" for name in ("sft", "fixed", "budgetmix", "budgetmix_process")
    }
    probes = [json.loads(line) for line in (out / "probe" / "probes.jsonl").read_text().splitlines()]
    exact = [record["p_optimal"] for record in probes if record.get("kind") == "probe"]
    assert exact and all(0.0 <= p <= 1.0 for p in exact)
    records = claim_records(out, study["agents"], sorted(study["config"]["eval_budgets"]))[1]
    assert sorted(record["correct"] for record in records) == sorted(exact)
    supervision = next(claim for claim in study["claims"] if claim["claim"] == "process_supervision")
    assert "no records" not in supervision.get("reason", "")


def test_rl_runs_go_side_by_side_only_as_far_as_memory_holds_them() -> None:
    """SmolLM2 generation GRPO peaks at 12-17 GB: two side by side would not fit 24 GB, so they train one at a time."""
    from dataclasses import replace

    from agentgym_budget.cli import cmd_study
    from agentgym_budget.cli.main import build_parser
    from agentgym_budget.study.training import side_by_side
    from agentgym_budget.train.memory import machine_bytes

    def rl_runs(preset: str) -> list:
        study = cmd_study.build_study(build_parser().parse_args(["study", "--out", "x", "--preset", preset]))
        return [replace(study.recipe("fixed", None), model=study.train.model, seed=seed) for seed in range(3)]

    if machine_bytes() < 34 * 2**30:
        assert side_by_side(rl_runs("generate"), workers=2) == 1
    assert side_by_side(rl_runs("score"), workers=2) == 2  # scoring runs: top blocks, no generation
    assert side_by_side(rl_runs("smoke"), workers=2) == 2  # the tiny model
    assert side_by_side(rl_runs("smoke"), workers=1) == 1
