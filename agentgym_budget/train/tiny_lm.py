"""A tiny causal language model and tokenizer built locally (no download), for tests and benchmarks on CPU.

:func:`build_tiny_lm` trains a byte-level BPE tokenizer on the given texts (so any text encodes),
gives it TRL's Qwen2.5 chat template (tool calls as ``<tool_call>{json}</tool_call>``, which TRL knows
how to parse) and builds a randomly initialised :class:`transformers.Qwen2ForCausalLM` from a
config. :func:`imitate` fits it for a few steps on whole chat conversations (teacher forcing), so a
smoke-test model emits well-formed tool calls. Needs the ``trl`` extra (torch, transformers, trl).

Example::

    model, tokenizer = build_tiny_lm(["You are in a hall.", "go north"], seed=0)
    conversation = [{"role": "user", "content": "Goal: take the coin"},
                    {"role": "assistant", "content": "", "tool_calls": [tool_call("act", command="take coin")]}]
    imitate(model, tokenizer, [conversation], tools=[BudgetToolEnv(config).act], steps=100)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agentgym_budget.chat.tool import tool_call_text
from agentgym_budget.dependencies import require

__all__ = ["build_tiny_lm", "warm_tiny_lm"]

SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
)
"""Special tokens of the Qwen2.5 chat format, each one token in the tiny tokenizer."""

_FEATURE = "The tiny local language model"


def _libs() -> tuple[Any, Any, Any, Any]:
    torch = require("torch", extra="trl", feature=_FEATURE)
    transformers = require("transformers", extra="trl", feature=_FEATURE)
    tokenizers = require("tokenizers", extra="trl", feature=_FEATURE)
    templates = require("trl.chat_template_utils", extra="trl", feature=_FEATURE, package="trl", min_python=(3, 11))
    return torch, transformers, tokenizers, templates


def build_tiny_lm(
    texts: Iterable[str],
    *,
    seed: int = 0,
    vocab_size: int = 1024,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    max_positions: int = 4096,
) -> tuple[Any, Any]:
    """Return ``(model, tokenizer)``: a random Qwen2 causal LM and a BPE tokenizer trained on ``texts``.

    Args:
        texts: Text the tokenizer learns merges from (observations, prompts, and the outputs the model
            should learn, e.g. :func:`tool_call_text` of its tool calls).
        seed: Seed of the weights (same seed, same model).
        vocab_size: Target vocabulary size (the byte alphabet and special tokens included).
        hidden_size: Width of the model.
        layers: Transformer layers.
        heads: Attention heads.
        max_positions: Longest sequence (prompt plus completion) in tokens.
    """
    torch, transformers, tokenizers, templates = _libs()
    from tokenizers import decoders, models, pre_tokenizers, trainers

    backend = tokenizers.Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator([*texts, templates.qwen2_5_chat_template], trainer=trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        model_max_length=max_positions,
    )
    tokenizer.chat_template = templates.qwen2_5_chat_template
    config = transformers.Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|im_start|>"),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = transformers.Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def imitate(
    model: Any,
    tokenizer: Any,
    conversations: Sequence[Sequence[dict[str, Any]]],
    *,
    tools: Sequence[Any] = (),
    steps: int = 100,
    learning_rate: float = 3e-3,
    seed: int = 0,
) -> list[float]:
    """Fit ``model`` on the assistant turns of ``conversations`` (rendered with the chat template).

    Only assistant tokens are trained (the loss ignores prompts and tool results). Returns the loss
    of every step, so callers can check it went down.
    """
    torch, _, _, _ = _libs()

    def render(messages: Sequence[dict[str, Any]], prompt: bool) -> list[int]:
        return list(
            tokenizer.apply_chat_template(
                list(messages),
                tools=list(tools) or None,
                add_generation_prompt=prompt,
                tokenize=True,
                return_dict=False,
            )
        )

    examples = []
    for conversation in conversations:
        ids = render(conversation, False)
        labels = [-100] * len(ids)
        for end, message in enumerate(conversation, start=1):
            if message["role"] != "assistant":
                continue
            # What the model must produce after the generation prompt, up to and including its end token.
            prefix, upto = render(conversation[: end - 1], True), render(conversation[:end], False)
            start = next(
                (i for i, (a, b) in enumerate(zip(prefix, upto, strict=False)) if a != b), min(len(prefix), len(upto))
            )
            labels[start : len(upto)] = upto[start:]
        examples.append((torch.tensor([ids]), torch.tensor([labels])))
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    losses = []
    for _ in range(steps):
        ids, labels = examples[int(torch.randint(len(examples), (1,), generator=generator))]
        loss = model(input_ids=ids, labels=labels).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


def warm_tiny_lm(
    config: Any, *, seeds: Iterable[int] = range(4), steps: int = 120, seed: int = 0
) -> tuple[Any, Any, list[float]]:
    """A tiny model that already plays ``config`` through the TRL ``act`` tool: ``(model, tokenizer, losses)``.

    Builds the tokenizer on the expert's conversations (:func:`~agentgym_budget.integrations.trl.expert_conversations`
    of ``seeds``), then :func:`imitate` s them for ``steps`` steps, after which sampled replies are mostly
    well-formed ``act`` calls (the commands themselves are still poor). For smoke tests and benchmarks;
    set ``torch.set_num_threads(1)`` on a busy machine (a model this small runs fastest on one thread).
    """
    from agentgym_budget.integrations.trl import BudgetToolEnv, expert_conversations

    conversations = expert_conversations(config, seeds)
    texts = [message["content"] for conversation in conversations for message in conversation]
    texts += [
        tool_call_text(message["tool_calls"][0])
        for conversation in conversations
        for message in conversation
        if message.get("tool_calls")
    ]
    model, tokenizer = build_tiny_lm(texts, seed=seed)
    tools = [BudgetToolEnv(config).act]
    losses = imitate(model, tokenizer, conversations, tools=tools, steps=steps, seed=seed)
    return model, tokenizer, losses
