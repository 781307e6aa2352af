"""Fuzzing restored snapshots: genuine snapshots with one field changed, re-encoded under a valid digest.

``python -m tests.snapshot_fuzz FAMILY CASES`` takes a genuine snapshot of ``FAMILY``'s stack (see
:data:`tests.travel_helpers.FAMILIES`), then for ``CASES`` hypothesis examples replaces one leaf of the
decoded state (a number, string, bytes, array, list or tuple anywhere in it) by another value, encodes
the result (valid digest) and restores it. A restore may succeed or raise an agentgym-budget error;
any other exception fails. After every case the genuine snapshot must replay the same continuation.
A restored forgery is then stepped (the continuation is played: each step returns or raises an
agentgym-budget error). ``python -m tests.snapshot_fuzz FAMILY CASES fields`` instead forges every field
of every part (each wrapper's part and the base env's record, one level into its engine record), CASES
hypothesis values each. The child prints ``{"family", "cases", "refused", "accepted"}``; a crash kills
only the child.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import warnings
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentgym_budget.errors import AgentGymBudgetError
from agentgym_budget.snapshots.state import EnvState
from tests.travel_helpers import FAMILIES, _plan, _play

__all__ = ["fields", "leaves", "main", "replace_leaf"]

_LEAF = (bool, int, float, str, bytes, np.ndarray, type(None))


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every leaf (and every list or tuple) of a decoded state."""
    if isinstance(value, (*_LEAF, np.generic)):
        return [path]
    if dataclasses.is_dataclass(value):
        return [p for f in dataclasses.fields(value) for p in leaves(getattr(value, f.name), (*path, f.name))]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in leaves(v, (*path, ("key", k)))]
    if isinstance(value, list | tuple):
        return [path] + [p for i, v in enumerate(value) for p in leaves(v, (*path, i))]
    return [path]


def fields(state: EnvState) -> list[tuple[Any, ...]]:
    """Paths of every field of every part of ``state``, and of the fields of the records the base part holds."""
    paths: list[tuple[Any, ...]] = []
    for index, part in enumerate(state.parts):
        if dataclasses.is_dataclass(part):
            for f in dataclasses.fields(part):
                value = getattr(part, f.name)
                paths.append(("parts", index, f.name))
                if dataclasses.is_dataclass(value):
                    paths += [("parts", index, f.name, g.name) for g in dataclasses.fields(value)]
        elif isinstance(part, dict):
            paths += [("parts", index, ("key", key)) for key in part]
        elif isinstance(part, tuple | list):
            paths += [("parts", index, i) for i in range(len(part))]
    return paths


def replace_leaf(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """``value`` with the leaf at ``path`` replaced by ``new`` (rebuilding frozen containers)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if dataclasses.is_dataclass(value):
        return dataclasses.replace(value, **{head: replace_leaf(getattr(value, head), rest, new)})
    if isinstance(value, dict):
        return {k: (replace_leaf(v, rest, new) if k == head[1] else v) for k, v in value.items()}
    items = list(value)
    items[head] = replace_leaf(items[head], rest, new)
    return (
        type(value)(items)
        if isinstance(value, tuple) and not hasattr(value, "_fields")
        else type(value)(*items)
        if isinstance(value, tuple)
        else items
    )


_NEW = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31 - 1, 2**63, -(2**63)]),
    st.text(max_size=20),
    st.binary(max_size=64),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True),
    st.lists(st.integers(-5, 5), max_size=4),
    st.tuples(),
    st.builds(lambda n: np.zeros(n, dtype=np.uint8), st.integers(0, 64)),
)


def run(family: str, cases: int, every_field: bool = False) -> dict[str, Any]:
    """Fuzz ``cases`` restores of ``family`` (``every_field``: ``cases`` per field; see the module docstring)."""
    make, reset_args = FAMILIES[family]
    env = make()
    _, info = env.reset(**reset_args)
    prefix, continuation = _plan(family, info)
    _play(env, prefix)
    genuine = env.snapshot().to_bytes()
    env.restore(EnvState.from_bytes(genuine))
    expected = _play(env, continuation)
    decoded = EnvState.from_bytes(genuine)
    paths = fields(decoded) if every_field else leaves(decoded)
    counts = {"refused": 0, "accepted": 0}
    trace = bool(os.environ.get("SNAPSHOT_FUZZ_TRACE"))  # print each case before it runs (to find a crash)

    @settings(
        max_examples=cases, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(st.sampled_from(paths), _NEW)
    def case(path: tuple[Any, ...], new: Any) -> None:
        if trace:
            print(f"case {path} = {new!r:.100}", file=sys.stderr, flush=True)
        try:
            forged = replace_leaf(decoded, path, new).to_bytes()
        except (AgentGymBudgetError, TypeError, ValueError):
            return  # not encodable: no such snapshot can be written
        try:
            env.restore(EnvState.from_bytes(forged))
            counts["accepted"] += 1
        except AgentGymBudgetError:
            counts["refused"] += 1
        else:
            _step_forgery(env, continuation)
        env.restore(EnvState.from_bytes(genuine))
        assert _play(env, continuation) == expected, f"genuine replay changed after {path} = {new!r:.80}"

    if not every_field:
        case()
        return {"family": family, "cases": cases, **counts}
    for path in paths:
        settings(
            max_examples=cases, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
        )(given(st.just(path), _NEW)(case.hypothesis.inner_test))()
    return {"family": family, "cases": cases * len(paths), "fields": len(paths), **counts}


def _step_forgery(env: Any, continuation: list[Any]) -> None:
    """Play ``continuation`` on a restored forgery: each step returns or raises an agentgym-budget error."""
    for action in continuation:
        try:
            result = env.step(action)
        except AgentGymBudgetError:
            return
        if result[2] or result[3]:
            return


def main() -> None:
    """``python -m tests.snapshot_fuzz FAMILY CASES``."""
    warnings.simplefilter("ignore")
    print(json.dumps(run(sys.argv[1], int(sys.argv[2]), every_field=sys.argv[3:] == ["fields"])))


if __name__ == "__main__":
    main()
