"""What :class:`~agentgym_budget.core.env.TextEnv` builds on that needs no env: spaces and random generators.

* :func:`fresh_spaces` hands each env its own observation and action spaces, copied from one
  prototype (building a Text space costs ~0.1 ms; an env made per episode should not pay it);
* :func:`generator_at` rebuilds a numpy random generator from a snapshot's ``bit_generator.state``;
* :func:`check_restorable` says why a state cannot be restored into an env (its type, configuration or task);
* :func:`select_task` reads ``reset``'s ``task`` option (an id or an index) or draws a task.

Example:
    >>> import numpy as np
    >>> observation_space, action_space = fresh_spaces()
    >>> observation_space is not fresh_spaces()[0]
    True
    >>> rng = np.random.default_rng(7)
    >>> twin = generator_at(rng.bit_generator.state)
    >>> int(twin.integers(1000)) == int(rng.integers(1000))
    True
    >>> select_task({"task": -1}, ("a", "b"), {"a": 0, "b": 1}, draw=lambda count: 0, env_name="demo", split="train")
    'b'
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_budget.core import text
from agentgym_budget.core.turn import Turn
from agentgym_budget.errors import InvalidOptionError, SnapshotMismatchError, UnknownTaskError
from agentgym_budget.snapshots import schema
from agentgym_budget.snapshots.state import TextEnvState

__all__ = ["check_episode_fields", "check_restorable", "fresh_spaces", "generator_at", "select_task"]


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


def generator_at(rng_state: Mapping[str, Any]) -> np.random.Generator:
    """A new generator in state ``rng_state`` (a ``bit_generator.state`` dict).

    Raises:
        SnapshotMismatchError: ``rng_state`` is not a state of a numpy bit generator.
    """
    return schema.generator_state(rng_state, "the env's random generator state")


def restore_generator(
    generator: np.random.Generator | None, rng_state: Mapping[str, Any]
) -> tuple[np.random.Generator | None, Mapping[str, Any] | None]:
    """``(generator, pending state)`` after restoring ``rng_state``: set in place when ``generator`` has that bit
    generator, else left to be built on first use (a fork that is only restored needs no generator)."""
    if generator is not None and type(generator.bit_generator).__name__ == rng_state.get("bit_generator"):
        generator.bit_generator.state = rng_state
        return generator, None
    return None, rng_state


def select_task(
    options: Mapping[str, Any] | None,
    tasks: Sequence[str],
    task_index: Mapping[str, int],
    *,
    draw: Callable[[int], int],
    env_name: str,
    split: str,
) -> str:
    """The task a ``reset(options=...)`` asks for: ``options["task"]`` (an id or an index), else ``tasks[draw(len)]``.

    Args:
        options: ``reset``'s options; ``task`` is the only key an env understands.
        tasks: The split's task ids, in order.
        task_index: Position of each task id (membership is checked there).
        draw: Picks an index below its argument (the env's ``np_random``), when no task is given.
        env_name: The env's name, for error messages.
        split: The split ``tasks`` come from, for error messages.

    Raises:
        InvalidOptionError: ``options`` is not a mapping, has other keys, or ``task`` has a wrong type.
        UnknownTaskError: An unknown id or an out-of-range index.
    """
    if options is not None and not isinstance(options, Mapping):
        raise InvalidOptionError(
            f"{env_name}: reset options must be a dict such as {{'task': 0}}, got {type(options).__name__}."
        )
    options = dict(options or {})
    task = options.pop("task", None)
    if options:
        raise InvalidOptionError(
            f"{env_name}: unknown reset option(s) {sorted(options)}; this env understands 'task'. "
            "Wrapper options such as 'max_turns' need their wrapper (TurnBudget) in the stack."
        )
    if task is None:
        return tasks[draw(len(tasks))]
    if isinstance(task, numbers.Integral) and not isinstance(task, bool):
        if not -len(tasks) <= task < len(tasks):
            raise UnknownTaskError(f"{env_name}: task index {task} is out of range for {len(tasks)} tasks.")
        return tasks[int(task)]
    if not isinstance(task, str):
        raise InvalidOptionError(
            f"{env_name}: the 'task' option is a {type(task).__name__} ({task!r:.60}); expected a task id "
            f"(str, one of env.unwrapped.task_ids) or an index (int, -{len(tasks)} to {len(tasks) - 1})."
        )
    if task not in task_index:
        raise UnknownTaskError.for_task(task, tasks, f"{env_name} (split {split!r})")
    return task


def check_restorable(
    state: object, *, env_name: str, env_key: tuple[Any, ...], task_index: Mapping[str, int], split: str
) -> None:
    """Raise :class:`SnapshotMismatchError` unless ``state`` is a :class:`TextEnvState` of this configuration and split.

    Args:
        state: What was given to ``set_state``.
        env_name: The env's name, for error messages.
        env_key: The env's configuration (:attr:`TextEnv.env_key <agentgym_budget.core.env.TextEnv.env_key>`).
        task_index: The split's task ids.
        split: The split's name, for error messages.
    """
    if not isinstance(state, TextEnvState):
        raise SnapshotMismatchError(
            f"{env_name}: expected a TextEnvState from get_state(), got {type(state).__name__}."
        )
    if state.env_key != env_key:
        raise SnapshotMismatchError(
            f"{env_name}: the state was taken on an env configured as {state.env_key}, "
            f"but this env is configured as {env_key}. Restore it into an env made with "
            "the same id and arguments (StateSnapshot.fork makes one)."
        )
    if state.task_id not in task_index:
        raise SnapshotMismatchError(
            f"{env_name}: the state's task {state.task_id!r} is not in this env's "
            f"{split!r} split ({len(task_index)} tasks)."
        )


def check_episode_fields(state: TextEnvState, *, max_replay: int | None) -> None:
    """Raise :class:`SnapshotMismatchError` unless ``state``'s episode fields have the types and ranges of a genuine one.

    Args:
        state: A :class:`TextEnvState` of this env's configuration (:func:`check_restorable`).
        max_replay: The most actions a state restored by replay (``engine`` is ``None``) may hold;
            ``None``: the env never restores by replay, so such a state is refused.
    """
    schema.count(state.engine_seed, "the engine seed", low=1, high=2**31 - 1)
    actions = schema.sequence(state.actions, "the action log")
    for action in actions:
        if not isinstance(action, str) or len(action) > text.ACTION_STEP_LIMIT:
            raise schema.mismatch(
                "an action of the log", action, f"a str of at most {text.ACTION_STEP_LIMIT} characters"
            )
    over = schema.boolean(state.episode_over, "episode_over")
    check_turn(state.last_turn)
    if over != (state.last_turn.won or state.last_turn.lost):
        raise schema.mismatch("episode_over", over, "True exactly when the last turn was won or lost")
    generator_at(state.rng_state)
    if state.engine is None and (max_replay is None or len(actions) > max_replay):
        expected = (
            "an engine state (this env restores natively)"
            if max_replay is None
            else (f"at most {max_replay} actions to replay")
        )
        raise SnapshotMismatchError(
            f"Malformed snapshot: a state with no engine state and {len(actions)} actions; expected {expected}."
        )


def check_turn(turn: Any) -> None:
    """Raise :class:`SnapshotMismatchError` unless ``turn`` is a :class:`Turn` with fields of the right types."""
    if not isinstance(turn, Turn):
        raise schema.mismatch("the last turn", turn, "a Turn")
    schema.text(turn.observation, "the last observation")
    schema.finite(turn.reward, "the last reward")
    schema.boolean(turn.won, "the last turn's won flag")
    schema.boolean(turn.lost, "the last turn's lost flag")
    progress = schema.finite(turn.progress, "the last progress")
    if not 0.0 <= progress <= 1.0:
        raise schema.mismatch("the last progress", progress, "a number from 0 to 1")
    for action in schema.sequence(turn.admissible_actions, "the admissible actions"):
        schema.text(action, "an admissible action")
    schema.text(turn.goal, "the goal")
    if not isinstance(turn.extras, Mapping) or not all(isinstance(key, str) for key in turn.extras):
        raise schema.mismatch("the last turn's extras", turn.extras, "a dict with str keys")
