"""What :class:`~agentgym_budget.env.TextEnv` builds on that needs no env: spaces and random generators.

* :func:`fresh_spaces` hands each env its own observation and action spaces, copied from one
  prototype (building a Text space costs ~0.1 ms; an env made per episode should not pay it);
* :func:`generator_at` rebuilds a numpy random generator from a snapshot's ``bit_generator.state``.

Example:
    >>> import numpy as np
    >>> observation_space, action_space = fresh_spaces()
    >>> observation_space is not fresh_spaces()[0]
    True
    >>> rng = np.random.default_rng(7)
    >>> twin = generator_at(rng.bit_generator.state)
    >>> int(twin.integers(1000)) == int(rng.integers(1000))
    True
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_budget import text
from agentgym_budget.errors import SnapshotMismatchError

__all__ = ["fresh_spaces", "generator_at"]


def fresh_spaces() -> tuple[gym.spaces.Text, gym.spaces.Text]:
    """New ``(observation_space, action_space)`` with their own sampling generators."""
    observation_space, action_space = _space_prototypes()
    return _fresh_space(observation_space), _fresh_space(action_space)


@functools.cache
def _space_prototypes() -> tuple[gym.spaces.Text, gym.spaces.Text]:
    return text.observation_space(), text.action_space()


def _fresh_space(prototype: gym.spaces.Space) -> gym.spaces.Space:
    """A copy of ``prototype`` with its own sampling generator (building a Text space costs ~0.1 ms)."""
    space = object.__new__(type(prototype))
    space.__dict__.update(prototype.__dict__)
    space._np_random = None
    return space


_BIT_GENERATORS = {
    "PCG64": np.random.PCG64,
    "PCG64DXSM": np.random.PCG64DXSM,
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
}
_ANY_SEED = np.random.SeedSequence(0)  # reused: building generators from it draws no OS entropy


def generator_at(rng_state: Mapping[str, Any]) -> np.random.Generator:
    """A new generator in state ``rng_state`` (a ``bit_generator.state`` dict)."""
    name = rng_state.get("bit_generator")
    kind = _BIT_GENERATORS.get(name)
    if kind is None:
        raise SnapshotMismatchError(
            f"Unknown random generator {name!r} in the snapshot; expected {sorted(_BIT_GENERATORS)}."
        )
    bit_generator = kind(_ANY_SEED)
    bit_generator.state = rng_state
    return np.random.Generator(bit_generator)
