"""Test helpers for the verl agent loop: a local ChatML tokenizer and a scripted verl server manager."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CHATML = (
    "{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}"
)


def build_tokenizer() -> Any:
    """A byte-level BPE tokenizer trained here (no download) with a ChatML (Qwen2-style) template."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = ["Action: go west", "Action: take coin", "You are in a room. There is a door to the east.", CHATML]
    backend.train_from_iterator(texts, trainer=trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tokenizer.chat_template = CHATML
    return tokenizer


class ScriptedServer:
    """A verl server manager whose model replies are given in advance (each ends with ``<|im_end|>``).

    With ``repeat`` the last reply is given forever (for concurrent episodes through verl's worker).
    Records each call's ``prompt_ids``, the reply tokens and the log-probs it returned.
    """

    def __init__(self, tokenizer: Any, replies: Sequence[str], *, repeat: bool = False) -> None:
        self.tokenizer = tokenizer
        self.script = list(replies)
        self.repeat = repeat
        self.calls: list[list[int]] = []
        self.replies: list[list[int]] = []
        self.logprobs: list[list[float]] = []

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict, **kwargs: Any) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        if self.repeat:
            self.script.append(self.script[-1])
        if len(self.calls) >= len(self.script):
            raise AssertionError(f"the loop asked for reply {len(self.calls) + 1}; the script has {len(self.script)}")
        text = self.script[len(self.calls)]
        tokens = [*self.tokenizer.encode(text, add_special_tokens=False), self.tokenizer.eos_token_id]
        logprobs = [-0.01 * (len(self.calls) + 1) - 0.001 * i for i in range(len(tokens))]
        self.calls.append(list(prompt_ids))
        self.replies.append(tokens)
        self.logprobs.append(logprobs)
        return TokenOutput(token_ids=tokens, log_probs=logprobs, stop_reason="completed")


def trainer_config(tokenizer: Any, model_dir: str, overrides: Sequence[str] = ()) -> Any:
    """verl's own ``ppo_trainer`` config composed with hydra, its model a tiny local Qwen2 config + ``tokenizer``."""
    import os

    import transformers
    import verl
    from hydra import compose, initialize_config_dir

    tokenizer.save_pretrained(model_dir)
    transformers.Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        architectures=["Qwen2ForCausalLM"],
    ).save_pretrained(model_dir)
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose(
            "ppo_trainer",
            overrides=[f"actor_rollout_ref.model.path={model_dir}", "actor_rollout_ref.rollout.name=vllm", *overrides],
        )
