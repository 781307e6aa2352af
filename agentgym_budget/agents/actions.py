"""The action parser shared by every RL-library adapter: free-text model output to one command.

A model's reply becomes exactly one command, i.e. one turn of the
:class:`~agentgym_budget.wrappers.TurnBudget`, by these rules (built on
:func:`agentgym_budget.agents.prompting.extract_action`, so the evaluation agents and the adapters
read replies the same way):

1. The reply must be a ``str``; anything else raises
   :class:`~agentgym_budget.errors.InvalidActionError`.
2. ``<think>...</think>`` blocks are dropped (an unclosed ``<think>`` drops the rest of the reply).
3. The last line of the form ``Action: <command>`` (any case; ``action = ...`` too) gives the command;
   a reply without one gives its last non-empty line. Only one line is ever taken.
4. List and prompt markers (``-``, ``*``, ``1.``, ``>``), backticks, bold markers, quotes and a final
   period are stripped; runs of white space become one space.
5. If the command equals an admissible action up to case and spaces, the admissible spelling is
   sent. ``matched`` says whether the command is admissible at all (a WebShop
   ``search[<keywords>]`` entry matches any ``search[...]`` with text in it).
6. Whatever comes out, even ``""``, is sent and costs one turn: the env answers it with its usual
   feedback (each task family sanitises commands for its engine, e.g. TextWorld keeps one action
   of a chained line). So a model can never take a free turn or two actions in one turn.

Example:
    >>> parse_action("<think>the coin is east</think>I will go.\\nAction: **Go East**.", ["go east", "look"])
    ParsedAction(command='go east', matched=True, reply='<think>the coin is east</think>I will go.\\nAction: **Go East**.')
    >>> parse_action("search[red dress under 30 dollars]", ["search[<keywords>]"]).matched
    True
    >>> parse_action("1. open the fridge").command
    'open the fridge'
    >>> parse_action(42)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidActionError: Actions must be str, got int: 42. Pass the command text, e.g. env.step('open fridge').
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentgym_budget.agents.prompting import extract_action
from agentgym_budget.core.text import is_admissible
from agentgym_budget.errors import InvalidActionError

__all__ = ["parse_action"]


@dataclass(frozen=True)
class ParsedAction:
    """One reply read as one command.

    Attributes:
        command: The command sent to the env (one turn).
        matched: ``command`` is one of the admissible actions of the state it was read in.
        reply: The model's reply as given.
    """

    command: str
    matched: bool
    reply: str


def parse_action(reply: str, admissible: Sequence[str] = ()) -> ParsedAction:
    """Read ``reply`` as one command (see the module docstring for the rules).

    Args:
        reply: The model's output for this turn.
        admissible: The admissible actions of the current state (may be empty).

    Raises:
        InvalidActionError: ``reply`` is not a ``str``.
    """
    if not isinstance(reply, str):
        raise InvalidActionError.for_action(reply)
    command, _ = extract_action(reply, admissible)
    return ParsedAction(command=command, matched=is_admissible(command, admissible), reply=reply)
