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
    agentgym_budget.errors.InvalidInfoKeyError: Unknown info key 'expert_acton' for demo. Did you mean 'expert_action'? Opt-in keys: expert_action (next solver action). Always present: admissible_actions, action_is_valid, won, success, lost, progress, task_id, goal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from agentgym_budget.errors import InvalidInfoKeyError, did_you_mean

__all__ = ["EXPERT_INFO_KEYS", "STANDARD_INFO_KEYS"]

STANDARD_INFO_KEYS: tuple[str, ...] = (
    "admissible_actions",
    "action_is_valid",
    "won",
    "success",
    "lost",
    "progress",
    "task_id",
    "goal",
)
"""Keys present in every ``info`` of every task family:

* ``admissible_actions`` (``list[str]``): commands the engine accepts in this state, sorted;
* ``action_is_valid`` (``bool``): the step's action parsed to a command that was admissible in the
  state it was taken in (``True`` after a reset; absent when ``admissible_actions`` is omitted);
* ``won`` / ``lost`` (``bool``): the task was completed / failed irrecoverably;
* ``success`` (``bool``): the same as ``won``, under the name other env managers (verl-agent,
  AgentGym) use;
* ``progress`` (``float`` in [0, 1]): the family's step-level progress signal;
* ``task_id`` (``str``): the task being played;
* ``goal`` (``str``): the task text given to the agent.

Under a :class:`~agentgym_budget.wrappers.TurnBudget` every ``info`` also has ``turn``, ``max_turns``
and ``turns_left`` (``int``).
"""

EXPERT_INFO_KEYS: Mapping[str, str] = {
    "expert_action": "the next action of the family's reference solver from the current state",
    "expert_plan": "the reference solver's whole remaining plan (list[str]) from the current state",
}
"""Opt-in keys every task family provides (each family may offer more; every :class:`~agentgym_budget.core.env.TextEnv`
also offers ``state_digest``, :mod:`~agentgym_budget.core.state_digest`)."""


OTHER_NAMES: Mapping[str, str] = {
    "admissible_commands": "admissible_actions",
    "policy_commands": "expert_plan",
}
"""Names TextWorld and ALFWorld give to keys this package calls otherwise (``theirs -> ours``)."""


def _unknown_key_message(key: str, available: Mapping[str, str], where: str) -> str:
    offered = ", ".join(f"{name} ({text})" for name, text in sorted(available.items())) or "none"
    ours = OTHER_NAMES.get(key)
    if ours in STANDARD_INFO_KEYS:
        hint = f" It is TextWorld's name for {ours!r}, which every info has: drop it from info_keys."
    elif ours is not None:
        hint = f" It is TextWorld's name for {ours!r}: request that." if ours in available else ""
    else:
        hint = did_you_mean(key, [*available, *STANDARD_INFO_KEYS])
    return (
        f"Unknown info key {key!r} for {where}.{hint} "
        f"Opt-in keys: {offered}. Always present: {', '.join(STANDARD_INFO_KEYS)}."
    )


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
            raise InvalidInfoKeyError(_unknown_key_message(key, available, where))
    return frozenset(key for key in keys if key in available)
