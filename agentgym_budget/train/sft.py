"""Supervised fine-tuning of the base policy with TRL's ``SFTTrainer`` on tool-calling conversations.

The conversations (:mod:`agentgym_budget.train.trajectories`) become a conversational dataset
(``messages`` plus the ``act`` tool's schema in ``tools``); the loss covers the assistant turns only
(``assistant_only_loss``: TRL swaps in the training variant of the chat template, with generation
markers). Checkpoints are saved every ``save_steps`` into ``checkpoints/``; :func:`run_sft` resumes
from the last one when asked (TRL's ``resume_from_checkpoint``: weights, optimiser, scheduler, RNG
states and the data position).

Example::

    result = run_sft(model, tokenizer, conversations, SFTSettings(steps=300), out="runs/sft", seed=0)
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.chat.tool import act_tool_schema
from agentgym_budget.dependencies import require
from agentgym_budget.errors import DataError
from agentgym_budget.train.device import DeviceSettings, trainer_arguments
from agentgym_budget.train.metrics import JsonlLog, metrics_callback
from agentgym_budget.train.quiet import quiet_trainer

__all__ = ["SFTSettings", "last_checkpoint", "run_sft"]


@dataclass(frozen=True)
class SFTSettings:
    """Hyper-parameters of supervised fine-tuning.

    Attributes:
        steps: Optimiser steps.
        batch_size: Conversations per step.
        learning_rate: Peak learning rate (cosine decay after a 5% warm-up).
        save_steps: Steps between checkpoints.
        max_length: Longest conversation in tokens (longer ones are truncated).
    """

    steps: int = 300
    batch_size: int = 8
    learning_rate: float = 2e-3
    save_steps: int = 100
    max_length: int = 2048


def last_checkpoint(directory: str | Path) -> Path | None:
    """The latest ``checkpoint-N`` directory TRL saved under ``directory`` (``None`` if there is none)."""
    from transformers.trainer_utils import get_last_checkpoint

    directory = Path(directory)
    if not directory.is_dir():
        return None
    found = get_last_checkpoint(str(directory))
    return Path(found) if found else None


def _sft_arguments(
    trl: Any,
    settings: SFTSettings,
    out: Path,
    *,
    seed: int,
    progress: bool,
    report_to: Sequence[str],
    device: DeviceSettings | None = None,
) -> Any:
    """TRL's ``SFTConfig`` for ``settings``: assistant-only loss, cosine schedule, checkpoints in ``out``, placed on
    ``device`` (default: the CPU)."""
    return trl.SFTConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=settings.steps,
        per_device_train_batch_size=settings.batch_size,
        learning_rate=settings.learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=max(1, settings.steps // 20),
        logging_steps=max(1, min(10, settings.steps // 10)),
        assistant_only_loss=True,
        max_length=settings.max_length,
        packing=False,
        **trainer_arguments(
            device or DeviceSettings(),
            save_steps=settings.save_steps,
            seed=seed,
            progress=progress,
            report_to=report_to,
        ),
    )


def run_sft(
    model: Any,
    tokenizer: Any,
    conversations: Sequence[Sequence[dict[str, Any]]],
    settings: SFTSettings,
    *,
    out: str | Path,
    seed: int = 0,
    resume: bool = True,
    progress: bool = True,
    callbacks: Sequence[Any] = (),
    report_to: Sequence[str] = (),
    device: DeviceSettings | None = None,
) -> Any:
    """Fine-tune ``model`` on ``conversations``; returns TRL's ``TrainOutput``.

    Writes ``out/checkpoints/checkpoint-N`` and appends every log to ``out/metrics.jsonl``.
    ``callbacks`` are extra ``transformers.TrainerCallback`` s; ``device`` places the training (default: the
    CPU, fp32; :mod:`agentgym_budget.train.device`).

    Raises:
        DataError: No conversation, or a chat template TRL cannot train assistant-only on.
        MissingDependencyError: The ``trl`` extra is missing.
    """
    trl = require("trl", extra="trl", feature="Supervised fine-tuning", min_python=(3, 11))
    datasets = require("datasets", extra="trl", feature="Supervised fine-tuning")
    if not conversations:
        raise DataError("No conversation to fine-tune on (the agent won no episode?): play more episodes.")
    out = Path(out)
    tools = json.dumps([act_tool_schema()])
    dataset = datasets.Dataset.from_list(
        [{"messages": json.loads(json.dumps(list(c))), "tools": tools} for c in conversations]
    )
    args = _sft_arguments(trl, settings, out, seed=seed, progress=progress, report_to=report_to, device=device)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    try:
        trainer = trl.SFTTrainer(
            model=model,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[metrics_callback(JsonlLog(out / "metrics.jsonl"), "sft"), *callbacks],
        )
    except ValueError as err:
        raise DataError(f"SFT cannot train on this model's chat template: {err}") from err
    if not progress:
        quiet_trainer(trainer)
    checkpoint = last_checkpoint(out / "checkpoints") if resume else None
    if checkpoint is not None:
        JsonlLog(out / "metrics.jsonl").truncate_after(checkpoint_step(checkpoint))
        _restore_token_count(trainer, checkpoint)
    result = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    trainer.model.eval()
    return result


def _restore_token_count(trainer: Any, checkpoint: Path) -> None:
    """Put back TRL's count of trained tokens (logged as ``num_tokens``; TRL does not save it)."""
    state = json.loads((checkpoint / "trainer_state.json").read_text())
    counts = [entry["num_tokens"] for entry in state.get("log_history", []) if "num_tokens" in entry]
    if counts and hasattr(trainer, "_total_train_tokens"):
        trainer._total_train_tokens = int(counts[-1])


def checkpoint_step(checkpoint: str | Path) -> int:
    """The optimiser step of a ``checkpoint-N`` directory.

    Example:
        >>> checkpoint_step("runs/sft/checkpoints/checkpoint-40")
        40
    """
    return int(Path(checkpoint).name.rsplit("-", 1)[-1])
