"""Peak memory of a training run, estimated before it starts, and the check that refuses one the machine cannot hold.

CPU training keeps, beside the process itself, the weights with their gradients and Adam's two moments
(``16`` bytes a parameter in fp32; GRPO adds the KL reference model's weights), and per token of a step
the activations of every layer and the logits over the vocabulary (several fp32 copies: the logits,
their log-softmax and its gradient), which dominate for a model with a large vocabulary (SmolLM2:
49,152 tokens). :func:`estimate_peak_bytes` adds these up, with coefficients calibrated by
``benchmarks/train_memory.py`` (each measured peak of docs/results/log.md lies below its estimate);
:func:`check_memory` raises :class:`~agentgym_budget.errors.TrainingMemoryError` naming the flags to
change when the estimate of a :class:`~agentgym_budget.train.config.TrainConfig` exceeds the machine's
memory (``agentgym-budget train`` also warns when it exceeds what other processes leave available now).

Example:
    >>> tiny = ModelSize(parameters=460_000, vocab=1024, hidden=128, layers=2, heads=4)
    >>> round(estimate_peak_bytes(tiny, "sft", batch=8, length=2048) / 2**30, 1)
    2.1
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.errors import InvalidOptionError, TrainingMemoryError

__all__ = ["ModelSize", "available_bytes", "check_memory", "estimate_peak_bytes"]

PROCESS_BYTES = 0.7 * 2**30
"""The training process before any model: Python, torch, transformers, TRL, the game engines (0.45-0.55 GB
measured)."""
STATE_BYTES_PER_PARAMETER = {"sft": 16, "grpo": 24}
"""fp32 weights, gradients and Adam's two moments (GRPO: and the reference model's weights, and the rollouts' caches)."""
LOGIT_COPIES = 4
"""fp32 values per token and vocabulary entry alive at the peak (logits, log-softmax, their gradients)."""
ACTIVATIONS_PER_LAYER = 12
"""fp32 values per token, layer and unit of width kept for the backward pass."""
ATTENTION_PER_LAYER = 1
"""fp32 attention scores per token, layer, head and token of the sequence kept for the backward pass."""
PROMPT_TOKENS = 512
"""GRPO: tokens of the prompt (system prompt, tool schema, first observation: about 450 in SmolLM2's tokenizer on
Coin Collector) before each completion."""

NAMED_MODELS = {"smollm2-135m": (134_515_008, 49_152, 576, 30, 9)}
"""Sizes of the named models of :mod:`agentgym_budget.agents.pretrained`: parameters, vocabulary, width, layers,
heads."""


@dataclass(frozen=True)
class ModelSize:
    """What the memory of training a model depends on.

    Attributes:
        parameters: Trainable parameters.
        vocab: Vocabulary size (the width of the logits).
        hidden: Width of the hidden states.
        layers: Transformer layers.
        heads: Attention heads.
    """

    parameters: int
    vocab: int
    hidden: int
    layers: int
    heads: int


def estimate_peak_bytes(model: ModelSize, phase: str, batch: int, length: int) -> float:
    """Estimated peak resident bytes of training ``model`` on ``batch`` sequences of ``length`` tokens.

    Args:
        model: The model's sizes.
        phase: ``"sft"`` or ``"grpo"`` (GRPO also holds the KL reference model).
        batch: Sequences a step (SFT batch size; GRPO episodes a step).
        length: Tokens of each (SFT ``max_length``; GRPO ``max_completion_length``, after a prompt of
            :data:`PROMPT_TOKENS`).
    """
    if phase not in STATE_BYTES_PER_PARAMETER:
        raise InvalidOptionError(f"estimate_peak_bytes: phase must be 'sft' or 'grpo', got {phase!r}.")
    # GRPO reads the prompt before each completion but takes the logits of the completion only.
    sequence = length + (PROMPT_TOKENS if phase == "grpo" else 0)
    per_token = (
        ACTIVATIONS_PER_LAYER * model.hidden * model.layers
        + ATTENTION_PER_LAYER * model.heads * model.layers * sequence
    )
    logits = LOGIT_COPIES * model.vocab * length
    state = STATE_BYTES_PER_PARAMETER[phase] * model.parameters
    return PROCESS_BYTES + state + 4 * batch * (sequence * per_token + logits)


def _directory_size(directory: Path) -> ModelSize:
    """Sizes of a local Hugging Face model from its ``config.json`` (parameters from its weight files)."""
    try:
        config = json.loads((directory / "config.json").read_text())
        text = config.get("text_config", config)
        keys = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads")
        vocab, hidden, layers, heads = (int(text[k]) for k in keys)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise InvalidOptionError(f"{directory}: config.json lacks the sizes of a causal LM ({err}).") from None
    weights = sum(p.stat().st_size for p in directory.glob("*.safetensors")) or sum(
        p.stat().st_size for p in directory.glob("*.bin")
    )
    width = 2 if str(text.get("dtype", text.get("torch_dtype", ""))) in ("bfloat16", "float16") else 4
    return ModelSize(weights // width, vocab, hidden, layers, heads)


def _model_size(config: Any) -> ModelSize | None:
    """Sizes of the base of a :class:`~agentgym_budget.train.config.TrainConfig` (``None``: not known before loading,
    e.g. a ``.gguf`` file)."""
    start = config.init or config.model
    if start is None:
        tiny = config.tiny
        per_layer = 12 * tiny.hidden_size**2
        parameters = tiny.vocab_size * tiny.hidden_size + tiny.layers * per_layer
        return ModelSize(parameters, tiny.vocab_size, tiny.hidden_size, tiny.layers, tiny.heads)
    if start in NAMED_MODELS:
        return ModelSize(*NAMED_MODELS[start])
    directory = Path(start)
    return _directory_size(directory) if (directory / "config.json").is_file() else None


def _meminfo(key: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine_bytes() -> int:
    """The machine's physical memory (``MemTotal`` of ``/proc/meminfo``)."""
    return _meminfo("MemTotal") or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def available_bytes() -> int:
    """Memory available to a new process now (``MemAvailable``: what other processes leave free)."""
    return _meminfo("MemAvailable") or machine_bytes()


def _phases(config: Any) -> list[tuple[str, int, int, str]]:
    """``(phase, batch, length, flags to change)`` of each phase ``config`` runs."""
    phases = []
    if config.init is None:
        phases.append(("sft", config.sft.batch_size, config.sft.max_length, "--sft-batch-size, --sft-max-length"))
    if config.recipe != "sft":
        turns = config.largest_budget + 1
        length = config.grpo.tokens_per_turn * turns
        batch = getattr(config.grpo, "micro_batch", None) or config.grpo.episodes_per_step  # rollouts per pass
        phases.append(("grpo", batch, length, "--rl-micro-batch, --rl-episodes-per-step, --rl-tokens-per-turn"))
    return phases


def check_memory(config: Any, available: int | None = None) -> dict[str, float]:
    """Estimate every phase of ``config`` and refuse it when one would not fit in ``available`` bytes.

    Args:
        config: A :class:`~agentgym_budget.train.config.TrainConfig`.
        available: Bytes the run may use (default :func:`machine_bytes`, the machine's memory: what other
            processes hold changes while a run goes on; the command warns when the estimate exceeds what they
            leave free now).

    Returns:
        The estimated peak bytes by phase (empty when the base's sizes are not known before loading it).

    Raises:
        TrainingMemoryError: An estimate exceeds ``available``; the message gives the sizes and the flags.

    Example:
        >>> from agentgym_budget.train.config import TrainConfig
        >>> from agentgym_budget.train.sft import SFTSettings
        >>> config = TrainConfig("TextWorld-CoinCollector-v0", recipe="sft", model="smollm2-135m",
        ...                      sft=SFTSettings(batch_size=8, max_length=2048))
        >>> check_memory(config, available=24 * 2**30)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.TrainingMemoryError: SFT of smollm2-135m (134.5 M parameters, vocabulary 49152) with 8 sequences of 2048 tokens a step needs about 61.1 GB at its peak; the machine has 24.0 GB. Lower --sft-batch-size, --sft-max-length (or use --preset smollm2).
    """
    model = _model_size(config)
    if model is None:
        return {}
    room = machine_bytes() if available is None else available
    estimates = {}
    for phase, batch, length, flags in _phases(config):
        estimates[phase] = need = estimate_peak_bytes(model, phase, batch, length)
        if need > room:
            name = config.init or config.model or "the built-in tiny model"
            raise TrainingMemoryError(
                f"{phase.upper() if phase == 'sft' else 'GRPO'} of {name} ({model.parameters / 1e6:.1f} M parameters, "
                f"vocabulary {model.vocab}) with {batch} sequences of {length} tokens a step needs about "
                f"{need / 2**30:.1f} GB at its peak; the machine has {room / 2**30:.1f} GB. Lower {flags}"
                + (" (or use --preset smollm2)." if config.model == "smollm2-135m" else ".")
            )
    return estimates
