"""What a scoring policy reads: its format beside the weights, and an episode's prompt as token ids that only grow.

The prompt is a chat in the model's own template: a system message (:class:`ScoringFormat`), the first
user message (goal, observation and the admissible actions:
:func:`~agentgym_budget.chat.tool.turn_text`), then per turn the command played as the assistant's
reply and the next observation as a user message. A candidate command is scored as the assistant's
reply: its tokens and the end-of-turn token (:meth:`PromptCodec.command`), the very ids appended to the
prompt when it is played, so the next turn reads only the tokens added since (:class:`EpisodePrompt`).

Bounded behaviour on hostile input:

* a command is scored on its first ``command_tokens`` tokens (64 by default) and the end-of-turn token;
  text that is not valid UTF-8 (lone surrogates) is read with replacement characters;
* a prompt that would not leave room for the longest candidate in the model's context drops its oldest
  turns (the first message, with the goal, is kept); if the first message and the last turn alone do not fit,
  the prompt keeps its last tokens. Each cut is counted (``context_cuts``) and the next turn reads the
  prompt whole once.

Example:
    >>> ScoringFormat().show_actions
    True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from agentgym_budget.chat.tool import turn_text
from agentgym_budget.errors import DataError
from agentgym_budget.storage.safe_json import read_json_file

__all__: list[str] = []

SCORING_FORMAT_FILE = "agentgym_scoring.json"
"""The file beside a scoring policy's weights that holds its :class:`ScoringFormat`."""

DEFAULT_SCORING_SYSTEM = (
    "You are playing a text-based game. Each turn, reply with exactly one of the admissible commands."
)
"""The system message of a scoring policy (unless its format says otherwise)."""

COMMAND_TOKENS = 64
"""Tokens of a command that are scored (a longer command is scored on its first ones)."""


def clean_text(text: object) -> str:
    """``text`` as a string a tokenizer accepts (lone surrogates replaced).

    Example:
        >>> clean_text("go \\ud800east")
        'go ?east'
    """
    return str(text).encode("utf-8", "replace").decode("utf-8")


@dataclass(frozen=True)
class ScoringFormat:
    """How episodes are shown to a scoring policy.

    Attributes:
        system_prompt: The system message.
        show_actions: List the admissible actions in each user message.
        history: Show the episode's past turns (the prompt grows by each turn, read once: append-only); without,
            each turn's prompt is the goal and the current observation alone, read whole every turn.
        env: The environment the policy was trained on (informational).
    """

    system_prompt: str = DEFAULT_SCORING_SYSTEM
    show_actions: bool = True
    history: bool = True
    env: str = ""

    def save(self, directory: str | Path) -> Path:
        """Write ``directory/agentgym_scoring.json``; returns its path."""
        path = Path(directory) / SCORING_FORMAT_FILE
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")
        return path

    @classmethod
    def load(cls, directory: str | Path) -> ScoringFormat:
        """The format saved in ``directory`` (the defaults when there is none).

        Raises:
            DataError: The file exists but is not a format.
        """
        path = Path(directory) / SCORING_FORMAT_FILE
        if not path.exists():
            return cls()
        data = read_json_file(path, what="scoring format")
        known = {f.name for f in fields(cls)}
        types = {"system_prompt": str, "show_actions": bool, "history": bool, "env": str}
        if not isinstance(data, dict) or set(data) - known or any(not isinstance(v, types[k]) for k, v in data.items()):
            raise DataError(
                f"Cannot read the scoring format {path}: expected a JSON object with keys among {sorted(known)}."
            )
        return cls(**data)


class PromptCodec:
    """A tokenizer's chat template cut into the pieces an append-only prompt needs.

    Args:
        tokenizer: The model's tokenizer (with a chat template).
        scoring_format: The policy's :class:`ScoringFormat`.
        command_tokens: Tokens of a command that are scored.

    Raises:
        DataError: The tokenizer has no end-of-sequence token, or its template does not extend a chat by appending.
    """

    def __init__(self, tokenizer: Any, scoring_format: ScoringFormat, command_tokens: int = COMMAND_TOKENS) -> None:
        if tokenizer.eos_token_id is None:
            raise DataError("score: the tokenizer has no end-of-sequence token to end a command with.")
        self.tokenizer, self.format, self.command_tokens = tokenizer, scoring_format, int(command_tokens)
        self.end = int(tokenizer.eos_token_id)
        self._system = [{"role": "system", "content": scoring_format.system_prompt}]
        exchange = [*self._system, {"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
        self._exchange = exchange
        self._exchange_ids = self._trim(self._render(exchange, generation_prompt=False))

    def _render(self, messages: Sequence[dict[str, str]], *, generation_prompt: bool) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            list(messages), add_generation_prompt=generation_prompt, tokenize=True, return_dict=False
        )
        return [int(i) for i in ids]

    def _trim(self, ids: list[int]) -> list[int]:
        ends = [i for i, token in enumerate(ids) if token == self.end]
        return ids[: ends[-1] + 1] if ends else ids

    def head(self, text: str) -> list[int]:
        """The system message, the first user message ``text`` and the assistant's header."""
        return self._render([*self._system, {"role": "user", "content": clean_text(text)}], generation_prompt=True)

    def user(self, text: str) -> list[int]:
        """What follows a played command's end-of-turn token: the user message ``text`` and the assistant's header.

        Raises:
            DataError: The template does not render a longer chat as an extension of a shorter one.
        """
        full = self._render([*self._exchange, {"role": "user", "content": clean_text(text)}], generation_prompt=True)
        prefix = self._exchange_ids
        if full[: len(prefix)] != prefix:
            raise DataError("score: the chat template does not extend a conversation by appending messages.")
        return full[len(prefix) :]

    def command(self, text: str) -> tuple[int, ...]:
        """A command's scored ids: its first :attr:`command_tokens` tokens and the end-of-turn token."""
        ids = self.tokenizer.encode(clean_text(text), add_special_tokens=False)
        return (*(int(i) for i in ids[: self.command_tokens]), self.end)


def user_message(
    observation: str, commands: Sequence[str], *, goal: str | None, first: bool, scoring_format: ScoringFormat
) -> str:
    """A turn's user message: the observation and the candidate commands (and the goal on the first turn, or on
    every turn without history), as the agent and training both build it (:func:`~agentgym_budget.chat.tool.turn_text`).

    Example:
        >>> print(user_message("A hall.", ["go east", "look"], goal="Take the coin.", first=False,
        ...                    scoring_format=ScoringFormat()))
        A hall.
        <BLANKLINE>
        Admissible actions: go east | look
    """
    shown = commands if scoring_format.show_actions else ()
    return turn_text(observation, shown, goal=(goal or None) if first or not scoring_format.history else None)


def next_prompt(
    prompt: EpisodePrompt | None, codec: PromptCodec, text: str, played: str | None, context: int
) -> EpisodePrompt:
    """The prompt of a turn whose user message is ``text``: the episode's prompt grown by the command ``played`` and
    ``text`` (a new prompt on the first turn, or on every turn without history)."""
    if prompt is None or not codec.format.history:
        return EpisodePrompt(codec, text, context)
    prompt.add_turn(played or "", text)
    return prompt


class EpisodePrompt:
    """One episode's prompt: the first message, then per turn the command played and the next user message.

    Args:
        codec: The model's :class:`PromptCodec`.
        first_text: The first user message.
        context: Longest sequence the model reads (prompt and a candidate).
    """

    def __init__(self, codec: PromptCodec, first_text: str, context: int) -> None:
        self.codec, self.context = codec, int(context)
        self.head = codec.head(first_text)
        self.turns: list[list[int]] = []
        self.first_kept = 0
        self.cuts = 0
        self._ids = list(self.head)
        self._left_cut = 0

    @property
    def ids(self) -> list[int]:
        """The prompt's token ids (after any cut)."""
        return self._ids[self._left_cut :]

    def add_turn(self, command: str, text: str) -> None:
        """Append ``command`` as played (its scored ids) and the next user message ``text``."""
        segment = [*self.codec.command(command), *self.codec.user(text)]
        self.turns.append(segment)
        self._ids.extend(segment)

    def fit(self, room: int) -> bool:
        """Make room for ``room`` more tokens within the context (see the module docstring); whether it cut."""
        limit = max(1, self.context - room)
        if len(self.ids) <= limit:
            return False
        while self.first_kept < len(self.turns) - 1 and len(self._ids) > limit:
            self.first_kept += 1
            self._ids = [*self.head, *(t for turn in self.turns[self.first_kept :] for t in turn)]
        self._left_cut = max(0, len(self._ids) - limit)
        self.cuts += 1
        return True
