"""The opt-in ``info["state_digest"]``: a short digest of the engine's state, for grouping equal states.

Trainers that give credit per state rather than per episode (GiGPO's anchor states, verl-agent's
step groups) need to know when two turns, in two episodes of a group or in one, act from the same
environment state. Request ``info_keys={"state_digest"}`` (every family offers it) and every
``info`` carries 16 hexadecimal characters: the first 64 bits of SHA-256 over the canonical JSON
(sorted keys, no spaces) of the task id and the family's description of its engine state
(:meth:`TextEnv._state_data <agentgym_budget.core.env.TextEnv._state_data>`). Equal engine states give
equal digests, in any process and whatever path led there; different states give different ones
(a collision among 2**64 values is left to chance). What counts as the engine state is the family's
to say; nothing a step only counts is in it: not the turn counter, the budget, the action history or
the last feedback text. Per family (each family's page says more):

* TextWorld: TextWorld's world model (its true facts, sorted: where everything is, what is open or
  eaten), each quest's completed and failed flags and the score (not the interpreter's memory,
  which holds the move counter and the last command);
* ALFWorld: the PDDL state's true facts (object ids, sorted);
* WebShop: the page, the search keywords, the results page, the product viewed and the options
  selected (as a set: the order they were clicked in does not matter);
* TWX: every room's description as the engine writes it (objects, containers, doors), where the
  agent is, the inventory, the score and the task status (games without rooms: the current view);
  TextWorldExpress has no serialisation of its game, so state the engine never describes (whether a
  book was read) is not in it;
* BabyAI: the agent's place and direction, what it carries, each object's place and door state, the
  mission verifier's memory and the positions its descriptions track (not minigrid's step counter); with
  ``progress="plan"`` also the expert's remaining plan, which ``progress`` is computed from.

A family that does not describe its state gets a default: its native engine state through the
snapshot codec, else its action history (then two paths to one state differ). The conformance suite
(:mod:`agentgym_budget.testing`) checks that forks agree, that a round trip (``go east`` then ``go
west``) returns to the start's digest and that a step that changes the state changes the digest.

Example:
    >>> digest_state(["task-1", {"facts": ["at(P, r_0)"], "score": 0}])
    '76dabb7b888e1872'
    >>> digest_state(["task-1", {"score": 0, "facts": ["at(P, r_0)"]}])  # key order does not matter
    '76dabb7b888e1872'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__: list[str] = []

STATE_INFO_KEYS: Mapping[str, str] = {
    "state_digest": "a 16-hex-character digest of the engine state: equal states, equal digests (str)",
}
"""The opt-in ``info`` key every family offers (added by :class:`~agentgym_budget.core.env.TextEnv`)."""

DIGEST_CHARS = 16
"""Length of a digest in hexadecimal characters (64 bits)."""


def digest_state(data: Any) -> str:
    """The digest of ``data``: plain JSON values (``bytes`` are hashed as they are).

    Raises:
        TypeError: ``data`` holds a value JSON cannot write (a family's ``_state_data`` must be plain).
    """
    payload = data if isinstance(data, bytes) else canonical_json(data).encode()
    return hashlib.sha256(payload).hexdigest()[:DIGEST_CHARS]


def canonical_json(data: Any) -> str:
    """``data`` as JSON with sorted keys and no spaces (tuples as lists; NaN refused).

    Example:
        >>> canonical_json({"b": (1, 2), "a": None})
        '{"a":null,"b":[1,2]}'
    """
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
