"""What a TextWorld step reports: the ``info`` keys, the infos TextWorld computes for them, and the turn.

:func:`request_infos` asks TextWorld for exactly what the requested ``info`` keys need (its state
tracking, the most expensive part of a step, only runs for keys that read it);
:func:`make_turn` turns TextWorld's game state into the env's :class:`~agentgym_budget.core.turn.Turn`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import textworld

from agentgym_budget.core.info_keys import EXPERT_INFO_KEYS
from agentgym_budget.core.turn import Turn
from agentgym_budget.tasks.textworld.progress import plan_progress

__all__: list[str] = []

TEXTWORLD_INFO_KEYS: Mapping[str, str] = {
    **EXPERT_INFO_KEYS,
    "score": "the game score so far (int)",
    "max_score": "the highest reachable score (int)",
    "moves": "game actions the game carried out this episode, never more than the turns (int)",
    "inventory": "the inventory text",
    "description": "the current room description",
    "facts": "the true facts of the game state, human readable and sorted (list[str])",
}

TRACKED_INFO_KEYS: frozenset[str] = frozenset(
    {"admissible_actions", "expert_action", "expert_plan", "facts", "moves", "state_digest"}
)
"""``info`` keys computed from TextWorld's state tracking: in lean mode, requesting one turns the tracking on."""

LEAN_INFO_KEYS: Mapping[str, str] = {
    **TEXTWORLD_INFO_KEYS,
    "admissible_actions": "commands the game accepts now, sorted (a standard key, opt-in in lean mode)",
}
"""Opt-in ``info`` keys of a lean TextWorld env (``lean=True``)."""

_GAME_OVER_QUESTION = re.compile(r"\s*Would you like to RESTART, RESTORE[^\n]*\Z")
_TURN_COUNT = re.compile(r"(You scored [^\n]*?), in \d+ turns?\.")
_BANNER_CHARS = frozenset(" _|\\/$<>")


def clean_feedback(feedback: str, *, turn: int) -> str:
    """The game's text without interpreter chrome; ``turn`` is the episode's turn count (0 after a reset)."""
    last_line = feedback.rfind("\n")  # what _PROMPT_LINE removes, found without scanning the text
    text = feedback[:last_line] if last_line >= 0 and feedback.startswith(">", last_line + 1) else feedback
    if turn == 0:
        lines = text.split("\n")
        while lines and set(lines[0]) <= _BANNER_CHARS:
            lines.pop(0)
        text = "\n".join(lines)
    if "Would you like to RESTART, RESTORE" in text:  # the patterns only run on the texts they can match
        text = _GAME_OVER_QUESTION.sub("", text)
    if "You scored " in text:
        text = _TURN_COUNT.sub(rf"\1, in {turn} turn{'' if turn == 1 else 's'}.", text)
    return text


def request_infos(
    keys: AbstractSet[str], *, lean: bool, admissible: bool, tracking: bool, plan: bool = False
) -> textworld.EnvInfos:
    """The infos TextWorld computes at every step for the ``info`` keys ``keys``.

    Args:
        keys: The requested opt-in ``info`` keys.
        lean: The env is in lean mode.
        admissible: ``admissible_actions`` are reported.
        tracking: TextWorld's state tracking runs (see :data:`TRACKED_INFO_KEYS`).
        plan: ``progress`` is computed from the winning policy (:mod:`.progress`'s ``"plan"`` mode).
    """
    return textworld.EnvInfos(
        admissible_commands=admissible,
        score=True,
        max_score=True,
        won=True,
        lost=True,
        objective=True,
        policy_commands=plan or bool(keys & {"expert_action", "expert_plan"}),
        moves="moves" in keys,
        inventory="inventory" in keys,
        description="description" in keys,
        facts="facts" in keys,
        last_action=lean and tracking,  # turns the tracking on when only ``moves`` needs it
    )


def make_turn(
    state: textworld.GameState, reward: int, *, turn: int, keys: AbstractSet[str], plan_start: int | None = None
) -> Turn:
    """The env's turn from TextWorld's ``state``.

    Args:
        state: TextWorld's game state after the turn.
        reward: The score gained this turn.
        turn: The episode's turn count.
        keys: The requested opt-in ``info`` keys.
        plan_start: The winning policy's length at reset when ``progress`` is in ``"plan"`` mode
            (:mod:`.progress`), else ``None`` (``progress`` is ``score / max_score``).
    """
    score = state.get("score") or 0
    max_score = state.get("max_score") or 0
    won = bool(state.get("won"))
    if plan_start is not None:
        policy = state.get("policy_commands")
        remaining = None if policy is None or state.get("lost") else len(policy)
        progress = plan_progress(remaining=remaining, initial=plan_start, won=won)
    else:
        progress = min(1.0, max(0.0, score / max_score)) if max_score > 0 else float(won)
    admissible = tuple(state.get("admissible_commands") or ())
    return Turn(
        observation=clean_feedback(state.feedback or "", turn=turn),
        reward=float(reward),
        won=won,
        lost=bool(state.get("lost")),
        progress=progress,
        admissible_actions=admissible,
        goal=state.get("objective") or "",
        extras=_extras(state, admissible, keys),
    )


def _extras(state: textworld.GameState, admissible: tuple[str, ...], keys: AbstractSet[str]) -> dict[str, Any]:
    extras: dict[str, Any] = {}
    if keys & {"expert_action", "expert_plan"}:
        plan = list(state.get("policy_commands") or [])
        extras["expert_plan"] = plan
        extras["expert_action"] = plan[0] if plan else None
    if "admissible_actions" in keys:
        extras["admissible_actions"] = admissible
    for key in ("score", "max_score", "moves", "inventory", "description"):
        if key in keys:
            extras[key] = state.get(key)
    if "facts" in keys:
        extras["facts"] = sorted(str(fact) for fact in state.get("facts") or [])
    return extras
