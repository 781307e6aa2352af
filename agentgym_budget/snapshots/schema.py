"""Checks of the fields of a snapshot part, for the layers that restore one (typed refusals, nothing applied).

A snapshot read from bytes without a key may have been edited (its digest is unkeyed), so every layer
checks its part before anything is set: each function here returns the field as the layer keeps it, or
raises :class:`~agentgym_budget.errors.SnapshotMismatchError` naming the field, what it holds and what a
genuine snapshot holds there.

Example:
    >>> count(3, "TurnBudget turn")
    3
    >>> count(float("nan"), "TurnBudget turn")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.SnapshotMismatchError: Malformed snapshot: TurnBudget turn is nan (float); expected an integer >= 0.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from agentgym_budget.errors import SnapshotMismatchError

__all__: list[str] = []  # used across rooms, but not part of the public API

_BIT_GENERATORS = {
    "PCG64": np.random.PCG64,
    "PCG64DXSM": np.random.PCG64DXSM,
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
}
_ANY_SEED = np.random.SeedSequence(0)  # reused: building generators from it draws no OS entropy


def mismatch(name: str, value: Any, expected: str) -> SnapshotMismatchError:
    """The error for field ``name`` holding ``value`` where a genuine snapshot holds ``expected``."""
    return SnapshotMismatchError(
        f"Malformed snapshot: {name} is {value!r:.60} ({type(value).__name__}); expected {expected}."
    )


def count(value: Any, name: str, *, low: int = 0, high: int | None = None) -> int:
    """``value`` as an ``int`` in ``[low, high]`` (a turn, a budget, a counter)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        bound = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
        raise mismatch(name, value, bound)
    number = int(value)
    if number < low or (high is not None and number > high):
        raise mismatch(name, value, f"an integer >= {low}" if high is None else f"an integer from {low} to {high}")
    return number


def finite(value: Any, name: str) -> float:
    """``value`` as a finite ``float``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise mismatch(name, value, "a finite number")
    return float(value)


def boolean(value: Any, name: str) -> bool:
    """``value`` as a ``bool`` (numpy booleans too)."""
    if not isinstance(value, bool | np.bool_):
        raise mismatch(name, value, "True or False")
    return bool(value)


def text(value: Any, name: str) -> str:
    """``value``, a ``str``."""
    if not isinstance(value, str):
        raise mismatch(name, value, "a string")
    return value


def sequence(value: Any, name: str, size: int | None = None) -> tuple[Any, ...]:
    """``value`` as a tuple (of ``size`` items when given)."""
    if not isinstance(value, tuple | list) or (size is not None and len(value) != size):
        raise mismatch(name, value, "a tuple" if size is None else f"a tuple of {size} items")
    return tuple(value)


def fields(value: Any, name: str, owned: frozenset[str]) -> dict[str, Any]:
    """``value``, a dict holding exactly the keys ``owned`` (a layer's own fields, no other name)."""
    if not isinstance(value, dict) or set(value) != owned or not all(isinstance(k, str) for k in value):
        keys = sorted(map(str, value)) if isinstance(value, dict) else type(value).__name__
        raise SnapshotMismatchError(f"Malformed snapshot: {name} holds the fields {keys}; expected {sorted(owned)}.")
    return value


def generator_state(value: Any, name: str) -> np.random.Generator:
    """A numpy generator in the state ``value`` (a ``bit_generator.state`` dict), built to check it."""
    kind = _BIT_GENERATORS.get(value.get("bit_generator")) if isinstance(value, Mapping) else None
    if kind is None:
        raise mismatch(name, value, f"a numpy bit generator state of one of {sorted(_BIT_GENERATORS)}")
    bit_generator = kind(_ANY_SEED)
    try:
        bit_generator.state = dict(value)
        built = bit_generator.state
    except (TypeError, ValueError, KeyError, OverflowError, AttributeError) as err:
        raise mismatch(name, value, f"a {value['bit_generator']} state ({type(err).__name__}: {err!s:.80})") from err
    if not _same(built, value):
        raise mismatch(name, value, f"a {value['bit_generator']} state as numpy writes it")
    return np.random.Generator(bit_generator)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, Mapping):
        return isinstance(b, Mapping) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, bool | np.bool_) or isinstance(b, bool | np.bool_):
        return isinstance(a, bool | np.bool_) and isinstance(b, bool | np.bool_) and bool(a) == bool(b)
    if isinstance(a, numbers.Integral):
        return isinstance(b, numbers.Integral) and int(a) == int(b)
    return type(a) is type(b) and a == b
