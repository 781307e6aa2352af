"""Prompts for chat-model agents, and extracting the action from a model's reply.

:class:`PromptTemplate` turns an episode into chat messages: a system message with the goal, the
last ``history`` turns as user (observation) / assistant (``Action: ...``) pairs, and a user
message with the current observation, the admissible actions and, when the budget is shown, the
turns left. Templates are ``str.format`` strings; fields:

* ``system``: ``{goal}``;
* ``turn``: ``{observation}``, ``{actions}`` (the admissible-actions block or ``""``),
  ``{budget}`` (the budget block or ``""``);
* ``actions_block``: ``{actions}`` (the admissible actions joined by ``" | "``);
* ``budget_block``: ``{turns_left}``, ``{max_turns}``;
* ``history_action``: ``{action}``.

:func:`extract_action` reads the command from a reply: it drops ``<think>...</think>`` blocks,
takes the last ``Action: ...`` line (or else the last non-empty line), strips markdown and quotes,
and returns the admissible action's own spelling when the text matches one up to case and spaces.

Example:
    >>> template = PromptTemplate()
    >>> messages = template.messages("take the coin", [("You see a hall.", "go north")], "A coin is here.",
    ...                              ["go south", "take coin"], turns_left=3, max_turns=5)
    >>> [m["role"] for m in messages]
    ['system', 'user', 'assistant', 'user']
    >>> print(messages[-1]["content"])
    A coin is here.
    <BLANKLINE>
    Admissible actions: go south | take coin
    Turns left: 3 of 5
    <BLANKLINE>
    What is your next action?
    >>> extract_action("<think>hmm</think>I should grab it.\\nAction: `Take  Coin`.", ["go south", "take coin"])
    ('take coin', True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from agentgym_budget.errors import DataError
from agentgym_budget.storage.safe_json import read_json_file

__all__: list[str] = []

DEFAULT_SYSTEM = (
    "You are an agent solving a text-based task, one command per turn.\n"
    "Your goal: {goal}\n"
    "Think briefly if you need to, then give your command on the last line as: Action: <command>"
)
"""Default system message template (field ``{goal}``)."""

DEFAULT_TURN = "{observation}\n{actions}{budget}\nWhat is your next action?"
"""Default template of the current turn's user message."""

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)
_ACTION_LINE = re.compile(r"^\W*action\W*[:=]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_SPACES = re.compile(r"\s+")
_DECORATION = " \t`*\"'."


@dataclass(frozen=True)
class PromptTemplate:
    """Chat prompt templates (see the module docstring for the fields of each).

    Attributes:
        system: System message.
        turn: The current turn's user message.
        actions_block: How admissible actions are shown (``""`` hides them).
        budget_block: How the remaining budget is shown (only when the budget is shown).
        history_action: Assistant message of a past turn.
    """

    system: str = DEFAULT_SYSTEM
    turn: str = DEFAULT_TURN
    actions_block: str = "\nAdmissible actions: {actions}"
    budget_block: str = "\nTurns left: {turns_left} of {max_turns}\n"
    history_action: str = "Action: {action}"

    @classmethod
    def from_file(cls, path: str | Path) -> PromptTemplate:
        """Load a template from a JSON object whose keys are some of the attribute names.

        Raises:
            DataError: The file is missing, not JSON, or has unknown keys.
        """
        path = Path(path).expanduser()
        try:
            data = read_json_file(path, what="prompt template")
        except DataError as err:
            raise DataError(f"Cannot read the prompt template {path}: {err}") from err
        known = {f.name for f in fields(cls)}
        if not isinstance(data, dict) or set(data) - known or not all(isinstance(v, str) for v in data.values()):
            raise DataError(
                f"The prompt template {path} must be a JSON object of strings with keys among {sorted(known)}."
            )
        return cls(**data)

    def messages(
        self,
        goal: str,
        history: Sequence[tuple[str, str]],
        observation: str,
        actions: Sequence[str] | None,
        *,
        turns_left: int | None = None,
        max_turns: int | None = None,
    ) -> list[dict[str, str]]:
        """Chat messages for one turn.

        Args:
            goal: The task's goal.
            history: Past ``(observation, action)`` pairs to show, oldest first.
            observation: The current observation.
            actions: Admissible actions to show, or ``None`` to show none.
            turns_left: Remaining turns, when the budget is shown.
            max_turns: The episode's budget, when the budget is shown.
        """
        messages = [{"role": "system", "content": self.system.format(goal=goal)}]
        for past_observation, action in history:
            messages.append({"role": "user", "content": past_observation})
            messages.append({"role": "assistant", "content": self.history_action.format(action=action)})
        shown_actions = self.actions_block.format(actions=" | ".join(actions)) if actions else ""
        budget = ""
        if turns_left is not None and max_turns is not None:
            budget = self.budget_block.format(turns_left=turns_left, max_turns=max_turns)
        content = self.turn.format(observation=observation, actions=shown_actions, budget=budget)
        messages.append({"role": "user", "content": content})
        return messages


def _normalise(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def extract_action(reply: str, admissible: Sequence[str] = ()) -> tuple[str, bool]:
    """Return ``(action, matched)``: the command in ``reply`` and whether it is one of ``admissible``.

    Example:
        >>> extract_action("go north", ["go north"])
        ('go north', True)
        >>> extract_action("I think so.\\n\\n> open the  door")
        ('open the door', False)
    """
    text = _THINK.sub("", reply)
    found = _ACTION_LINE.findall(text)
    if found:
        candidate = found[-1]
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        candidate = lines[-1] if lines else ""
    candidate = re.sub(r"^\s*(>|-|\*|\d+[.)])\s+", "", candidate).strip(_DECORATION)
    candidate = _SPACES.sub(" ", candidate)
    lookup = {_normalise(action): action for action in admissible}
    match = lookup.get(_normalise(candidate))
    return (match, True) if match is not None else (candidate, False)
