"""The actions and random play of the conformance suite (:mod:`agentgym_budget.testing`).

:data:`NASTY_ACTIONS` break naive text environments; :data:`FALLBACK_ACTIONS` stand in for an env
that does not list its admissible actions; :func:`play_random` and :func:`play_open_prefix` play
random admissible actions and record each transition as a comparable :func:`transition_key`.

Example:
    >>> import random
    >>> import gymnasium as gym
    >>> import agentgym_budget
    >>> env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0")
    >>> played, info = play_open_prefix(env, seed=3, steps=4, rng=random.Random(0))
    >>> len(played) <= 4, "won" in info
    (True, True)
    >>> env.close()
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium as gym

__all__ = ["FALLBACK_ACTIONS", "NASTY_ACTIONS", "play_open_prefix", "play_random", "transition_key"]

NASTY_ACTIONS: tuple[str, ...] = (
    "",
    "   ",
    "\\",
    "\\help",
    "\\q",
    "\\x",
    "look\\q",
    "restart",
    "RESTART",
    "quit",
    "q",
    "save",
    "restore",
    "undo",
    "oops restart",
    "script",
    "look. restart",
    "look then quit",
    "tw-trace-actions",
    "tw-extra-infos score",
    "yes",
    "\x00\x01\x02",
    "\n\n\n",
    "é" * 300,
    "🙂 go north",
    "x" * 10_000,
    "go " + "north " * 100,
    "click[" + "a" * 500 + "]",
    "search[]",
)
"""Actions that break naive text environments; every env must treat each as one normal turn."""


FALLBACK_ACTIONS: tuple[str, ...] = (
    "look",
    "inventory",
    "go north",
    "go south",
    "go east",
    "go west",
    "open door",
    "take coin",
)
"""Actions played when an env's ``info`` has no ``admissible_actions`` (moves, looks, a door, a coin)."""


def transition_key(result: tuple[Any, ...]) -> tuple[Any, ...]:
    """A comparable form of a ``reset`` or ``step`` result (observation, reward, flags, info)."""
    return tuple(sorted(item.items()) if isinstance(item, dict) else item for item in result)


def play_random(
    env: gym.Env,
    steps: int,
    rng: random.Random,
    first_info: dict[str, Any],
    fallback: tuple[str, ...] = FALLBACK_ACTIONS,
) -> list[tuple[str, tuple]]:
    """Play up to ``steps`` random admissible actions (else ``fallback`` ones); return ``(action, transition_key)`` pairs."""
    info, played = first_info, []
    for _ in range(steps):
        action = rng.choice(info.get("admissible_actions") or fallback)
        result = env.step(action)
        played.append((action, transition_key(result)))
        info = result[-1]
        if result[2] or result[3]:
            break
    return played


def play_open_prefix(
    env: gym.Env, seed: int, steps: int, rng: random.Random, fallback: tuple[str, ...] = FALLBACK_ACTIONS
) -> tuple[list[tuple[str, tuple]], dict[str, Any]]:
    """Reset ``env`` with ``seed`` and play random actions, leaving the episode running.

    Returns:
        The played ``(action, transition_key)`` pairs and the ``info`` of the last transition.
        If the random play ended the episode, the env is reset and replayed without the last step.
    """
    _, info = env.reset(seed=seed)
    played = play_random(env, steps, rng, info, fallback)
    if played and (played[-1][1][2] or played[-1][1][3]):
        played.pop()
        _, info = env.reset(seed=seed)
        for action, _ in played:
            env.step(action)
    return played, (dict(played[-1][1][-1]) if played else info)
