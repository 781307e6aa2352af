"""SFT's tokenized examples: the same labels as TRL's assistant-only loss, and the demonstrator's errors masked."""

from __future__ import annotations

import json
import sys

import pytest

from agentgym_budget.errors import DataError
from tests.train_support import tiny_config

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")

NOISY = "noisy-expert-recover:eps=0.5"


@pytest.fixture(scope="module")
def noisy_data():
    from agentgym_budget.train.trajectories import agent_conversations

    config = tiny_config("sft")
    data = agent_conversations(config.session_config(), NOISY, tasks=range(4), episodes_per_task=2, budget=8)
    return config, data


@pytest.fixture(scope="module")
def tokenizer(noisy_data):
    from agentgym_budget.train.base_model import build_base_model

    config, data = noisy_data
    return build_base_model(data.conversations, config.tiny, chat_format=config.chat_format(), seed=0)[1]


def test_off_expert_turns_are_the_commands_that_were_not_the_experts(noisy_data):
    from agentgym_budget.train.trajectories import agent_conversations

    config, data = noisy_data
    kept = [r for r in data.records if r["kept"]]
    assert len(data.off_expert_turns) == len(data.conversations) == len(kept)
    assert any(data.off_expert_turns), "eps=0.5 on 8 episodes should err at least once"
    for record, turns in zip(kept, data.off_expert_turns, strict=True):
        assert all(0 <= t < len(record["commands"]) for t in turns)
        assert len(turns) == record["stats"]["mistakes"]
    clean = agent_conversations(config.session_config(), "expert", tasks=range(2), episodes_per_task=1, budget=8)
    assert clean.off_expert_turns == [[], []]


def test_labels_without_masks_equal_trls_assistant_only_loss(noisy_data, tokenizer, tmp_path):
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl")
    from agentgym_budget.chat.tool import act_tool_schema
    from agentgym_budget.train.base_model import build_base_model
    from agentgym_budget.train.sft import tokenized_examples

    config, data = noisy_data
    model = build_base_model(data.conversations, config.tiny, chat_format=config.chat_format(), seed=0)[0]
    tools = json.dumps([act_tool_schema()])
    conversational = datasets.Dataset.from_list([{"messages": c, "tools": tools} for c in data.conversations])

    def labels(dataset, assistant_only):
        args = trl.SFTConfig(
            output_dir=str(tmp_path), assistant_only_loss=assistant_only, report_to=[], use_cpu=True, bf16=False
        )
        trainer = trl.SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
        return trainer.train_dataset["labels"]

    ours = datasets.Dataset.from_list(tokenized_examples(tokenizer, data.conversations))
    assert labels(ours, False) == labels(conversational, True)


def test_masked_turns_leave_exactly_those_tool_calls_out_of_the_loss(noisy_data, tokenizer):
    from agentgym_budget.train.sft import _assistant_spans, tokenized_examples

    _, data = noisy_data
    index = next(i for i, turns in enumerate(data.off_expert_turns) if turns)
    conversation, turns = data.conversations[index], data.off_expert_turns[index]
    full = tokenized_examples(tokenizer, [conversation])[0]
    masked = tokenized_examples(tokenizer, [conversation], [turns])[0]
    spans = _assistant_spans(full["assistant_masks"])
    commands = [m["tool_calls"][0]["function"]["arguments"]["command"] for m in conversation if m.get("tool_calls")]
    assert len(spans) == len(commands) + 1  # the tool calls and the closing message
    for turn, (start, end) in enumerate(spans):
        text = tokenizer.decode(full["input_ids"][start:end])
        trained = set(masked["assistant_masks"][start:end])
        if turn < len(commands):
            assert commands[turn] in text
        assert trained == ({0} if turn in turns else {1}), (turn, text)
    assert masked["input_ids"] == full["input_ids"]


def test_bad_masks_are_refused(noisy_data, tokenizer):
    from agentgym_budget.train.sft import tokenized_examples

    _, data = noisy_data
    with pytest.raises(DataError, match="cannot mask turn 99"):
        tokenized_examples(tokenizer, data.conversations[:1], [[99]])
    with pytest.raises(DataError, match="1 lists for 2 conversations"):
        tokenized_examples(tokenizer, data.conversations[:2], [[]])


def test_demonstrations_option_of_train_and_its_default():
    import argparse

    from agentgym_budget.cli.cmd_train import add_arguments, build_config
    from agentgym_budget.train.config import TrainConfig

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    argv = ["--recipe", "sft", "--budget", "6", "--out", "x"]
    masked = build_config(parser.parse_args(argv))
    assert (masked.sft_agent, masked.sft_mask_errors) == ("noisy-expert-recover:eps=0.2", True)
    clean = build_config(parser.parse_args([*argv, "--demonstrations", "clean"]))
    assert (clean.sft_agent, clean.sft_mask_errors) == ("expert", False)
    legacy = {k: v for k, v in masked.to_json().items() if k != "sft_mask_errors"}
    assert TrainConfig.from_json(legacy).sft_mask_errors is False  # runs written before masking
