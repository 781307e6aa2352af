"""Training logs where users look: ``--report-to`` reaches transformers' loggers (extra ``trl``; TensorBoard)."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from tests.train_support import tiny_config


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")
def test_report_to_tensorboard_writes_events_beside_the_jsonl_metrics(tmp_path):
    pytest.importorskip("tensorboard")
    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.recipe import run_training

    config = replace(tiny_config("sft"), report_to=("tensorboard",))
    run_training(config, tmp_path, progress=False, plots=False)
    events = list((tmp_path / "sft" / "checkpoints" / "runs").rglob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 100
    assert (tmp_path / "sft" / "metrics.jsonl").stat().st_size > 0
    # Where logs also go is not a setting of the run: rerunning without it resumes the same run.
    assert TrainConfig.from_json(replace(config, report_to=()).to_json()) == replace(config, report_to=())
    run_training(replace(config, report_to=()), tmp_path, progress=False, plots=False)
