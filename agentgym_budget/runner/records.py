"""Field checks of logged records: a log line that is valid JSON but not a usable record is named, not crashed on.

Each check takes one decoded JSON object and returns ``None`` when it is usable, else a short
description of the first problem (``"field 'seed' is -5; expected a non-negative integer"``).
:func:`~agentgym_budget.runner.store.read_jsonl` and :class:`~agentgym_budget.runner.store.JsonlStore`
take a check and raise :class:`~agentgym_budget.errors.DataError` naming the file and line.

* :func:`episode_problem`: an episode of a ``passkt`` log (what :func:`~agentgym_budget.eval.passkt.plan.episode_key`
  and the summaries read);
* :func:`reference_problem`: an episode used as a reference trajectory (``probe --reference``,
  ``recovery --episodes``): its task, seed, budget, sample and actions.

Integers must be JSON integers (``3``, not ``3.0``, ``"3"``, ``true``, ``NaN`` or ``1e400``).

Example:
    >>> reference_problem({"task_id": "t", "seed": -5, "budget": 10, "actions": []})
    "field 'seed' is -5; expected a non-negative integer"
    >>> reference_problem({"task_id": "t", "seed": 3, "budget": 10, "actions": ["go east"]}) is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__: list[str] = []

_MODES = ("independent", "prefix")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _integer(record: Mapping[str, Any], name: str, minimum: int, *, required: bool = True) -> str | None:
    if name not in record:
        return f"field {name!r} is missing" if required else None
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        expected = "a positive integer" if minimum == 1 else "a non-negative integer"
        return f"field {name!r} is {_shown(value)}; expected {expected}"
    return None


def _text(record: Mapping[str, Any], name: str) -> str | None:
    if name not in record:
        return f"field {name!r} is missing"
    value = record[name]
    if not isinstance(value, str) or not value:
        return f"field {name!r} is {_shown(value)}; expected a non-empty string"
    return None


def _actions(record: Mapping[str, Any]) -> str | None:
    actions = record.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        return f"field 'actions' is {_shown(actions)}; expected a list of strings"
    return None


def _first(*problems: str | None) -> str | None:
    return next((p for p in problems if p is not None), None)


def episode_problem(record: Mapping[str, Any]) -> str | None:
    """The first problem of a ``passkt`` episode record, or ``None``.

    Example:
        >>> episode_problem({"agent": "a", "env_id": "e", "task_id": "t", "mode": "prefix", "show_budget": False,
        ...                  "budget": 10, "sample": 0, "seed": 1, "won": True})
        >>> episode_problem({"agent": "a", "env_id": "e", "task_id": "t"})
        "field 'mode' is missing"
    """
    problem = _first(_text(record, "agent"), _text(record, "env_id"), _text(record, "task_id"))
    if problem:
        return problem
    if record.get("mode") not in _MODES:
        return "field 'mode' is missing" if "mode" not in record else f"field 'mode' is {_shown(record['mode'])}"
    for name in ("show_budget", "won"):
        if not isinstance(record.get(name), bool):
            return f"field {name!r} is missing" if name not in record else f"field {name!r} is not true/false"
    if not isinstance(record.get("env_kwargs") or {}, dict):
        return f"field 'env_kwargs' is {_shown(record['env_kwargs'])}; expected an object"
    if record.get("split") is not None and not isinstance(record["split"], str):
        return f"field 'split' is {_shown(record['split'])}; expected a string or null"
    success = record.get("success_turn")
    if success is not None and (isinstance(success, bool) or not isinstance(success, int) or success < 1):
        return f"field 'success_turn' is {_shown(success)}; expected null or a positive integer"
    return _first(
        _integer(record, "budget", 1),
        _integer(record, "sample", 0),
        _integer(record, "seed", 0),
        _integer(record, "turns", 0, required=False),
    )


def reference_problem(record: Mapping[str, Any]) -> str | None:
    """The first problem of an episode record used as a reference trajectory, or ``None``.

    Example:
        >>> reference_problem({"seed": 1, "budget": 10, "actions": ["look"]})
        "field 'task_id' is missing"
        >>> reference_problem({"task_id": "t", "seed": 1, "budget": float("nan"), "actions": ["look"]})
        "field 'budget' is nan; expected a positive integer"
    """
    return _first(
        _text(record, "task_id"),
        _integer(record, "seed", 0),
        _integer(record, "budget", 1),
        _integer(record, "sample", 0, required=False),
        _actions(record),
    )
