"""GRPO learns: on one task, a short run from a weak SFT base raises the probability of the rewarded first move.

The base is the project's own SFT path at a small size (200 steps on the default 100 Coin Collector level-3
training tasks): it makes well-formed ``act`` calls but does not read its task (its first move is near-uniform
over the four directions). GRPO with the project defaults then trains it on one task (task 0 of the train split,
budget 6, 24 steps of 8 rollouts) through :func:`~agentgym_budget.train.recipe.run_training`, as
``agentgym-budget train --init`` does. The probability of the expert's first command is read from the model's
logits on the conversation's tokens as the rollouts present it (:class:`~agentgym_budget.chat.format.ConversationTokens`),
from the base and from the model the run saved. Measured: 0.245 -> 0.341 (the losing first moves 0.24 and 0.20 ->
0.10 each; training success 0.31 over the first 6 steps, 0.52 over the last 6). Broken rollouts, loss masks,
advantages or saving leave it where it was or lower it, so the test fails. Deterministic for its seed.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11"),
]

COIN = ("TextWorld-CoinCollector-v0", "level=3")


def first_move_probability(model_dir, config, command: str) -> float:
    """The probability that the model saved in ``model_dir`` answers task 0's first text with ``act(command)``."""
    import torch

    from agentgym_budget.agents.hf_model import load_causal_lm
    from agentgym_budget.chat.format import ChatFormat, ConversationTokens
    from agentgym_budget.integrations.trl import BudgetToolEnv

    model, tokenizer = load_causal_lm(model_dir)
    env = BudgetToolEnv(config)
    try:
        conversation = ConversationTokens(tokenizer, ChatFormat.load(model_dir), env.reset(task=0, seed=0))
    finally:
        env.session.close()
    start = len(conversation.ids)
    conversation.add_call(command)
    ids = torch.tensor([conversation.ids])
    with torch.no_grad():
        logits = model.eval()(ids).logits[0, start - 1 : -1].double()
    return float(torch.log_softmax(logits, -1).gather(1, ids[0, start:, None]).sum().exp())


def test_grpo_raises_the_probability_of_the_rewarded_first_move(tmp_path):
    torch = pytest.importorskip("torch")
    from agentgym_budget.integrations.trl import BudgetToolEnv
    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.grpo import GRPOSettings
    from agentgym_budget.train.recipe import run_training
    from agentgym_budget.train.sft import SFTSettings

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        base = TrainConfig(*COIN, recipe="sft", budget=6, sft=SFTSettings(steps=200))
        run_training(base, tmp_path / "base", progress=False, plots=False)
        config = TrainConfig(
            *COIN,
            recipe="fixed",
            budget=6,
            train_tasks=1,
            init=str(tmp_path / "base" / "final"),
            grpo=GRPOSettings(steps=24, save_steps=24),
        )
        session = config.session_config()
        probe = BudgetToolEnv(replace(session, info_keys=("expert_plan",)))
        probe.reset(task=0, seed=0)
        first_move = probe.session.last.info["expert_plan"][0]
        probe.session.close()
        before = first_move_probability(tmp_path / "base" / "final", session, first_move)
        run_training(config, tmp_path / "rl", progress=False, plots=False)
        after = first_move_probability(tmp_path / "rl" / "final", session, first_move)
    finally:
        torch.set_num_threads(threads)
    print(f"P({first_move!r} first) from the SFT base {before:.3f}, after 24 GRPO steps {after:.3f}")  # pytest -s
    assert before < 0.3, f"the base already prefers {first_move!r} ({before:.3f}): not a weak base"
    assert after > before + 0.05, (first_move, before, after)
