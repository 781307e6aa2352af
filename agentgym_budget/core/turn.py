"""What a task family's engine reports after a reset or a command (:class:`Turn`), and the ``info`` it makes.

:class:`~agentgym_budget.core.env.TextEnv` normalises a family's :class:`Turn` and turns it into the
step's ``info`` with :func:`turn_info`.

Example:
    >>> turn = Turn("You see a coin.", 0.0, False, False, 0.5, ("take coin",), "Find the coin.")
    >>> info = turn_info(turn, task_id="t1", action_is_valid=True, omitted_info_keys=frozenset(), info_keys=())
    >>> info["admissible_actions"], info["progress"], info["success"]
    (['take coin'], 0.5, False)
    >>> "admissible_actions" in turn_info(
    ...     turn, task_id="t1", action_is_valid=True, omitted_info_keys=frozenset({"admissible_actions"}), info_keys=()
    ... )
    False
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["Turn"]


@dataclass(frozen=True)
class Turn:
    """What a task family's engine reports after a reset or a command.

    Attributes:
        observation: Text shown to the agent (normalised by :class:`~agentgym_budget.core.env.TextEnv`).
        reward: Reward of this turn (``0.0`` after a reset).
        won: The task is completed.
        lost: The task failed irrecoverably.
        progress: Step-level progress signal in [0, 1].
        admissible_actions: Commands the engine accepts now, sorted.
        goal: The task text.
        extras: Values of the opt-in ``info`` keys that were requested.
    """

    __snapshot_record__: ClassVar[str] = "Turn/1"

    observation: str
    reward: float
    won: bool
    lost: bool
    progress: float
    admissible_actions: tuple[str, ...]
    goal: str
    extras: Mapping[str, Any] = field(default_factory=dict)

    def with_observation(self, observation: str) -> Turn:
        """This turn showing ``observation`` instead (a tenth of the cost of ``dataclasses.replace``).

        Example:
            >>> Turn("A hall.", 0.0, False, False, 0.0, (), "Go.").with_observation("A room.").observation
            'A room.'
        """
        if type(self) is not Turn:
            return dataclasses.replace(self, observation=observation)
        fields = self.__dict__.copy()  # the same field values, without the frozen __init__'s checks per field
        fields["observation"] = observation
        twin = object.__new__(Turn)
        object.__setattr__(twin, "__dict__", fields)
        return twin


def turn_info(
    turn: Turn,
    *,
    task_id: str | None,
    action_is_valid: bool,
    omitted_info_keys: Collection[str],
    info_keys: Iterable[str],
) -> dict[str, Any]:
    """The ``info`` of a step or reset that reported ``turn``.

    Args:
        turn: The engine's report.
        task_id: The episode's task.
        action_is_valid: Whether the action was admissible where it was taken.
        omitted_info_keys: Standard keys the env leaves out (without ``admissible_actions``,
            ``action_is_valid`` is unknown and left out too).
        info_keys: Opt-in keys requested at construction; their values come from ``turn.extras``
            (``None`` when the engine did not report one; sequences become lists).
    """
    info: dict[str, Any] = {
        "admissible_actions": list(turn.admissible_actions),
        "action_is_valid": action_is_valid,
        "won": bool(turn.won),
        "success": bool(turn.won),
        "lost": bool(turn.lost),
        "progress": float(turn.progress),
        "task_id": task_id,
        "goal": turn.goal,
    }
    for key in omitted_info_keys:
        del info[key]
    if "admissible_actions" in omitted_info_keys:
        del info["action_is_valid"]
    for key in info_keys:
        value = turn.extras.get(key)
        info[key] = list(value) if isinstance(value, (list, tuple)) else value
    return info
