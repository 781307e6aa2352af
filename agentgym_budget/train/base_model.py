"""Base models: the built-in tiny causal LM (built locally, no download), or any local Hugging Face causal LM.

:func:`build_base_model` trains a byte-level BPE tokenizer on the family's text (the SFT
conversations rendered with the chat template, tool schema and budget notices included, so they take
few tokens) and builds a randomly initialised Qwen2 causal LM of :class:`TinyModelSpec`'s size
(:func:`~agentgym_budget.train.tiny_lm.build_tiny_lm`). :func:`~agentgym_budget.agents.hf_model.load_causal_lm` loads a model
directory from disk only (``local_files_only``: nothing is downloaded) and checks that its chat
template can render tool calls (TRL needs that). :func:`save_model` writes a model, its tokenizer and
its :class:`~agentgym_budget.chat.format.ChatFormat`.

Needs the ``trl`` extra.

Example::

    model, tokenizer = build_base_model(conversations, TinyModelSpec(hidden_size=96), seed=0)
    save_model(model, tokenizer, "runs/sft/final", ChatFormat(env="TextWorld-CoinCollector-v0(level=3)"))
    model, tokenizer = load_causal_lm("runs/sft/final")
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.chat.tool import act_tool_schema
from agentgym_budget.dependencies import require
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.train.tiny_lm import build_tiny_lm

__all__ = ["TinyModelSpec", "build_base_model", "save_model"]

_FEATURE = "Training and hf: agents"


@dataclass(frozen=True)
class TinyModelSpec:
    """Size of the built-in tiny model (a Qwen2 causal LM).

    Attributes:
        vocab_size: Tokenizer vocabulary (bytes and special tokens included).
        hidden_size: Width.
        layers: Transformer layers.
        heads: Attention heads (``hidden_size`` must be a multiple).
        max_positions: Longest sequence in tokens.

    Raises:
        InvalidOptionError: A size is not a positive integer, or heads do not divide the width.

    Example:
        >>> TinyModelSpec(hidden_size=100, heads=8)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: TinyModelSpec: hidden_size=100 must be a multiple of heads=8.
    """

    vocab_size: int = 1024
    hidden_size: int = 128
    layers: int = 2
    heads: int = 4
    max_positions: int = 4096

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidOptionError(f"TinyModelSpec: {name} must be a positive integer, got {value!r}.")
        if self.hidden_size % self.heads:
            raise InvalidOptionError(
                f"TinyModelSpec: hidden_size={self.hidden_size} must be a multiple of heads={self.heads}."
            )
        if self.vocab_size < 300:
            raise InvalidOptionError(
                f"TinyModelSpec: vocab_size={self.vocab_size} is below the 256 bytes plus special tokens; use >= 300."
            )


def corpus(conversations: Iterable[Sequence[dict[str, Any]]], chat_format: ChatFormat) -> list[str]:
    """Texts the tokenizer learns from: each conversation rendered with the Qwen2.5 chat template and the tool.

    Budget notices (``[Turns left: k of T]``) are added so a shown budget encodes compactly too.
    """
    templates = require("trl.chat_template_utils", extra="trl", feature=_FEATURE, package="trl", min_python=(3, 11))
    from transformers.utils.chat_template_utils import render_jinja_template

    tools = [act_tool_schema()]
    texts = []
    for conversation in conversations:
        rendered = render_jinja_template(
            [list(conversation)], tools=tools, chat_template=templates.qwen2_5_chat_template
        )
        texts.append(rendered[0][0] if isinstance(rendered, tuple) else rendered[0])
    texts.append(chat_format.system_prompt)
    texts += [f"[Turns left: {left} of {total}]" for total in range(1, 41) for left in range(total + 1)]
    return texts


def build_base_model(
    conversations: Sequence[Sequence[dict[str, Any]]], spec: TinyModelSpec, *, chat_format: ChatFormat, seed: int = 0
) -> tuple[Any, Any]:
    """``(model, tokenizer)``: a random tiny Qwen2 and a tokenizer trained on ``conversations`` (see module doc).

    Raises:
        InvalidOptionError: No conversation to learn the tokenizer from.
    """
    if not conversations:
        raise InvalidOptionError("build_base_model needs at least one conversation to train the tokenizer on.")
    return build_tiny_lm(
        corpus(conversations, chat_format),
        seed=seed,
        vocab_size=spec.vocab_size,
        hidden_size=spec.hidden_size,
        layers=spec.layers,
        heads=spec.heads,
        max_positions=spec.max_positions,
    )


def parameter_count(model: Any) -> int:
    """Number of parameters of ``model``."""
    return sum(p.numel() for p in model.parameters())


def save_model(model: Any, tokenizer: Any, directory: str | Path, chat_format: ChatFormat) -> Path:
    """Save ``model``, ``tokenizer`` and ``chat_format`` into ``directory`` (created); returns it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    chat_format.save(directory)
    return directory
