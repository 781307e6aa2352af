"""Gymnasium vector envs over agentgym-budget ids: autoreset, per-env options and shared memory.

``gym.make_vec(ID, num_envs=n, vectorization_mode="sync" | "async", wrappers=[...])`` works for every
id. Observations come back as a tuple of ``n`` strings; ``info`` as Gymnasium's vector infos (an
array per key plus a ``_key`` mask).

**Autoreset** (Gymnasium's default ``autoreset_mode="next_step"``): the step on which a sub-env's
episode ends (won, lost, or truncated by its :class:`~agentgym_budget.wrappers.TurnBudget`) returns
that episode's last observation and flags; the *next* ``step`` on that sub-env resets it instead of
stepping: its action is ignored, its reward is 0, ``terminated`` and ``truncated`` are ``False`` and
``info["turn"]`` is 0. That automatic reset passes no seed and no options: the task continues the
sub-env's seeded stream (deterministic from the first ``reset(seed=...)``), ``TurnBudget`` uses its
default ``max_turns`` (a ``max_turns`` given in the first ``reset``'s options is *not* applied again)
and :class:`~agentgym_budget.wrappers.BudgetMix` draws a new budget. So with autoreset set budgets in
the wrappers (``wrappers=[lambda env: TurnBudget(env, max_turns=20)]``), not in reset options.
``autoreset_mode="same_step"`` returns ``final_obs`` / ``final_info`` instead; ``"disabled"`` leaves
resets to you (:func:`reset_each`).

**Per-env options**: ``envs.reset(options=...)`` gives the same options to every sub-env.
:func:`reset_each` gives each sub-env its own (one masked reset per sub-env, with Gymnasium's
``reset_mask``), e.g. a different task and budget per sub-env.

**Groups** (GRPO-style, G members from one reset per start):
:class:`~agentgym_budget.vector.group_vector.GroupVectorEnv`.

**Shared memory**: ``AsyncVectorEnv`` with ``shared_memory=True`` (the default) and with
``shared_memory=False`` return the same strings (see :mod:`agentgym_budget.core.text_space`).

Example:
    >>> import gymnasium as gym
    >>> import agentgym_budget
    >>> from agentgym_budget.wrappers import TurnBudget
    >>> envs = gym.make_vec("agentgym_budget/TextWorld-CoinCollector-v0", num_envs=2, vectorization_mode="sync",
    ...                     wrappers=[lambda env: TurnBudget(env, max_turns=30)])
    >>> observations, infos = reset_each(envs, [{"task": 0, "max_turns": 1}, {"task": 1}], seeds=[0, 1])
    >>> infos["max_turns"].tolist(), list(infos["task_id"]) == list(envs.get_attr("task_id"))
    ([1, 30], True)
    >>> _, _, terminated, truncated, infos = envs.step(("look", "look"))
    >>> truncated.tolist(), infos["turn"].tolist()
    ([True, False], [1, 1])
    >>> _, reward, terminated, truncated, infos = envs.step(("look", "look"))  # sub-env 0 autoresets
    >>> infos["turn"].tolist(), infos["max_turns"].tolist()
    ([0, 2], [30, 30])
    >>> envs.close()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentgym_budget.errors import InvalidOptionError

__all__: list[str] = []


def reset_each(
    envs: Any,
    options: Sequence[Mapping[str, Any] | None],
    *,
    seeds: Sequence[int | None] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Reset every sub-env of a Gymnasium vector env with its own options (and seed).

    Args:
        envs: A ``SyncVectorEnv`` or ``AsyncVectorEnv``.
        options: One options mapping (or ``None``) per sub-env, e.g. ``{"task": 3, "max_turns": 10}``.
        seeds: One seed (or ``None``) per sub-env.

    Returns:
        ``(observations, infos)`` of all sub-envs after their resets, as ``envs.reset`` returns them.

    Raises:
        InvalidOptionError: ``options`` or ``seeds`` does not have one entry per sub-env, or an
            options mapping uses Gymnasium's own ``reset_mask`` key.
    """
    n = int(envs.num_envs)
    if len(options) != n or (seeds is not None and len(seeds) != n):
        raise InvalidOptionError(
            f"reset_each: give one options mapping (and one seed) per sub-env: {n} sub-envs, "
            f"{len(options)} options{'' if seeds is None else f', {len(seeds)} seeds'}."
        )
    merged: dict[str, Any] = {}
    observations = None
    for index in range(n):
        own = dict(options[index] or {})
        if "reset_mask" in own:
            raise InvalidOptionError("reset_each: options must not contain 'reset_mask'; it sets one per sub-env.")
        mask = np.zeros(n, dtype=np.bool_)
        mask[index] = True
        seed = [None] * n
        seed[index] = None if seeds is None else seeds[index]
        observations, infos = envs.reset(seed=seed, options={**own, "reset_mask": mask})
        for key, values in infos.items():
            if key.startswith("_"):
                continue
            present = infos.get(f"_{key}")
            if present is not None and not present[index]:
                continue
            if key not in merged:
                dtype = getattr(values, "dtype", np.dtype(object))
                merged[key] = np.zeros(n, dtype=dtype if dtype.kind in "biuf" else object)
                merged[f"_{key}"] = np.zeros(n, dtype=np.bool_)
            merged[key][index] = values[index]
            merged[f"_{key}"][index] = True
    return observations, merged
