"""Checks of the parts of wrappers that have no ``set_wrapper_state`` (Gymnasium's own wrappers and others).

Such a wrapper's part is a dict of its plain attributes (:func:`agentgym_budget.snapshots.stack.get_state`
deep-copies them). On restore, :func:`check_plain_field` checks one field against the wrapper's own
value of it, before anything is set: only the fields the wrapper has (the caller checks the names), each
of the kind it holds now: a flag stays a flag, a counter a non-negative integer, a number finite, a
``deque`` a ``deque`` of finite numbers with the same ``maxlen``. Gymnasium's ``TimeLimit``,
``RecordEpisodeStatistics`` and ``PassiveEnvChecker`` have their fields' exact rules in :data:`FIELD_RULES`.

Example:
    >>> check_plain_field("TimeLimit", "_elapsed_steps", 3, None)
    3
    >>> check_plain_field("TimeLimit", "_elapsed_steps", -3, 2)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.SnapshotMismatchError: Malformed snapshot: the TimeLimit field _elapsed_steps is -3 (int); expected an integer >= 0.
"""

from __future__ import annotations

import copy
import numbers
from collections import deque
from collections.abc import Callable
from typing import Any

from agentgym_budget.errors import SnapshotMismatchError
from agentgym_budget.snapshots import schema

__all__: list[str] = []  # used by the snapshot stack only


def _optional_count(value: Any, name: str, current: Any) -> Any:
    return None if value is None else schema.count(value, name)


def _previous_data(value: Any, name: str, current: Any) -> Any:
    if value is not None:
        schema.sequence(value, name, 2)
    return copy.deepcopy(value)


FIELD_RULES: dict[tuple[str, str], Callable[[Any, str, Any], Any]] = {
    ("TimeLimit", "_max_episode_steps"): lambda value, name, current: schema.count(value, name, low=1),
    ("TimeLimit", "_elapsed_steps"): _optional_count,
    ("RecordEpisodeStatistics", "episode_count"): lambda value, name, current: schema.count(value, name),
    ("RecordEpisodeStatistics", "episode_lengths"): lambda value, name, current: schema.count(value, name),
    ("PassiveEnvChecker", "_previous_data"): _previous_data,
}
"""``(wrapper class name, field) -> check(value, name, current)`` for fields whose rule is not their kind's."""


def check_plain_part(wrapper: str, values: dict[str, Any]) -> None:
    """Raise :class:`SnapshotMismatchError` unless ``wrapper``'s checked fields (``values``) fit together.

    Gymnasium's ``PassiveEnvChecker`` compares its first step with the reset, its second with the first,
    each against the data it kept (``_previous_data``), which it drops once both checks are done: until
    then the data must be there, or its next step unpacks ``None`` (a ``TypeError``).

    Example:
        >>> check_plain_part("PassiveEnvChecker", {"checked_step": False, "checked_data_reuse": True, "_previous_data": None})
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.SnapshotMismatchError: Malformed snapshot: the PassiveEnvChecker field _previous_data is None (NoneType); expected the reset's or the last step's (observation, info) until checked_step and checked_data_reuse are both True.
    """
    if wrapper != "PassiveEnvChecker" or values.get("_previous_data") is not None:
        return
    if not (values.get("checked_step") is True and values.get("checked_data_reuse") is True):
        raise schema.mismatch(
            "the PassiveEnvChecker field _previous_data",
            None,
            "the reset's or the last step's (observation, info) until checked_step and checked_data_reuse are both True",
        )


def check_plain_field(wrapper: str, field: str, value: Any, current: Any) -> Any:
    """``value`` for ``wrapper``'s ``field`` (whose value is ``current`` now), checked and copied.

    Raises:
        SnapshotMismatchError: ``value`` is not of the kind ``current`` is (see the module docstring).
    """
    name = f"the {wrapper} field {field}"
    rule = FIELD_RULES.get((wrapper, field))
    if rule is not None:
        return rule(value, name, current)
    if isinstance(current, bool):
        return schema.boolean(value, name)
    if isinstance(current, numbers.Integral) and current >= 0:
        return schema.count(value, name)
    if isinstance(current, numbers.Real):
        return schema.finite(value, name)
    if isinstance(current, str):
        return schema.text(value, name)
    if isinstance(current, deque):
        return _queue(value, name, current)
    if current is None and value is None:
        return None
    plain = isinstance(value, bool | numbers.Real | str | tuple | list | dict | type(None))
    if plain and (current is None or type(value) is type(current)):
        return copy.deepcopy(value)
    raise SnapshotMismatchError(
        f"Malformed snapshot: {name} is a {type(value).__name__} where the wrapper holds a {type(current).__name__}."
    )


def _queue(value: Any, name: str, current: deque) -> deque:
    if not isinstance(value, deque) or value.maxlen != current.maxlen:
        raise schema.mismatch(name, value, f"a deque with maxlen {current.maxlen}")
    return deque((schema.finite(item, f"an item of {name}") for item in value), maxlen=current.maxlen)
