"""The conformance suite's check of ``info["state_digest"]`` (:mod:`agentgym_budget.core.state_digest`).

Two paths to one engine state must give one digest, and a state that is not the same must give
another. What counts as "the same state" is not read from the digest:

* a state-keeping action (``inventory`` by default) played in a fork keeps the digest;
* a round trip found in the admissible actions (:func:`round_trips`: ``go east`` then ``go west``,
  ``open fridge`` then ``close fridge``, ALFWorld's ``go to B`` then ``go to A``, WebShop's ``next >`` then ``< prev``,
  BabyAI's ``turn left`` then ``turn right``) whose first move
  changed the admissible actions, progress or end and whose last restored them returns to the
  digest, and its first move changed it;
* forks restored from one snapshot, and a state restored from its bytes into a new stack, agree;
* any two states of the walk whose admissible actions, progress or end differ have different digests;
* two states with one digest continue alike: the same action gives the same transition from both.

Example:
    >>> round_trips(["go east", "look", "open door"])
    [((), ('go east', 'go west')), ((), ('open door', 'close door'))]
    >>> round_trips(["go to cabinet 1", "go to fridge 1"])
    [(('go to cabinet 1',), ('go to fridge 1', 'go to cabinet 1'))]
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.testing._play import transition_key
from agentgym_budget.wrappers import StateSnapshot

__all__: list[str] = []

_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east", "up": "down", "down": "up"}
_HEX = re.compile(r"[0-9a-f]{16}\Z")
_HISTORY_KEYS = frozenset({"expert_action", "expert_plan", "turn", "turns_left", "max_turns"})
"""``info`` keys that depend on the path, not only on the state (TWX's expert follows its gold path)."""

Trip = tuple[tuple[str, ...], tuple[str, ...]]
"""A round trip: commands that lead to a state, then commands that leave it and come back."""


def round_trips(admissible: Sequence[str]) -> list[Trip]:
    """Round trips the admissible actions offer: opposite moves, open and close, two ``go to`` places, next and
    previous page, a turn each way."""
    trips: list[Trip] = []
    for action in admissible:
        verb, _, direction = action.partition(" ")
        if verb in ("go", "move") and direction in _OPPOSITE:
            trips.append(((), (action, f"{verb} {_OPPOSITE[direction]}")))
        if verb == "open":
            trips.append(((), (action, f"close {direction}")))
    places = [action for action in admissible if action.startswith("go to ")]
    if len(places) >= 2:
        trips.append(((places[0],), (places[1], places[0])))
    if "click[next >]" in admissible:
        trips.append(((), ("click[next >]", "click[< prev]")))
    if "turn left" in admissible and "turn right" in admissible:
        trips.append(((), ("turn left", "turn right")))
    return trips


def check_state_digest(
    make_env: Callable[..., gym.Env],
    *,
    seed: int,
    steps: int,
    keeping_action: str,
    trips: Callable[[dict[str, Any]], list[Trip]],
    fallback: Sequence[str],
) -> tuple[int, bool]:
    """Run the checks of the module docstring on the states of one walk.

    Returns:
        How many round trips were checked, and whether the env listed admissible actions to find them in.

    The walk follows ``info["expert_plan"]`` (random admissible actions, else ``fallback``, once it is empty)
    for up to ``steps`` steps beside an env without the digest, which must play alike.
    """
    keys = {"state_digest", "expert_plan"}
    env, plain = StateSnapshot(make_env(info_keys=keys)), make_env()
    rng, states, checked, listed = random.Random(seed), [], 0, False
    try:
        _, info = env.reset(seed=seed)
        plain.reset(seed=seed)
        for step in range(steps + 1):
            digest = info["state_digest"]
            assert isinstance(digest, str) and _HEX.match(digest), f"state_digest {digest!r} is not 16 hex characters"
            states.append((digest, _signature(info)))
            if step in (0, steps):
                _check_forks(env, digest, keeping_action, _first(info, fallback))
            listed = listed or "admissible_actions" in info
            if not checked and info.get("admissible_actions"):
                checked += any(check_round_trip(env, trip, info) for trip in trips(info))
            plan = info.get("expert_plan") or ()
            action = plan[0] if plan else rng.choice(info.get("admissible_actions") or fallback)
            result, expected = env.step(action), plain.step(action)
            assert _behaviour(result, strip=keys) == _behaviour(expected), f"requesting state_digest changed {action!r}"
            info = result[-1]
            if result[2]:
                break
        _check_distinct(states)
        _check_restored(env, make_env(info_keys=keys), info["state_digest"])
    finally:
        env.close()
        plain.close()
    return checked, listed


def check_round_trip(env: StateSnapshot, trip: Trip, info: dict[str, Any]) -> bool:
    """Play ``trip`` in two forks of ``env``'s state; ``False`` when it was no round trip there (nothing checked).

    It is one when its first move changes the admissible actions, progress or end and its last restores them.
    """
    prefix, loop = trip
    forks = env.fork(2)
    try:
        for fork in forks:
            for command in prefix:
                result = fork.step(command)
                if result[2]:
                    return False
                info = result[-1]
        there, moved = forks
        before = _signature(info)
        result = moved.step(loop[0])
        if result[2] or _signature(result[-1]) == before:
            return False  # the first move did nothing (a closed door) or ended the episode
        assert result[-1]["state_digest"] != info["state_digest"], f"{loop[0]!r} changed the state, not its digest"
        for command in loop[1:]:
            result = moved.step(command)
        if result[2] or _signature(result[-1]) != before:
            return False  # it did not come back (or scored on the way: a quest to reach a room)
        assert result[-1]["state_digest"] == info["state_digest"], f"the round trip {trip} came back to another digest"
        _continue_alike(there, moved, before[0][0], f"after the round trip {trip}")
        return True
    finally:
        for fork in forks:
            fork.close()


def _check_forks(env: StateSnapshot, digest: str, keeping_action: str, action: str) -> None:
    """Forks of one state agree; a state-keeping action keeps the digest and the state's future."""
    forks = env.fork(2)
    try:
        assert [_digest(fork) for fork in forks] == [digest, digest], "forks restored from one snapshot disagree"
        result = forks[0].step(keeping_action)
        assert result[-1]["state_digest"] == digest, f"{keeping_action!r} changed the digest (a turn counted?)"
        if not result[2]:
            _continue_alike(forks[0], forks[1], action, f"after {keeping_action!r}")
    finally:
        for fork in forks:
            fork.close()


def _check_distinct(states: list[tuple[str, tuple[Any, ...]]]) -> None:
    """States whose admissible actions, progress or end differ have different digests."""
    seen: dict[str, tuple[Any, ...]] = {}
    for digest, signature in states:
        other = seen.setdefault(digest, signature)
        assert other == signature, f"two different states share the digest {digest}: {other} vs {signature}"


def _check_restored(env: StateSnapshot, other_env: gym.Env, digest: str) -> None:
    """The state restored from its bytes into a new stack has the digest it had."""
    other = StateSnapshot(other_env)
    try:
        other.restore(EnvState.from_bytes(env.snapshot().to_bytes()))
        assert _digest(other) == digest, "a state restored from its bytes into a new stack has another digest"
    finally:
        other.close()


def _signature(info: dict[str, Any]) -> tuple[Any, ...]:
    return (tuple(sorted(info.get("admissible_actions", ()))), info["progress"], info["won"], info["lost"])


def _first(info: dict[str, Any], fallback: Sequence[str]) -> str:
    admissible = info.get("admissible_actions")
    return sorted(admissible)[0] if admissible else fallback[0]


def _digest(env: gym.Env) -> str:
    return env.unwrapped.state_digest()


def _behaviour(result: tuple[Any, ...], strip: frozenset[str] | set[str] = frozenset()) -> tuple[Any, ...]:
    """A transition without the ``info`` keys that depend on the path (and ``strip``)."""
    *head, info = result
    dropped = _HISTORY_KEYS | set(strip)
    return transition_key((*head, {k: v for k, v in info.items() if k not in dropped}))


def _continue_alike(first: gym.Env, second: gym.Env, action: str, what: str) -> None:
    assert _behaviour(first.step(action)) == _behaviour(second.step(action)), (
        f"{what}: one digest, but {action!r} played from the two states gave different transitions"
    )
