"""The ``curriculum`` recipe: GRPO budgets growing in stages (extra ``trl``)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.train.config import TrainConfig
from agentgym_budget.train.grpo import GRPOSettings, staged_budgets
from tests.train_support import COIN, tiny_config


def test_curriculum_needs_budgets_and_plays_them_in_order():
    with pytest.raises(InvalidOptionError, match="curriculum plays several budgets"):
        TrainConfig(*COIN, recipe="curriculum", budget=4)
    config = TrainConfig(*COIN, recipe="curriculum", budgets=(8, 2, 4))
    assert config.budget_stages == (2, 4, 8) and config.session_config().budgets is None
    assert config.session_config().max_turns == 8
    assert TrainConfig(*COIN, recipe="budgetmix", budgets=(2, 4)).budget_stages is None
    budgets = staged_budgets((2, 4, 8), GRPOSettings(steps=7, episodes_per_step=2, num_generations=2))
    assert budgets == [2, 2, 2, 4, 4, 8, 8] and budgets == sorted(budgets)


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")
def test_curriculum_recipe_trains_each_stage_at_its_budget(tmp_path):
    torch = pytest.importorskip("torch")
    from agentgym_budget.train.recipe import run_training

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        config = replace(tiny_config("curriculum"), grpo=replace(tiny_config().grpo, steps=2))
        summary = run_training(config, tmp_path, progress=False, plots=False)
    finally:
        torch.set_num_threads(threads)
    episodes = [json.loads(line) for line in (tmp_path / "rl" / "episodes.jsonl").read_text().splitlines()]
    assert {(e["step"], e["budget"]) for e in episodes} == {(1, 2), (2, 4)}
    assert all(e["turns"] <= e["budget"] for e in episodes)
    assert set(summary["rl"]["success_by_budget"]) == {"2", "4"}
