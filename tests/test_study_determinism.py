"""Same seed -> byte-identical study.json, whatever the workers and however their episodes interleave (extra trl).

Passed in 12 minutes at a load average of 8 to 11 on 2 cores (about 6 CPU minutes, mostly the evaluations'
model loading, bootstraps and plots), with a fourth run (workers 1 with delays) since dropped.
"""

from __future__ import annotations

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
