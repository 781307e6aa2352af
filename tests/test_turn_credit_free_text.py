"""Turn-level credit plays a reply without an ``act`` call as a turn, exactly as episode credit does."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11"),
]


def _episodes(out):
    return [json.loads(line) for line in (out / "rl" / "episodes.jsonl").read_text().splitlines()]


def test_turn_credit_trainer_reads_free_text_replies(tmp_path):
    pytest.importorskip("torch")
    from datasets import Dataset
    from trl import GRPOConfig

    from agentgym_budget.integrations.session_config import SessionConfig
    from agentgym_budget.integrations.trl import dataset_rows
    from agentgym_budget.train.tiny_lm import warm_tiny_lm
    from agentgym_budget.train.turn_grpo import turn_credit_trainer

    config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=2", max_turns=3)
    model, tokenizer, _ = warm_tiny_lm(config, seeds=range(2), steps=1)
    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=1,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=64,
        max_tool_calling_iterations=4,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
    )
    rows = Dataset.from_list(dataset_rows(config, episodes=2, seed=0))
    for credit in ("turn", "gigpo"):
        trainer = turn_credit_trainer(model, tokenizer, config, args, rows, credit=credit)
        assert getattr(trainer._tokenizer.parse_response, "plays_free_text", False), credit  # TRL parses with this
        assert "parse_response" not in vars(tokenizer)  # the caller's tokenizer is left untouched
        call = trainer._tokenizer.parse_response(tokenizer.encode("go east"), prefix=[])["tool_calls"][0]
        assert call["function"] == {"name": "act", "arguments": {"command": "go east"}}


def test_turn_credit_cuts_as_few_episodes_short_as_episode_credit(tmp_path):
    torch = pytest.importorskip("torch")
    from agentgym_budget.train.recipe import run_training
    from tests.train_support import tiny_config

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        base = tiny_config("sft", budget=4, sft=replace(tiny_config().sft, steps=2))  # too weak to always call act
        run_training(base, tmp_path / "sft", progress=False, plots=False)
        runs = {}
        for credit in ("episode", "turn", "gigpo"):
            config = replace(tiny_config("fixed", budget=4), init=str(tmp_path / "sft" / "final"))
            config = replace(config, grpo=replace(config.grpo, credit=credit, steps=1))
            run_training(config, tmp_path / credit, progress=False, plots=False)
            runs[credit] = _episodes(tmp_path / credit)
    finally:
        torch.set_num_threads(threads)
    played = {credit: [(e["turns"], e["cut_short"]) for e in episodes] for credit, episodes in runs.items()}
    assert sum(turns for turns, _ in played["episode"]) > 0  # the base's replies were played as turns
    assert played["turn"] == played["episode"] and played["gigpo"] == played["episode"]  # same weights, same rollouts
