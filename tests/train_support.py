"""A training config small enough for tests: a 1-layer 32-wide tiny model, a few SFT and GRPO steps."""

from __future__ import annotations

from dataclasses import replace

__all__ = ["COIN", "tiny_config"]

COIN = ("TextWorld-CoinCollector-v0", "level=2")


def tiny_config(recipe="fixed", **changes):
    """A training config small enough for a test: 1-layer 32-wide model, a few steps."""
    from agentgym_budget.train.base_model import TinyModelSpec
    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.grpo import GRPOSettings
    from agentgym_budget.train.sft import SFTSettings

    budgets = {"budget": 3} if recipe in ("fixed", "sft") else {"budgets": (2, 4)}  # budgetmix, curriculum
    config = TrainConfig(
        *COIN,
        recipe=recipe,
        **budgets,
        train_tasks=3,
        sft_episodes_per_task=1,
        tiny=TinyModelSpec(vocab_size=400, hidden_size=32, layers=1, heads=2, max_positions=2048),
        sft=SFTSettings(steps=6, batch_size=2, learning_rate=3e-3, save_steps=2),
        grpo=GRPOSettings(steps=2, episodes_per_step=4, num_generations=2, save_steps=1, tokens_per_turn=48),
    )
    return replace(config, **changes)
