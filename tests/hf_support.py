"""Shared by the ``hf:`` agent tests (``tests/test_agents_hf*.py``): the environment they play, their checkpoint.

The checkpoint itself is the session fixture ``checkpoint`` of ``tests/conftest.py``, built once by
:func:`save_tiny_checkpoint`; import this module only where ``trl`` is installed.
"""

from __future__ import annotations

from pathlib import Path

from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.trl import expert_conversations

__all__ = ["CONFIG", "ENV", "save_tiny_checkpoint"]

ENV = ("TextWorld-CoinCollector-v0", "level=1")
CONFIG = SessionConfig(ENV[0], env_kwargs=ENV[1])


def save_tiny_checkpoint(directory: Path) -> Path:
    """A random tiny Qwen2 and its tokenizer built locally, saved with save_pretrained and a ChatFormat."""
    import torch

    from agentgym_budget.chat.tool import tool_call_text
    from agentgym_budget.train.tiny_lm import build_tiny_lm

    torch.set_num_threads(1)
    conversations = expert_conversations(CONFIG, [0, 1])
    texts = [m["content"] for c in conversations for m in c]
    texts += [tool_call_text(m["tool_calls"][0]) for c in conversations for m in c if m.get("tool_calls")]
    model, tokenizer = build_tiny_lm(texts, seed=0, vocab_size=600, hidden_size=32, layers=1, heads=2)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    ChatFormat(env=CONFIG.ref.label).save(directory)
    return directory
