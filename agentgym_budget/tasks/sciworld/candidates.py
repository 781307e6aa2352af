"""A bounded, sensible list of commands from ScienceWorld's valid actions: what ``admissible_actions`` holds.

The engine lists every template of its 25 actions filled with every object in view or in the inventory:
about 350 commands in a small room and up to about 3,000 in a kitchen, most of them nonsense
(``connect agent to air``, ``move banana to hallway``): 62% of a kitchen's list is ``connect``. An agent
that scores or samples its candidates needs a short list that keeps the useful ones. :func:`bounded`
builds it from the engine's list (its template and object type ids):

1. drop every command naming the agent, the inventory or the air, and every command naming a room
   (type ``Location``/``Room``/``Outside``) except ``go to`` and ``teleport to`` it;
2. keep ``connect X to Y`` only between electrical terminals (anodes, cathodes, wire terminals);
3. if more than ``limit`` remain, take them in rounds: each round takes the next command of every
   template (in the engine's order of template ids), and within a template of two objects the next
   first object in turn, so no template and no object crowds out the others;
4. sort (the contract's order).

Measured sizes, on gold-path states of all 30 tasks (``benchmarks/sciworld_speed.py``), are on the
ScienceWorld docs page.

Example:
    >>> valid = [
    ...     {"action": "look around", "template_id": 3, "type_ids": []},
    ...     {"action": "connect agent to air", "template_id": 16, "type_ids": [0, 144]},
    ...     {"action": "connect battery anode to wire terminal 1", "template_id": 16, "type_ids": [61, 75]},
    ...     {"action": "go to kitchen", "template_id": 2, "type_ids": [132]},
    ...     {"action": "move apple to kitchen", "template_id": 9, "type_ids": [200, 132]},
    ...     {"action": "pick up apple", "template_id": 21, "type_ids": [200]},
    ... ]
    >>> bounded(valid, limit=10)
    ('connect battery anode to wire terminal 1', 'go to kitchen', 'look around', 'pick up apple')
    >>> bounded(valid, limit=2)
    ('go to kitchen', 'look around')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import zip_longest
from typing import Any

__all__ = ["bounded"]

_AGENT, _INVENTORY, _AIR = 0, 1, 144
_PLACES = frozenset({130, 131, 132, 133})  # Location, Outside, Room, Universe
_TERMINALS = frozenset({61, 63, 75})  # Anode, Cathode, Terminal
_NEVER = frozenset({_AGENT, _INVENTORY, _AIR})
_CONNECT = 16
_MOVES = frozenset({2})  # "go to OBJ"; teleport's template id is found by its wording
RESET_TASK = 12
"""Template id of ``reset task`` (refused by the env: never a candidate)."""


def _sensible(entry: Mapping[str, Any]) -> bool:
    types = list(entry.get("type_ids") or ())
    template = entry.get("template_id")
    if template == RESET_TASK or _NEVER.intersection(types):
        return False
    if template == _CONNECT:
        return len(types) == 2 and all(kind in _TERMINALS for kind in types)
    if _PLACES.intersection(types):
        return template in _MOVES or str(entry.get("action", "")).startswith("teleport to ")
    return True


def _interleave(groups: Iterable[Sequence[str]]) -> list[str]:
    return [item for round_ in zip_longest(*groups) for item in round_ if item is not None]


def _template_order(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """One template's commands, their first objects taking turns."""
    by_first: dict[Any, list[str]] = {}
    for entry in entries:
        ids = entry.get("obj_ids") or [None]
        by_first.setdefault(ids[0], []).append(str(entry["action"]))
    return _interleave(sorted(group) for _, group in sorted(by_first.items(), key=lambda item: str(item[0])))


def bounded(valid: Sequence[Mapping[str, Any]], *, limit: int) -> tuple[str, ...]:
    """At most ``limit`` sensible commands from the engine's valid actions (see the module docstring), sorted."""
    kept = [entry for entry in valid if _sensible(entry)]
    by_template: dict[int, list[Mapping[str, Any]]] = {}
    for entry in kept:
        by_template.setdefault(int(entry.get("template_id", -1)), []).append(entry)
    ordered = _interleave(_template_order(by_template[template]) for template in sorted(by_template))
    unique = list(dict.fromkeys(ordered))
    return tuple(sorted(unique[:limit]))
