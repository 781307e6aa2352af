"""Supervised fine-tuning of the base policy with TRL's ``SFTTrainer`` on tool-calling conversations.

The conversations (:mod:`agentgym_budget.train.trajectories`) are rendered with the ``act`` tool's
schema and tokenized by :func:`tokenized_examples`; the loss covers the assistant turns only (the
chat template's generation markers, TRL's training variant of the template when the model's own has
none, exactly what TRL's ``assistant_only_loss`` trains), minus the ``masked_turns`` given: e.g. a
noisy demonstrator's errors, so the model learns the recoveries that follow them but not the errors.
Checkpoints are saved every ``save_steps`` into ``checkpoints/``; :func:`run_sft` resumes from the
last one when asked (TRL's ``resume_from_checkpoint``: weights, optimiser, scheduler, RNG
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
from agentgym_budget.runner.quiet import quiet_progress
from agentgym_budget.train.device import DeviceSettings, trainer_arguments
from agentgym_budget.train.metrics import JsonlLog, metrics_callback
from agentgym_budget.train.quiet import bar_only, quiet_trainer

__all__ = ["SFTSettings", "run_sft"]


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
    masked_turns: Sequence[Sequence[int]] | None = None,
) -> Any:
    """Fine-tune ``model`` on ``conversations``; returns TRL's ``TrainOutput``.

    Writes ``out/checkpoints/checkpoint-N`` and appends every log to ``out/metrics.jsonl``.
    ``masked_turns`` (one list per conversation) names tool-calling turns left out of the loss.
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
    dataset = datasets.Dataset.from_list(tokenized_examples(tokenizer, conversations, masked_turns))
    args = _sft_arguments(trl, settings, out, seed=seed, progress=progress, report_to=report_to, device=device)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    with quiet_progress(not progress):
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
        quiet_trainer(trainer) if not progress else bar_only(trainer)
        checkpoint = last_checkpoint(out / "checkpoints") if resume else None
        # Without a checkpoint training starts over, so a stopped attempt's lines go too.
        JsonlLog(out / "metrics.jsonl").truncate_after(checkpoint_step(checkpoint) if checkpoint else 0)
        if checkpoint is not None:
            _restore_token_count(trainer, checkpoint)
        result = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    trainer.model.eval()
    return result


def tokenized_examples(
    tokenizer: Any,
    conversations: Sequence[Sequence[dict[str, Any]]],
    masked_turns: Sequence[Sequence[int]] | None = None,
) -> list[dict[str, list[int]]]:
    """``input_ids`` and ``assistant_masks`` of each conversation, as TRL's ``SFTTrainer`` takes pre-tokenized data.

    The mask marks the assistant turns (the template's ``{% generation %}`` spans), except the tool-calling turns
    listed in ``masked_turns[i]`` for conversation ``i`` (0 is its first tool call).

    Raises:
        DataError: ``masked_turns`` does not give one list per conversation, names a turn the conversation does
            not have, or the template marks no assistant tokens.
    """
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    masked_turns = [() for _ in conversations] if masked_turns is None else masked_turns
    if len(masked_turns) != len(conversations):
        raise DataError(f"masked_turns has {len(masked_turns)} lists for {len(conversations)} conversations.")
    own = tokenizer.chat_template
    template = None if has_generation_markers(own) else get_training_chat_template(tokenizer)
    examples = []
    for index, (conversation, masked) in enumerate(zip(conversations, masked_turns, strict=True)):
        rendered = tokenizer.apply_chat_template(
            json.loads(json.dumps(list(conversation))),
            tools=[act_tool_schema()],
            chat_template=template,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        mask = list(rendered["assistant_masks"])
        spans = _assistant_spans(mask)
        assistant = [message for message in conversation if message["role"] == "assistant"]
        tool_calls = [i for i, message in enumerate(assistant) if message.get("tool_calls")]
        if len(spans) != len(assistant):
            raise DataError(
                f"Conversation {index}: the chat template marks {len(spans)} assistant spans for {len(assistant)} "
                "assistant messages; SFT needs a template with {% generation %} markers around each assistant turn."
            )
        for turn in masked:
            if not 0 <= turn < len(tool_calls):
                raise DataError(f"Conversation {index} has {len(tool_calls)} tool calls; cannot mask turn {turn}.")
            start, end = spans[tool_calls[turn]]
            mask[start:end] = [0] * (end - start)
        examples.append({"input_ids": list(rendered["input_ids"]), "assistant_masks": mask})
    return examples


def _assistant_spans(mask: Sequence[int]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of 1s in ``mask``."""
    spans, start = [], None
    for position, bit in enumerate([*mask, 0]):
        if bit and start is None:
            start = position
        elif not bit and start is not None:
            spans.append((start, position))
            start = None
    return spans


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
