"""TRL: the tool environment's contract, and one real GRPO step with a tiny model built locally (no download)."""

from __future__ import annotations

import math
import sys

import pytest

from agentgym_budget.agents.actions import parse_action
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.trl import (
    BudgetToolEnv,
    check_trainer_args,
    dataset_rows,
    environment_factory,
)

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")

COIN = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", budgets=(2, 6), info_keys=("expert_plan",))


@pytest.mark.slow
def test_only_act_is_a_tool_and_its_schema_renders():
    from transformers.utils import get_json_schema

    tools = [name for name, value in vars(BudgetToolEnv).items() if callable(value) and not name.startswith("_")]
    assert sorted(tools) == ["act", "get_reward", "reset"]  # TRL treats reset and get_reward specially
    schema = get_json_schema(environment_factory(COIN)().act)
    assert schema["function"]["name"] == "act"
    assert schema["function"]["parameters"]["required"] == ["command"]
    assert "one turn" in schema["function"]["description"]
    # The chat protocol's schema (what hf: agents and training render) is what TRL reads from the tool.
    from agentgym_budget.chat.tool import act_tool_schema

    assert schema == act_tool_schema() == get_json_schema(BudgetToolEnv.act)


def test_rows_pick_episodes_and_the_budget_truncates():
    env = environment_factory(COIN, ignore_columns=["difficulty"])()
    row = {**dataset_rows(COIN, episodes=1, seed=4)[0], "difficulty": "easy", "max_turns": 2}
    text = env.reset(**row)
    assert env.record["budget"] == 2 and env.record["seed"] == 4 and "Admissible actions:" in text
    first = env.act("Action: inventory")
    assert "[Episode over" not in first
    last = env.act("look")
    assert last.endswith("[Episode over: out of turns (2 of 2).]")
    assert env.act("go east") == "The episode is over (out of turns (2 of 2)); do not call act again."
    assert env.record["turns"] == 2 and env.record["truncated"] and env.get_reward() == 0.0
    with pytest.raises(InvalidOptionError, match="Unknown episode field 'level'"):
        env.reset(prompt=[], level=3)


def test_budget_mix_per_row_seed_and_expert_wins():
    env = BudgetToolEnv(COIN)
    budgets = []
    for row in dataset_rows(COIN, episodes=8, seed=0):
        env.reset(**row)
        budgets.append(env.record["budget"])
    assert set(budgets) == {2, 6}
    env.reset(seed=0, max_turns=20)
    for command in env.session.last.info["expert_plan"]:
        answer = env.act(command)
    assert answer.endswith("turns.]") and env.record["won"] and env.get_reward() == env.record["return"] > 0
    assert env.act(42) == env.act("look")  # non-text arguments after the end: same answer, no turn


def test_trainer_args_must_cover_the_largest_budget():
    class Args:
        max_tool_calling_iterations = 5

    with pytest.raises(InvalidOptionError, match=r"max_tool_calling_iterations=6"):
        check_trainer_args(Args(), COIN)
    Args.max_tool_calling_iterations = 6
    check_trainer_args(Args(), COIN)
    with pytest.raises(InvalidOptionError, match="largest turn budget \\(9\\)"):
        check_trainer_args(Args(), COIN, [{"max_turns": 9}])


@pytest.mark.slow
def test_one_grpo_step_with_a_tiny_local_model(tmp_path):
    torch = pytest.importorskip("torch")
    from datasets import Dataset

    from agentgym_budget.integrations.trl import grpo_trainer
    from agentgym_budget.train.tiny_lm import warm_tiny_lm

    torch.set_num_threads(1)  # the tiny model is far faster single-threaded on a shared 2-core machine
    model, tokenizer, losses = warm_tiny_lm(COIN, seeds=range(4), steps=120)
    assert losses[-1] < losses[0] / 10  # it now writes well-formed tool calls

    rows = dataset_rows(COIN, episodes=4, seed=100)
    args = _one_grpo_step_args(tmp_path)
    before = [p.detach().clone() for p in model.parameters()]
    scored = []  # what TRL hands the reward functions: each completion beside the environment that played it

    def pairs(completions=None, environments=None, **_):
        scored.extend(zip(completions, [(env.record, env.get_reward()) for env in environments], strict=True))
        return [None] * len(completions)

    trainer = grpo_trainer(model, tokenizer, COIN, args, Dataset.from_list(rows), reward_funcs=[pairs])
    assert getattr(trainer._tokenizer.parse_response, "plays_free_text", False)  # rollouts read free text...
    assert trainer._tokenizer is not tokenizer and "parse_response" not in vars(tokenizer)  # ...the caller's untouched
    result = trainer.train()

    assert result.global_step == 1 and math.isfinite(result.training_loss)
    logged = trainer.state.log_history[0]
    assert logged["tools/call_frequency"] > 0  # the model's tool calls were played as turns
    records = _check_episodes_and_rewards(trainer.environments, logged)
    _check_each_completion_is_scored_with_its_episode(scored, records)
    if logged["frac_reward_zero_std"] < 1:  # some group had different returns: GRPO moved the weights
        assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def _one_grpo_step_args(output_dir):
    """One GRPO step on CPU: 4 episodes, 2 generations each, as many tool calls as the largest budget allows."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(output_dir),
        max_steps=1,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=192,
        max_tool_calling_iterations=6,
        learning_rate=1e-3,
        temperature=0.7,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        use_cpu=True,
        seed=0,
    )


def _check_episodes_and_rewards(environments, logged):
    """The step's episodes kept their rows' seeds and budgets, and the logged reward is their mean return."""
    records = [env.record for env in environments]
    assert len(records) == 4 and {r["seed"] for r in records} <= {100, 101, 102, 103}
    for env, record in zip(environments, records, strict=True):
        assert record["budget"] in (2, 6) and record["turns"] <= record["budget"]
        assert record["truncated"] == (record["turns"] == record["budget"] and not record["won"])
        assert env.get_reward() == record["return"]
    assert logged["rewards/BudgetToolEnv/mean"] == pytest.approx(sum(r["return"] for r in records) / 4, abs=1e-6)
    return records


def _check_each_completion_is_scored_with_its_episode(scored, records):
    """Each completion is scored with the episode its own tool calls played, turn for turn."""
    assert sorted(record["seed"] for _, (record, _) in scored) == sorted(record["seed"] for record in records)
    for completion, (record, reward) in scored:
        replies = [call["function"]["arguments"] for m in completion for call in m.get("tool_calls") or ()]
        commands = [_spelling(parse_action(r["command"] if isinstance(r, dict) else r).command) for r in replies]
        assert commands[: record["turns"]] == [_spelling(c) for c in record["commands"]] and reward == record["return"]


def _spelling(command):
    return " ".join(command.lower().split())
