"""Snapshot, restore and clone whole environment stacks, through every wrapper.

:func:`get_state` walks the stack from the given env down to the base env and
collects one part per layer:

* the base env's part comes from its ``get_state()`` (every
  :class:`~agentgym_budget.core.env.TextEnv` has one);
* a wrapper that defines ``get_wrapper_state()`` / ``set_wrapper_state(part)``
  (all agentgym-budget wrappers do) provides its own part;
* any other wrapper (Gymnasium's ``OrderEnforcing``, ``PassiveEnvChecker``,
  ``TimeLimit``, ``RecordEpisodeStatistics``, ...) is captured by deep-copying its
  plain attributes (counters, flags, buffers), leaving out the wrapped env and spaces.

:func:`set_state` checks that the stack has the same layers and restores the base
first, then the wrappers from the inside out. :func:`clone` rebuilds the same stack
on a fresh base env (from the base's :meth:`~agentgym_budget.core.env.TextEnv.clone` or
its Gymnasium spec, and each wrapper's recorded constructor arguments); with
``share_engine=True`` (what ``StateSnapshot.fork`` uses) the new base env shares the loaded
engine and the wrappers listed in :data:`COPIED_WRAPPERS` are copied, so a fork costs about one
restore instead of starting an engine.

States are plain data underneath: :meth:`EnvState.to_bytes <agentgym_budget.snapshots.state.EnvState.to_bytes>`
serialises one (:mod:`agentgym_budget.snapshots.codec`) for another process.

Example:
    >>> import gymnasium as gym
    >>> import agentgym_budget
    >>> from agentgym_budget.wrappers import TurnBudget
    >>> env = TurnBudget(gym.make("agentgym_budget/TextWorld-CoinCollector-v0"), max_turns=5)
    >>> _ = env.reset(seed=1)
    >>> state = get_state(env)
    >>> first = env.step("go north")
    >>> set_state(env, state)
    >>> env.step("go north")[0] == first[0]
    True
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator
from gymnasium.utils import RecordConstructorArgs

from agentgym_budget.errors import AgentGymBudgetError, SnapshotMismatchError, SnapshotUnsupportedError
from agentgym_budget.snapshots import schema
from agentgym_budget.snapshots.plain_parts import check_plain_field, check_plain_part
from agentgym_budget.snapshots.state import EnvState

__all__ = ["clone", "fingerprint", "get_state", "layers", "set_state"]

_NOT_STATE = frozenset(
    {"env", "_action_space", "_observation_space", "_metadata", "_cached_spec", "_saved_kwargs", "_reward_range"}
)


def layers(env: gym.Env) -> list[gym.Env]:
    """Return the layers of ``env``, outermost first; the last one is ``env.unwrapped``."""
    stack = [env]
    while isinstance(stack[-1], gym.Wrapper):
        stack.append(stack[-1].env)
    return stack


_NAMES: dict[type, str] = {}


def _name(layer: gym.Env) -> str:
    kind = type(layer)
    name = _NAMES.get(kind)
    if name is None:
        name = _NAMES[kind] = f"{kind.__module__}.{kind.__qualname__}"
    return name


def fingerprint(env: gym.Env) -> tuple[Any, ...]:
    """Identity of a stack: its layer classes and the base env's configuration."""
    stack = layers(env)
    base = stack[-1]
    key = getattr(base, "env_key", None)
    if key is None:
        spec = base.spec
        key = (spec.id, repr(sorted(spec.kwargs.items()))) if spec is not None else (_name(base),)
    return (tuple(_name(layer) for layer in stack), key)


def _wrapper_part(wrapper: gym.Wrapper) -> Any:
    getter = getattr(type(wrapper), "get_wrapper_state", None)
    if getter is not None:
        return getter(wrapper)
    part = {}
    for attribute, value in vars(wrapper).items():
        if attribute in _NOT_STATE or isinstance(value, (gym.Env, gym.Space)):
            continue
        try:
            part[attribute] = _copy(value)
        except Exception as err:
            raise SnapshotUnsupportedError(
                f"Cannot snapshot wrapper {type(wrapper).__name__}: its attribute {attribute!r} "
                f"({type(value).__name__}) cannot be copied ({err}). Give the wrapper "
                "get_wrapper_state()/set_wrapper_state(part) methods, or use StateSnapshot(mode='replay')."
            ) from err
    return part


_IMMUTABLE = (bool, int, float, str, bytes, type(None))


def _copy(value: Any) -> Any:
    return value if isinstance(value, _IMMUTABLE) else copy.deepcopy(value)


def _checked_wrapper_part(wrapper: gym.Wrapper, part: Any) -> Callable[[], None]:
    """Check ``part`` for ``wrapper`` (nothing is set) and return what applies it."""
    kind = type(wrapper)
    setter = getattr(kind, "set_wrapper_state", None)
    if setter is not None:
        checker = getattr(kind, "check_wrapper_state", None)
        if checker is not None:
            checker(wrapper, part)  # the setter checks again: it cannot fail after this
        return lambda: setter(wrapper, part)
    owned = _wrapper_part(wrapper)
    fields = schema.fields(part, f"the {kind.__name__} part", frozenset(owned))
    values = {name: check_plain_field(kind.__name__, name, fields[name], owned[name]) for name in owned}
    check_plain_part(kind.__name__, values)
    return lambda: wrapper.__dict__.update(values)


def supports_native_state(env: gym.Env) -> bool:
    """Whether the base env of ``env`` has ``get_state``/``set_state``."""
    base = env.unwrapped
    return callable(getattr(base, "get_state", None)) and callable(getattr(base, "set_state", None))


def get_state(env: gym.Env) -> EnvState:
    """Capture the state of ``env`` and every layer below it.

    Raises:
        SnapshotUnsupportedError: The base env has no ``get_state`` or a wrapper cannot be copied.
    """
    stack = layers(env)
    if not supports_native_state(env):
        raise SnapshotUnsupportedError(
            f"{_name(stack[-1])} has no get_state()/set_state(); wrap the stack in "
            "StateSnapshot(env, mode='replay') to snapshot it by replaying actions."
        )
    parts = [_wrapper_part(layer) for layer in stack[:-1]]
    parts.append(stack[-1].get_state())
    return EnvState(stack=tuple(_name(layer) for layer in stack), parts=tuple(parts))


def set_state(env: gym.Env, state: EnvState) -> None:
    """Restore ``state`` (from :func:`get_state`) into ``env`` and every layer below it.

    A snapshot read from bytes may have been edited (its digest is unkeyed): one whose fields do not
    have the shapes a genuine snapshot has raises :class:`SnapshotMismatchError` too, and the env
    is then left for ``reset()`` or the restore of a sound snapshot.

    Raises:
        SnapshotMismatchError: ``state`` is not a native :class:`EnvState`, was taken on a stack
            with other layers, or on a base env that cannot hold its task, or is malformed.
    """
    try:
        _set_state(env, state)
    except AgentGymBudgetError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, RecursionError) as err:
        raise SnapshotMismatchError(
            f"Malformed snapshot: {type(err).__name__}: {err!s:.200}. Restore a sound snapshot or reset the env."
        ) from err


def _set_state(env: gym.Env, state: EnvState) -> None:
    if not isinstance(state, EnvState) or not state.is_native:
        raise SnapshotMismatchError(
            f"Expected a native EnvState from get_state(), got {type(state).__name__}"
            + (" holding a replay log (restore it with StateSnapshot.restore)." if isinstance(state, EnvState) else ".")
        )
    stack = layers(env)
    names = tuple(_name(layer) for layer in stack)
    if names != state.stack:
        raise SnapshotMismatchError(
            f"The snapshot was taken on the stack {' > '.join(n.rsplit('.', 1)[-1] for n in state.stack)} "
            f"but is restored into {' > '.join(n.rsplit('.', 1)[-1] for n in names)}; "
            "restore into an env with the same wrappers (StateSnapshot.fork builds one)."
        )
    if len(state.parts) != len(stack):
        raise SnapshotMismatchError(f"Malformed snapshot: {len(state.parts)} parts for a stack of {len(stack)} layers.")
    base = stack[-1]
    apply = [_checked_wrapper_part(layer, part) for layer, part in zip(stack[:-1], state.parts[:-1], strict=True)]
    check = getattr(base, "check_state", None)
    if check is not None and not getattr(base, "checks_state_before_set", False):
        check(state.parts[-1])
    base.set_state(state.parts[-1])
    for step in reversed(apply):
        step()


def _clone_base(base: gym.Env, share_engine: bool) -> gym.Env:
    if callable(getattr(base, "clone", None)):
        return base.clone(share_engine=True) if share_engine else base.clone()
    spec = base.spec
    if spec is None or spec.entry_point is None:
        raise SnapshotUnsupportedError(
            f"Cannot clone {_name(base)}: it has no clone() method and no Gymnasium spec. "
            "Make it with gymnasium.make(...) so its constructor arguments are known."
        )
    creator = load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
    kwargs = dict(spec.kwargs)
    if base.render_mode is not None:
        kwargs["render_mode"] = base.render_mode
    twin = creator(**kwargs)
    twin.spec = spec
    return twin


def clone(env: gym.Env, *, share_engine: bool = False) -> gym.Env:
    """Build the same stack as ``env`` (same wrapper classes and arguments) on a fresh base env.

    The clone starts in its initial, never-reset state; restore a snapshot into it to
    move it anywhere (``StateSnapshot.fork`` does both).

    Args:
        env: The stack to copy.
        share_engine: Make a clone to restore a state of ``env``'s episode into at once (as
            ``StateSnapshot.fork`` does): its base env shares the loaded engine of ``env``'s base
            env (see :meth:`agentgym_budget.core.env.TextEnv.clone`), and the wrappers that keep all
            their state in their snapshot part (:data:`COPIED_WRAPPERS`) are copied instead of
            rebuilt, so they hold ``env``'s state until the restore.

    Raises:
        SnapshotUnsupportedError: The base env cannot be rebuilt, or a wrapper does not record
            its constructor arguments (``gymnasium.utils.RecordConstructorArgs``).
    """
    stack = layers(env)
    twin = _clone_base(stack[-1], share_engine and getattr(stack[-1], "can_share_engine", False))
    for layer in reversed(stack[:-1]):
        if share_engine and _name(layer) in COPIED_WRAPPERS:
            twin = _copy_wrapper(layer, twin)
            continue
        if not isinstance(layer, RecordConstructorArgs):
            raise SnapshotUnsupportedError(
                f"Cannot clone wrapper {type(layer).__name__}: it does not record its constructor "
                "arguments. Derive it from gymnasium.utils.RecordConstructorArgs."
            )
        twin = _rebuild(layer, twin)
    return twin


COPIED_WRAPPERS = frozenset(
    {
        "agentgym_budget.wrappers.turn_budget.TurnBudget",
        "agentgym_budget.wrappers.budget_mix.BudgetMix",
        "agentgym_budget.wrappers.process_reward.ProcessReward",
        "gymnasium.wrappers.common.OrderEnforcing",
        "gymnasium.wrappers.common.PassiveEnvChecker",
        "gymnasium.wrappers.common.TimeLimit",
        "gymnasium.wrappers.common.RecordEpisodeStatistics",
    }
)
"""Wrappers whose snapshot part holds all their mutable state, so that a copy restored from a
snapshot is independent of the original (``clone(env, share_engine=True)`` copies them)."""


def _copy_wrapper(layer: gym.Wrapper, inner: gym.Env) -> gym.Wrapper:
    twin = object.__new__(type(layer))
    twin.__dict__.update(layer.__dict__)
    twin.env = inner
    return twin


def _rebuild(layer: gym.Wrapper, inner: gym.Env) -> gym.Wrapper:
    """A new wrapper of ``layer``'s class and constructor arguments around ``inner``.

    The new wrapper shares ``layer``'s recorded arguments (``RecordConstructorArgs`` would otherwise
    deep-copy them again; they are never mutated).
    """
    kind = type(layer)
    twin = kind.__new__(kind)
    twin._saved_kwargs = layer._saved_kwargs
    kind.__init__(twin, inner, **layer._saved_kwargs)
    return twin
