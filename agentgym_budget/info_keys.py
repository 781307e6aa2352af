"""Which keys an environment puts in ``info``, and validation of opt-in keys.

Every environment always returns the :data:`STANDARD_INFO_KEYS`. Keys that are
expensive to compute (the reference solver's next action, its whole plan, ...)
are *opt-in*: request them when making the environment, in the spirit of
TextWorld's ``EnvInfos``::

    gym.make("agentgym_budget/TextWorld-Cooking-v0", info_keys={"expert_action"})

Unknown keys are rejected with the list of valid ones, instead of being silently
ignored.

Example:
    >>> resolve_info_keys({"expert_action"}, {"expert_action": "next solver action"}, "demo")
    frozenset({'expert_action'})
    >>> resolve_info_keys(["expert_acton"], {"expert_action": "next solver action"}, "demo")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidInfoKeyError: Unknown info key 'expert_acton' for demo. Did you mean 'expert_action'? Opt-in keys: expert_action (next solver action). Always present: admissible_actions, won, lost, progress, task_id, goal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from agentgym_budget.errors import InvalidInfoKeyError, did_you_mean

__all__ = ["EXPERT_INFO_KEYS", "STANDARD_INFO_KEYS", "is_admissible", "normalize_command", "resolve_info_keys"]

STANDARD_INFO_KEYS: tuple[str, ...] = (
    "admissible_actions",
    "won",
    "lost",
    "progress",
    "task_id",
    "goal",
)
"""Keys present in every ``info`` of every task family:

* ``admissible_actions`` (``list[str]``): commands the engine accepts in this state, sorted;
* ``won`` / ``lost`` (``bool``): the task was completed / failed irrecoverably;
* ``progress`` (``float`` in [0, 1]): the family's step-level progress signal;
* ``task_id`` (``str``): the task being played;
* ``goal`` (``str``): the task text given to the agent.
"""

EXPERT_INFO_KEYS: Mapping[str, str] = {
    "expert_action": "the next action of the family's reference solver from the current state",
    "expert_plan": "the reference solver's whole remaining plan (list[str]) from the current state",
}
"""Opt-in keys every task family provides (each family may offer more)."""


def resolve_info_keys(
    requested: str | Iterable[str] | None, available: Mapping[str, str], where: str
) -> frozenset[str]:
    """Validate requested opt-in ``info`` keys.

    Args:
        requested: One key, an iterable of keys, or ``None`` for none.
        available: The opt-in keys the environment offers, mapped to a description.
        where: Name of the environment, used in error messages.

    Returns:
        The requested keys as a frozenset. Standard keys may be requested too; they are dropped.

    Raises:
        InvalidInfoKeyError: A key is not a string, or the environment does not offer it.
    """
    if requested is None:
        return frozenset()
    keys = [requested] if isinstance(requested, str) else list(requested)
    for key in keys:
        if not isinstance(key, str):
            raise InvalidInfoKeyError(f"Info keys must be strings, got {type(key).__name__}: {key!r}.")
        if key not in available and key not in STANDARD_INFO_KEYS:
            offered = ", ".join(f"{name} ({text})" for name, text in sorted(available.items())) or "none"
            raise InvalidInfoKeyError(
                f"Unknown info key {key!r} for {where}.{did_you_mean(key, available)} "
                f"Opt-in keys: {offered}. Always present: {', '.join(STANDARD_INFO_KEYS)}."
            )
    return frozenset(key for key in keys if key in available)


_SPACES = re.compile(r"\s+")
_PLACEHOLDER = re.compile(r"<[^<>]+>")


def normalize_command(command: str) -> str:
    """``command`` lower-cased, with runs of white space collapsed and the ends stripped.

    Example:
        >>> normalize_command("  Take   the Coin ")
        'take the coin'
    """
    return _SPACES.sub(" ", command).strip().lower()


def is_admissible(action: str, admissible: Sequence[str]) -> bool:
    """Whether ``action`` is one of ``admissible`` (case and runs of white space are ignored; an entry's ``<...>``
    placeholders, as in WebShop's ``search[<keywords>]``, match any non-empty text).

    Example:
        >>> is_admissible("Go  North", ["go north", "look"])
        True
        >>> is_admissible("search[red socks]", ["search[<keywords>]"]), is_admissible("search[]", ["search[<keywords>]"])
        (True, False)
        >>> is_admissible("dance", ["go north", "look"])
        False
    """
    if not isinstance(action, str):
        return False
    command = normalize_command(action)
    for entry in admissible:
        candidate = normalize_command(entry)
        if candidate == command:
            return True
        if _PLACEHOLDER.search(candidate):
            pieces = _PLACEHOLDER.split(candidate)
            pattern = "(?:.+)".join(re.escape(piece) for piece in pieces)
            if re.fullmatch(pattern, command):
                return True
    return False
