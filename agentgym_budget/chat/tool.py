"""The ``act`` tool: how a chat model plays an episode, one command per tool call.

Every chat model of the project (a model in training through TRL, the ``hf:PATH`` agent, the
tiny local model) plays through one tool, ``act(command)``: each call is one turn of the budget. This
module is that protocol's single home: the system prompt, the tool's JSON schema, a tool call as a
chat message and as the Qwen2.5 template writes it, how a parsed reply becomes commands, and how a turn becomes the text a model reads.

Example:
    >>> act_tool_schema()["function"]["name"]
    'act'
    >>> act_commands({"role": "assistant", "content": "", "tool_calls": [tool_call("act", command="look")]}, "act")
    (['look'], '')
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

__all__ = ["DEFAULT_SYSTEM_PROMPT", "act_commands", "act_tool_schema", "tool_call", "tool_call_text"]

DEFAULT_SYSTEM_PROMPT = (
    "You are an agent solving a text-based task. Call the `act` tool with one command at a time; "
    "every call is one turn of your limited budget. Stop calling tools once the episode is over."
)
"""The system message a model is trained and evaluated with (unless its chat format says otherwise)."""

EPISODE_OVER = "[Episode over: "
"""How the answer that ends an episode begins its last line."""

ACT_TOOL = "act"
"""The tool's name."""

_ACT_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": ACT_TOOL,
        "description": "Send one command to the environment. Every call is one turn of the limited budget.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": 'The command to play, for example "go north" or "take coin".',
                }
            },
            "required": ["command"],
        },
        "return": {"type": "string", "description": "The environment's answer; it says when the episode is over."},
    },
}


def act_tool_schema() -> dict[str, Any]:
    """The JSON schema of the ``act`` tool, as TRL renders it into the system prompt (a fresh copy).

    It is what ``transformers.utils.get_json_schema`` reads from
    :meth:`~agentgym_budget.integrations.trl.BudgetToolEnv.act` (the tests hold the two equal).
    """
    return copy.deepcopy(_ACT_SCHEMA)


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    """A chat-message tool call, e.g. ``tool_call("act", command="go north")``.

    Example:
        >>> tool_call("act", command="look")
        {'type': 'function', 'function': {'name': 'act', 'arguments': {'command': 'look'}}}
    """
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def tool_call_text(call: dict[str, Any]) -> str:
    """How the Qwen2.5 chat template writes a tool call (train a tokenizer on these so they take few tokens).

    Example:
        >>> print(tool_call_text(tool_call("act", command="look")))
        <tool_call>
        {"name": "act", "arguments": {"command": "look"}}
        </tool_call>
    """
    function = call["function"]
    return (
        f'<tool_call>\n{{"name": "{function["name"]}", "arguments": {json.dumps(function["arguments"])}}}\n</tool_call>'
    )


def act_commands(message: dict[str, Any], tool: str) -> tuple[list[str], str]:
    """The commands of a parsed reply's calls to ``tool`` (in order) and the reply's text.

    A call counts when it names ``tool`` and has exactly the argument ``command`` (a non-string
    argument is sent as its JSON text, as :meth:`~agentgym_budget.integrations.trl.BudgetToolEnv.act`
    does); other calls are ignored.

    Example:
        >>> call = {"type": "function", "function": {"name": "act", "arguments": {"command": "take coin"}}}
        >>> act_commands({"role": "assistant", "content": "", "tool_calls": [call, call]}, "act")
        (['take coin', 'take coin'], '')
        >>> act_commands({"role": "assistant", "content": "Action: look"}, "act")
        ([], 'Action: look')
    """
    commands = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or function.get("name") != tool:
            continue
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                continue
        if isinstance(arguments, dict) and set(arguments) == {"command"}:
            command = arguments["command"]
            commands.append(command if isinstance(command, str) else json.dumps(command))
    content = message.get("content")
    return commands, content if isinstance(content, str) else ""


def turn_text(
    observation: str, admissible: Sequence[str] = (), *, goal: str | None = None, end: str | None = None
) -> str:
    """The text a model is shown for one reset or step: what :attr:`~agentgym_budget.integrations.session.EpisodeTurn.text` holds.

    The goal (on reset, when the observation does not already contain it), the observation, then the
    end line when the episode ended, else the admissible actions (if any are given). Agents that play
    a model trained through the adapters (e.g. ``hf:PATH``) rebuild the same text from what the
    evaluation runner gives them.

    Example:
        >>> print(turn_text("A hall.", ["go east", "look"], goal="Take the coin."))
        Goal: Take the coin.
        <BLANKLINE>
        A hall.
        <BLANKLINE>
        Admissible actions: go east | look
        >>> print(turn_text("You win.", ["look"], end="[Episode over: task completed in 2 turns.]"))
        You win.
        <BLANKLINE>
        [Episode over: task completed in 2 turns.]
    """
    parts = []
    if goal and goal not in observation:
        parts.append(f"Goal: {goal}")
    parts.append(observation)
    if end is not None:
        parts.append(end)
    elif admissible:
        parts.append("Admissible actions: " + " | ".join(admissible))
    return "\n\n".join(parts)
