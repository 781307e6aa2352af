"""Same seed -> byte-identical study.json, whatever the workers and however their episodes interleave (extra trl).

Passed in 12 minutes at a load average of 8 to 11 on 2 cores (about 6 CPU minutes, mostly the evaluations'
model loading, bootstraps and plots), with a fourth run (workers 1 with delays) since dropped.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import replace

import pytest

from agentgym_budget.runner.jitter import INJECT_DELAYS_ENV
from tests.train_support import COIN, tiny_config

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")

EVALUATION = ("passkt", "probe", "recovery")


def _evaluate_again(config, out, **changes):
    from agentgym_budget.study.run import run_study

    for stage in EVALUATION:
        shutil.rmtree(out / stage)
    (out / "study.json").unlink()
    run_study(replace(config, **changes), out, stages=EVALUATION, progress=False)
    return (out / "study.json").read_bytes()


@pytest.mark.slow
def test_workers_and_injected_delays_give_a_byte_identical_study_json(tmp_path, monkeypatch, capfd):
    pytest.importorskip("trl")
    from agentgym_budget.study.run import StudyConfig, run_study
    from agentgym_budget.train.grpo import GRPOSettings

    grpo = GRPOSettings(steps=1, episodes_per_step=2, num_generations=2, save_steps=1, tokens_per_turn=48)
    config = StudyConfig(
        *COIN,
        train_budget=3,
        budgets=(2, 3),
        eval_budgets=(2, 3),
        eval_ks=(1, 2),
        eval_samples=2,
        eval_tasks=2,
        probe_states=2,
        recovery_states=1,
        workers=1,
        arms=("fixed",),  # two agents (sft, fixed) are enough to interleave; training is not what is tested
        train=tiny_config("sft", grpo=grpo),
    )
    run_study(config, tmp_path, progress=False)  # trains once; the evaluations below reuse the checkpoints
    serial = (tmp_path / "study.json").read_bytes()
    assert b'"states_kept"' in serial and b'"single_step"' in serial
    assert _evaluate_again(config, tmp_path, workers=2) == serial
    printed = capfd.readouterr()
    assert "it/s]" not in printed.out + printed.err  # progress=False reaches the spawned workers' libraries
    monkeypatch.setenv(INJECT_DELAYS_ENV, "0.03")  # random sleeps before every job and every emitted record
    assert _evaluate_again(config, tmp_path, workers=2) == serial


def _untimed_metrics(run):
    """A training run's metrics per step without the ones that measure time (``elapsed_s``, TRL's ``step_time``...)."""
    timed = ("_s", "_time", "_runtime", "_per_second")
    rows = [json.loads(line) for line in (run / "rl" / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in row.items() if not k.endswith(timed)} for row in rows]


@pytest.mark.slow
def test_rl_runs_trained_side_by_side_give_the_weights_and_logs_of_runs_trained_one_after_another(tmp_path):
    """The study trains its RL runs in ``workers`` processes: each run's weights and logs are the serial run's."""
    pytest.importorskip("trl")
    from agentgym_budget.study.run import StudyConfig, run_study
    from agentgym_budget.train.grpo import GRPOSettings

    config = StudyConfig(*COIN, train_budget=3, budgets=(2, 3), eval_budgets=(2, 3), eval_ks=(1,), eval_samples=1,
                         eval_tasks=1, workers=1, arms=("fixed", "budgetmix"),
                         train=tiny_config("sft", grpo=GRPOSettings(steps=1, episodes_per_step=2, num_generations=2,
                                                                    save_steps=1, tokens_per_turn=24)))  # fmt: skip
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    arms = ("fixed", "budgetmix")
    run_study(config, serial, stages=("sft", *arms), progress=False)
    parallel.mkdir()
    shutil.copytree(serial / "sft", parallel / "sft")
    run_study(replace(config, workers=2), parallel, stages=arms, progress=False)
    runs = ("fixed", "budgetmix")
    for run in runs:
        for name in ("final/model.safetensors", "rl/episodes.jsonl"):
            assert (parallel / run / name).read_bytes() == (serial / run / name).read_bytes(), (run, name)
        assert _untimed_metrics(parallel / run) == _untimed_metrics(serial / run), run
    timing = json.loads((parallel / "timing.json").read_text())
    assert set(timing) == {*runs, "rl_runs"} and all(timing[run]["cpu_s"] > 0 for run in runs)  # measured in workers
    assert all(timing[run]["within"] == "rl_runs" for run in runs) and timing["rl_runs"]["side_by_side"] == 2
    assert timing["rl_runs"]["cpu_s"] == pytest.approx(sum(timing[run]["cpu_s"] for run in runs), abs=0.2)
    resumed = (parallel / "timing.json").read_bytes()
    run_study(replace(config, workers=2), parallel, stages=arms, progress=False)  # all done: nothing to add
    assert (parallel / "timing.json").read_bytes() == resumed
