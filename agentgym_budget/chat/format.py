"""The chat format of a trained model, and its conversations as token ids exactly as TRL's GRPO builds them.

A model trained by :mod:`agentgym_budget.train` plays through one tool, ``act(command)``
(:mod:`agentgym_budget.chat.tool`), with its system prompt and the environment's text layout. :class:`ChatFormat` records that format beside the weights
(``agentgym_chat.json``), so an ``hf:PATH`` agent plays the model the way it was trained.

TRL's multi-turn GRPO does not re-render a conversation after each tool call: it extends the token
ids with the model's own completion (up to and including its end-of-turn token) and then the tool
answer's *suffix* ids (the chat template's rendering of a tool message after an assistant turn, up to
the next generation prompt). :class:`ConversationTokens` builds conversations the same way, so a
model sees at evaluation the very token sequence it was trained on.

Example:
    >>> ChatFormat().to_json()["tool"]
    'act'
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from agentgym_budget.chat.tool import DEFAULT_SYSTEM_PROMPT, act_tool_schema, tool_call
from agentgym_budget.errors import DataError
from agentgym_budget.storage.safe_json import read_json_file

__all__ = ["ChatFormat", "ConversationTokens"]

FORMAT_FILE = "agentgym_chat.json"
"""The file beside a trained model's weights that holds its :class:`ChatFormat`."""


@dataclass(frozen=True)
class ChatFormat:
    """How episodes were shown to a model during training.

    Attributes:
        system_prompt: The system message.
        show_actions: The admissible actions were listed in the text.
        show_budget: The budget was shown (``[Turns left: k of T]``) during training (informational:
            the evaluation command decides what the agent is shown).
        tool: The tool's name.
        env: The environment the model was trained on (informational).
    """

    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    show_actions: bool = True
    show_budget: bool = False
    tool: str = "act"
    env: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)

    def save(self, directory: str | Path) -> Path:
        """Write ``directory/agentgym_chat.json``; returns its path."""
        path = Path(directory) / FORMAT_FILE
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        return path

    @classmethod
    def load(cls, directory: str | Path) -> ChatFormat:
        """The format saved in ``directory`` (the defaults when there is none: any local model).

        Raises:
            DataError: The file exists but is not a format.
        """
        path = Path(directory) / FORMAT_FILE
        if not path.exists():
            return cls()
        try:
            data = read_json_file(path, what="chat format")
            known = {f.name for f in fields(cls)}
            if not isinstance(data, dict) or set(data) - known:
                raise ValueError(f"expected a JSON object with keys among {sorted(known)}")
            return cls(**data)
        except (ValueError, TypeError) as err:
            raise DataError(f"Cannot read the chat format {path}: {err}.") from err


class ConversationTokens:
    """Token ids of one episode's conversation, extended turn by turn as TRL's GRPO does.

    Args:
        tokenizer: The model's tokenizer (with a chat template that supports tools).
        chat_format: The model's :class:`ChatFormat`.
        first_text: The episode's first text (the user message).
    """

    def __init__(self, tokenizer: Any, chat_format: ChatFormat, first_text: str) -> None:
        self.tokenizer = tokenizer
        self.format = chat_format
        self.tools = [act_tool_schema()]
        messages = [{"role": "system", "content": chat_format.system_prompt}, {"role": "user", "content": first_text}]
        self.ids: list[int] = self._render(messages, generation_prompt=True)

    def _render(self, messages: Sequence[dict[str, Any]], *, generation_prompt: bool) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            list(messages),
            tools=self.tools,
            add_generation_prompt=generation_prompt,
            tokenize=True,
            return_dict=False,
        )
        return list(ids)

    def _trim_to_eos(self, ids: list[int]) -> list[int]:
        eos = self.tokenizer.eos_token_id
        ends = [i for i, token in enumerate(ids) if token == eos]
        return ids[: ends[-1] + 1] if ends else ids

    def copy(self) -> ConversationTokens:
        """An independent copy (same tokenizer and format, its own ids): a conversation that branches here."""
        twin = copy.copy(self)
        twin.ids = list(self.ids)
        return twin

    def add_completion(self, completion_ids: Sequence[int]) -> None:
        """Append the model's own completion (TRL keeps it verbatim, end-of-turn token included)."""
        self.ids.extend(int(t) for t in completion_ids)

    def add_call(self, command: str) -> None:
        """Append an assistant turn calling the tool with ``command`` (a turn played for the model)."""
        user = [{"role": "user", "content": "x"}]
        call = [
            *user,
            {"role": "assistant", "content": "", "tool_calls": [tool_call(self.format.tool, command=command)]},
        ]
        prefix = self._render(user, generation_prompt=True)
        full = self._trim_to_eos(self._render(call, generation_prompt=False))
        self.ids.extend(full[len(prefix) :] if full[: len(prefix)] == prefix else full)

    def add_tool_answer(self, text: str) -> None:
        """Append the tool's answer and the next generation prompt (TRL's tool suffix ids)."""
        self.add_tool_answers([text])

    def add_tool_answers(self, texts: Sequence[str]) -> None:
        """Append the answers to every call of the last reply and the next generation prompt, as TRL appends them
        (its ``_get_tool_suffix_ids``: one tool message per call, rendered after a reply with one call).

        Raises:
            DataError: The chat template does not extend a conversation by appending tool answers.
        """
        call = [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": "", "tool_calls": [tool_call(self.format.tool)]},
        ]
        prefix = self._trim_to_eos(self._render(call, generation_prompt=False))
        answers = [{"role": "tool", "name": self.format.tool, "content": text} for text in texts]
        full = self._render([*call, *answers], generation_prompt=True)
        if full[: len(prefix)] != prefix:
            raise DataError("The chat template does not extend a conversation by appending tool answers.")
        self.ids.extend(full[len(prefix) :])
