"""Trainer arguments that SFT and GRPO share: CPU training, checkpoints, seeds, progress.

TRL's configs default to bf16 autocast and activation (gradient) checkpointing, which made a small
model's training several times slower on CPU; both are off here. Checkpoints are saved every
``save_steps`` steps and the last two are kept (what resuming needs).

Example:
    >>> arguments = cpu_trainer_arguments(save_steps=10, seed=0, progress=False)
    >>> arguments["use_cpu"], arguments["bf16"], arguments["save_total_limit"]
    (True, False, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__: list[str] = []


def cpu_trainer_arguments(
    *, save_steps: int, seed: int, progress: bool, report_to: Sequence[str] = ()
) -> dict[str, Any]:
    """Keyword arguments for ``trl.SFTConfig`` / ``trl.GRPOConfig`` common to every training phase.

    Args:
        save_steps: Save a checkpoint every this many optimiser steps.
        seed: Seed of the weights' initialisation, sampling and data order.
        progress: Show the trainer's tqdm bar.
        report_to: Loggers of ``transformers`` to send the logs to as well (``"tensorboard"``, ``"wandb"``,
            ...; its library must be installed); TensorBoard writes to ``<output_dir>/runs/``.
    """
    return {
        "save_strategy": "steps",
        "save_steps": save_steps,
        "save_total_limit": 2,
        "report_to": list(report_to),
        "use_cpu": True,
        "bf16": False,
        "activation_checkpointing": False,
        "seed": seed,
        "data_seed": seed,
        "disable_tqdm": not progress,
        "dataloader_num_workers": 0,
    }
