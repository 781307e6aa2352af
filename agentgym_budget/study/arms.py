"""The study's RL arms: each a recipe trained from the study's SFT model, and what the claims compare.

===================== ====================================================================================
arm                   training (all from ``sft/final``, same tasks and steps)
===================== ====================================================================================
``fixed``             GRPO, every episode at ``train_budget``
``budgetmix``         GRPO, each episode's budget drawn from ``budgets`` (BudgetMix)
``curriculum``        GRPO, ``budgets`` played in growing stages (AgentGym-RL's ScalingInter-RL schedule)
``budgetmix_turn``    ``budgetmix`` with turn-level credit (``credit="turn"``), the environment's reward
``budgetmix_process`` ``budgetmix_turn`` trained on the ProcessReward-shaped return (the process-supervision arm)
===================== ====================================================================================

The claim ``process_supervision`` compares ``budgetmix_process`` with ``budgetmix_turn`` (same credit, no process
signal), or with ``budgetmix`` when ``budgetmix_turn`` is not run. Under episode-level credit a potential-based
process reward cancels within a GRPO group (:mod:`agentgym_budget.train.credit`), so the process arm uses
turn-level credit; its comparison arm uses the same credit, so the claim isolates the process signal. The process
arms need a task whose ``progress`` moves before the end (TextWorld Cooking; Coin Collector with its default
``progress="plan"``, the share of the winning route walked; with ``progress="score"`` its progress is 0 until the
coin is taken, so its process signal is empty and both arms would train alike): :func:`check_arms` refuses them
there.

Example:
    >>> check_arms(("fixed", "budgetmix", "curriculum"), "TextWorld-CoinCollector-v0")
    ('fixed', 'budgetmix', 'curriculum')
    >>> check_arms(("fixed", "budgetmix_process"), "TextWorld-CoinCollector-v0", {"progress": "score"})
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: TextWorld-CoinCollector-v0 with progress='score' has a progress that stays 0 until the episode is won, so the process arms ['budgetmix_turn', 'budgetmix_process'] would train alike; run them with its default progress='plan' or on a task with a progress signal (e.g. TextWorld-Cooking-v0).
    >>> no_process_arm(("fixed", "budgetmix", "budgetmix_turn", "budgetmix_process"))
    'budgetmix_turn'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agentgym_budget.errors import InvalidOptionError, did_you_mean
from agentgym_budget.train.config import TrainConfig

__all__: list[str] = []

ARMS = ("fixed", "budgetmix", "curriculum", "budgetmix_turn", "budgetmix_process")
"""The RL arms a study can train (module docstring), in report order."""

DEFAULT_ARMS = ("fixed", "budgetmix", "curriculum")
"""The arms of a study by default (the process arms are opt-in: they need a task with a progress signal)."""

PROCESS_ARMS = ("budgetmix_turn", "budgetmix_process")

CONSTANT_PROGRESS = {"TextWorld-CoinCollector-v0": {"progress": "score"}}
"""Environments, with the arguments that make it so, whose ``progress`` stays 0 until the episode is won."""


def check_arms(arms: Sequence[str], env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """``arms`` in :data:`ARMS` order, checked (``env_kwargs``: the environment's arguments).

    Raises:
        InvalidOptionError: An unknown arm, no arm, ``fixed`` missing (the claims' RL agent), or a process arm on an
            environment whose progress is constant.

    Example:
        >>> check_arms(("budgetmix_process",), "TextWorld-Cooking-v0")
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: The study's arms must include 'fixed' (the RL agent of the claims), got ['budgetmix_process'].
    """
    unknown = [arm for arm in arms if arm not in ARMS]
    if unknown:
        hint = did_you_mean(str(unknown[0]), ARMS)
        raise InvalidOptionError(f"Unknown study arm(s) {unknown}.{hint} Arms: {', '.join(ARMS)}.")
    if "fixed" not in arms:
        raise InvalidOptionError(
            f"The study's arms must include 'fixed' (the RL agent of the claims), got {list(arms)}."
        )
    short, kwargs = env_id.split("/")[-1], dict(env_kwargs or {})
    constant = CONSTANT_PROGRESS.get(short)
    process = any(arm in PROCESS_ARMS for arm in arms)
    if process and constant is not None and all(kwargs.get(k) == v for k, v in constant.items()):
        setting = ", ".join(f"{k}={v!r}" for k, v in constant.items())
        raise InvalidOptionError(
            f"{short} with {setting} has a progress that stays 0 until the episode is won, so the process arms "
            f"{list(PROCESS_ARMS)} would train alike; run them with its default progress='plan' or on a task "
            "with a progress signal (e.g. TextWorld-Cooking-v0)."
        )
    return tuple(arm for arm in ARMS if arm in arms)


def no_process_arm(arms: Sequence[str]) -> str:
    """The arm ``process_supervision`` compares the process arm with (module docstring)."""
    return "budgetmix_turn" if "budgetmix_turn" in arms else "budgetmix"


def arm_config(
    train: TrainConfig, arm: str, *, train_budget: int, budgets: tuple[int, ...], init: str | None
) -> TrainConfig:
    """The :class:`TrainConfig` of ``arm``: the study's shared settings ``train``, RL from ``init``.

    Example:
        >>> base = TrainConfig("TextWorld-Cooking-v0", "difficulty=1", recipe="sft", budget=8)
        >>> config = arm_config(base, "budgetmix_process", train_budget=6, budgets=(4, 8), init="sft/final")
        >>> config.recipe, config.budgets, config.process_reward, config.grpo.credit
        ('budgetmix', (4, 8), True, 'turn')
    """
    if arm not in ARMS:
        raise InvalidOptionError(f"Unknown study arm {arm!r}; arms: {', '.join(ARMS)}.")
    if arm == "fixed":
        return replace(train, recipe="fixed", budget=train_budget, budgets=None, init=init, model=None)
    recipe = "curriculum" if arm == "curriculum" else "budgetmix"
    config = replace(train, recipe=recipe, budget=None, budgets=budgets, init=init, model=None)
    if arm in PROCESS_ARMS:
        config = replace(config, grpo=replace(config.grpo, credit="turn"), process_reward=arm == "budgetmix_process")
    return config
