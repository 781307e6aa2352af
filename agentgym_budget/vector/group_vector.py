"""A Gymnasium vector env of groups: ``groups`` starts, each played by ``group_size`` members.

:class:`GroupVectorEnv` is the vector-env form of :func:`~agentgym_budget.vector.group.group_reset` for
GRPO-style training, and a :class:`~agentgym_budget.vector.batch.BatchVectorEnv` whose starts are forks
(batching, autoreset modes and per-env options are the base's, as for ``TextVectorEnv``): sub-envs come in groups of ``group_size`` members (group-major: sub-env ``i``
is member ``i % group_size`` of group ``i // group_size``), and every start of a group is **one**
real reset of that group's env, forked ``group_size`` times through
:class:`~agentgym_budget.wrappers.StateSnapshot`. The members of a start get the same task, the same
:class:`~agentgym_budget.wrappers.BudgetMix` draw and the same first observation; they then play
independently.

**Contract**

* ``reset(seed=s)`` resets group ``g`` with seed ``s + g`` (a list gives one seed per *group*;
  ``None`` leaves them unseeded); ``options`` go to every group's reset (a list of ``num_envs`` values
  gives each member its own, which must then be equal within a group). ``options["reset_mask"]``
  (Gymnasium's partial reset, a bool array of shape ``(num_envs,)``) must select whole groups.
* **Autoreset** (``autoreset_mode``, ``"next_step"`` by default, as Gymnasium's): a member whose
  episode ended moves to its group's **next start**, alone, without waiting for the others. The
  next start is drawn once, by one real reset (no seed, no options: the group's seeded stream goes
  on, ``BudgetMix`` draws anew, a ``max_turns`` reset option is not applied again) when the first
  member of the group needs it, and the other members get forks of that same state when their own
  episodes end. So every member of a group plays the same sequence of starts, each exactly once,
  and no step is wasted on waiting. ``"next_step"``: the step after the end returns the next
  start's observation (action ignored, reward 0, flags ``False``); ``"same_step"``: the ending step
  returns it, with ``final_obs`` and ``final_info``; ``"disabled"``: reset whole groups yourself
  (``reset_mask``), stepping an ended member raises ``EpisodeOverError``.
* **Grouping for GRPO**: every ``info`` carries ``group_id`` (one number per start, counted from 0
  across the vector env in the order starts are drawn: the G episodes with equal ``group_id`` form
  one GRPO group) and ``group_member`` (the member's index in its group). A trainer that plays
  synchronous batches (step until every sub-env has ended once, then ``reset()``) keeps the
  episodes of the ``group_id`` set at reset and ignores what a member plays after its end: that
  member already plays the group's next start, drawn by one real reset that the next ``reset()``
  discards (``autoreset_mode="disabled"`` avoids it, but then every member must end before the
  batch's last step, since an ended member cannot be stepped).
* Memory: the forks of a start wait until their members reach it, so a member that runs ahead
  of its group (short episodes) keeps up to ``group_size - 1`` waiting forks per start it is
  ahead by; each is an env stack sharing the group's loaded engine.
* Cost: ``resets`` counts the real resets made (one per start per group); each member of a start
  is a fork (about one restore, sharing the loaded engine). With ``StateSnapshot(mode="replay")``
  a fork replays the episode from its seed, so the saving needs native snapshots (every task
  family's env has them).
* ``close()`` closes every member, every fork not yet handed out and every group's env.

Example:
    >>> import gymnasium as gym
    >>> import agentgym_budget
    >>> from agentgym_budget.wrappers import TurnBudget
    >>> make = lambda: TurnBudget(gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=5), max_turns=1)
    >>> envs = GroupVectorEnv(make, group_size=3, groups=2)
    >>> observations, infos = envs.reset(seed=0)
    >>> envs.num_envs, envs.resets, observations[0] == observations[1] == observations[2]
    (6, 2, True)
    >>> infos["group_id"].tolist(), infos["group_member"].tolist()
    ([0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2])
    >>> _, _, _, truncated, _ = envs.step(("look",) * 6)  # a budget of 1 turn: every episode ends
    >>> truncated.tolist()
    [True, True, True, True, True, True]
    >>> observations, rewards, _, _, infos = envs.step(("look",) * 6)  # next start, one reset per group
    >>> envs.resets, infos["group_id"].tolist(), rewards.tolist()
    (4, [2, 2, 2, 3, 3, 3], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    >>> envs.close()
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import gymnasium as gym
from gymnasium.vector import AutoresetMode

from agentgym_budget.errors import EpisodeOverError, InvalidOptionError
from agentgym_budget.snapshots.stack import clone
from agentgym_budget.vector.batch import BatchVectorEnv, autoreset_mode_of, positive
from agentgym_budget.vector.group import Group, group_reset
from agentgym_budget.wrappers import StateSnapshot

__all__ = ["GroupVectorEnv"]


class _Start:
    """One start of a group: its id and the forks not yet handed to a member."""

    def __init__(self, group_id: int, group: Group) -> None:
        self.group_id = group_id
        self.group = group
        self.waiting: list[gym.Env | None] = list(group.envs)

    def take(self, member: int) -> tuple[gym.Env, Any, dict[str, Any]]:
        env = self.waiting[member]
        assert env is not None, "a member takes each start once"
        self.waiting[member] = None
        return env, self.group.observation, deepcopy(self.group.info)

    def done(self) -> bool:
        return all(env is None for env in self.waiting)

    def close(self) -> None:
        for env in self.waiting:
            if env is not None:
                env.close()
        self.waiting = [None] * len(self.waiting)


class GroupVectorEnv(BatchVectorEnv):
    """``groups`` groups of ``group_size`` members; each start of a group is one reset, forked.

    See the module docstring for the reset, autoreset and grouping contract.

    Args:
        env: A function building the env stack (called once per group), or an env (group 0 uses
            it; the other groups use clones of it: same wrappers and arguments, fresh base env).
            Each is wrapped in a :class:`~agentgym_budget.wrappers.StateSnapshot` unless its
            outermost layer is one.
        group_size: Members per group (``G``).
        groups: Number of groups (``M``); ``num_envs`` is ``G * M``.
        autoreset_mode: ``"next_step"`` (default), ``"same_step"`` or ``"disabled"``.

    Raises:
        InvalidOptionError: ``group_size`` or ``groups`` is not a positive integer, or an
            unknown ``autoreset_mode``.
        SnapshotUnsupportedError: The stack cannot be snapshotted or cloned.
    """

    def __init__(
        self,
        env: gym.Env | Callable[[], gym.Env],
        *,
        group_size: int,
        groups: int = 1,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
    ) -> None:
        self.group_size = positive(group_size, "group_size", "GroupVectorEnv")
        self.groups = positive(groups, "groups", "GroupVectorEnv")
        autoreset_mode_of(autoreset_mode, "GroupVectorEnv")  # refused before the stacks are built
        if isinstance(env, gym.Env):
            stacks = [env, *(clone(env) for _ in range(self.groups - 1))]
        elif callable(env):
            stacks = [env() for _ in range(self.groups)]
        else:
            raise InvalidOptionError(
                f"GroupVectorEnv: env must be a gymnasium.Env or a function returning one, got {type(env).__name__}."
            )
        self.bases = [stack if isinstance(stack, StateSnapshot) else StateSnapshot(stack) for stack in stacks]
        self._setup(self.group_size * self.groups, self.bases[0], autoreset_mode)
        self.resets = 0
        """Real resets made so far (one per start of a group)."""
        self.envs: list[gym.Env | None] = [None] * self.num_envs
        """The members' current env stacks (``None`` before the first reset)."""
        self._starts: list[dict[int, _Start]] = [{} for _ in range(self.groups)]
        self._order: list[list[int]] = [[] for _ in range(self.groups)]  # group ids of each group's starts
        self._episode = [-1] * self.num_envs  # position in its group's order of each member's start
        self._group_ids = [-1] * self.num_envs
        self._next_id = 0

    # ------------------------------------------------------------------ starts
    def _draw(self, group: int, seed: int | None, options: dict[str, Any] | None) -> None:
        start = _Start(self._next_id, group_reset(self.bases[group], self.group_size, seed=seed, options=options))
        self.resets += 1
        self._next_id += 1
        self._order[group].append(start.group_id)
        self._starts[group][len(self._order[group]) - 1] = start

    def _enter(self, index: int, episode: int) -> tuple[Any, dict[str, Any]]:
        """Move member ``index`` to start ``episode`` of its group (drawing it if no member has yet)."""
        group, member = divmod(index, self.group_size)
        if episode not in self._starts[group]:
            self._draw(group, None, None)
        start = self._starts[group][episode]
        env, observation, info = start.take(member)
        if start.done():
            del self._starts[group][episode]
        if self.envs[index] is not None:
            self.envs[index].close()
        self.envs[index], self._episode[index], self._group_ids[index] = env, episode, start.group_id
        return observation, self._tag(index, info)

    def _tag(self, index: int, info: dict[str, Any]) -> dict[str, Any]:
        return {**info, "group_id": self._group_ids[index], "group_member": index % self.group_size}

    # ------------------------------------------------------------------ the base's hooks
    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        """One seed per member: group ``g``'s seed (``seed + g``, or the ``g``-th of one seed per group)."""
        if seed is None:
            by_group = [None] * self.groups
        elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
            by_group = [int(seed) + group for group in range(self.groups)]
        elif isinstance(seed, Sequence) and not isinstance(seed, str) and len(seed) == self.groups:
            by_group = list(seed)
        else:
            raise InvalidOptionError(
                f"GroupVectorEnv.reset: seed must be None, an int (group g gets seed + g) or one seed per group "
                f"({self.groups} groups), got {seed!r}."
            )
        return [value for value in by_group for _ in range(self.group_size)]

    def _reset_selected(
        self, indices: list[int], seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> list[tuple[Any, dict[str, Any]]]:
        """One real reset per selected group (whole groups only), forked to its members."""
        groups = sorted({index // self.group_size for index in indices})
        if len(indices) != len(groups) * self.group_size:
            mask = [index in indices for index in range(self.num_envs)]
            raise InvalidOptionError(
                "GroupVectorEnv.reset: options['reset_mask'] must select whole groups (all "
                f"{self.group_size} members of a group, or none) and at least one group, got {mask}."
            )
        results = []
        for group in groups:
            first = group * self.group_size
            if any(options[first + member] != options[first] for member in range(self.group_size)):
                raise InvalidOptionError(
                    f"GroupVectorEnv.reset: the members of group {group} share one start; give them equal options, "
                    f"got {options[first : first + self.group_size]!r:.200}."
                )
        for group in groups:
            for start in self._starts[group].values():
                start.close()
            self._starts[group], self._order[group] = {}, []
            first = group * self.group_size
            self._draw(group, seeds[first], options[first] or None)
            for index in range(first, first + self.group_size):
                results.append(self._enter(index, 0))
        return results

    def _next_start(self, index: int) -> tuple[Any, dict[str, Any]]:
        return self._enter(index, self._episode[index] + 1)

    def _step_env(self, index: int, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, term, trunc, info = self.envs[index].step(action)
        return observation, reward, term, trunc, self._tag(index, info)

    def _disabled_error(self, ended: list[int]) -> EpisodeOverError:
        return EpisodeOverError(
            f"GroupVectorEnv.step: member {ended[0]}'s episode ended and autoreset_mode is 'disabled'; "
            "reset its group with options={'reset_mask': ...} first."
        )

    def close_extras(self, **kwargs: Any) -> None:
        """Close every member, every fork not handed out yet and every group's env."""
        for starts in self._starts:
            for start in starts.values():
                start.close()
            starts.clear()
        super().close_extras(**kwargs)
        self.envs = [None] * self.num_envs
        for base in self.bases:
            base.close()

    def __repr__(self) -> str:
        return f"GroupVectorEnv(group_size={self.group_size}, groups={self.groups})"
