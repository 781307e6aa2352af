"""Named sizes of the study: ``smoke`` (the tests' end-to-end run), ``default`` and ``full``.

A preset fixes the evaluation sizes, the number of training seeds per RL recipe and the training
steps; everything else (task, budgets, workers, seed) stays as given. ``default`` is sized for the
claims' headline contrasts (about 16 episodes per task and budget, 3 training seeds per RL recipe);
its wall time on a quiet 2-core machine has not been measured yet (target: 90 minutes).

Example:
    >>> preset_settings("smoke")["eval_samples"]
    2
    >>> preset_settings("default")["training_seeds"]
    3
"""

from __future__ import annotations

from typing import Any

from agentgym_budget.errors import InvalidOptionError

__all__ = ["preset_settings"]

PRESETS: dict[str, dict[str, Any]] = {
    "smoke": {
        "eval_tasks": 2,
        "eval_samples": 2,
        "eval_ks": (1, 2),
        "probe_states": 2,
        "recovery_states": 1,
        "training_seeds": 1,
        "sft_steps": 4,
        "rl_steps": 2,
        "train_tasks": 4,
    },
    "default": {
        "eval_tasks": 24,
        "eval_samples": 16,
        "eval_ks": (1, 2, 4),
        "probe_states": 40,
        "recovery_states": 20,
        "training_seeds": 3,
        "sft_steps": 350,
        "rl_steps": 60,
        "train_tasks": 100,
    },
    "full": {
        "eval_tasks": 60,
        "eval_samples": 32,
        "eval_ks": (1, 2, 4, 8),
        "probe_states": 100,
        "recovery_states": 50,
        "training_seeds": 5,
        "sft_steps": 700,
        "rl_steps": 120,
        "train_tasks": 200,
    },
}
"""Sizes of each preset."""


def preset_settings(name: str) -> dict[str, Any]:
    """A copy of the sizes of preset ``name``.

    Raises:
        InvalidOptionError: An unknown preset.
    """
    if name not in PRESETS:
        raise InvalidOptionError(f"Unknown study preset {name!r}; presets are {', '.join(PRESETS)}.")
    return dict(PRESETS[name])
