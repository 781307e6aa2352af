"""Group rollouts from one state: reset once, fork G copies (GRPO-style groups of one task).

GRPO-style trainers play G episodes of the same task and compare their returns. Resetting G envs
with the same seed costs G resets (for TextWorld and ALFWorld a reset loads a game), and only
deterministic envs give G equal starts. :func:`group_reset` resets **once** and forks the stack G
times through :class:`~agentgym_budget.wrappers.StateSnapshot` (each fork shares the loaded engine
and costs about one restore), so every member starts from the same state, with the same task, the
same budget (a :class:`~agentgym_budget.wrappers.BudgetMix` draw is made once) and the same first
observation, which is returned once for the whole group.

The members are independent: stepping one never changes another or ``env``, which stays at the
start state (call :func:`group_reset` again, or fork it again, for another group). Close the members
when done (``group.close()``).

Where groups from one reset are available:

* **Vector env**: :class:`~agentgym_budget.vector.group_vector.GroupVectorEnv` is a Gymnasium vector env of
  ``groups`` groups of ``group_size`` members; each start of a group (at ``reset`` and at autoreset)
  is one :func:`group_reset`, and every ``info`` names the start (``group_id``) so a GRPO trainer
  can collect the G returns of one start.
* **Ray rollouts**: :mod:`agentgym_budget.integrations.ray_rollouts` already plays G episodes from
  one state without G resets: reset one stack (``RolloutConfig.make()``), take a
  ``ForkPoint.take(env, observation, info)`` there (the snapshot, observation and ``info``), and
  ``play_forks(config, point, [Continuation(...)] * G)`` puts the point in Ray's object store once;
  each actor restores it (no reset, no replay) and plays one continuation. A ``ForkPoint`` taken
  right after ``reset`` is a group start; one taken later continues G episodes from mid-episode.
* **TRL, SkyRL, verl, verifiers**: their APIs give a plug-in one rollout at a time, so no plug-in
  can share one reset across a group. Each rollout builds or takes its own env and resets it from
  its dataset row: TRL calls ``reset(**row)`` on one environment instance per concurrent rollout;
  SkyRL builds one env per trajectory and calls ``init``; verl runs one agent loop per row;
  verifiers (through OpenEnv) opens one server session per rollout. None of them hands the plug-in
  the G rollouts of a prompt together before they start. The group is formed by repeating the row
  (TRL's ``num_generations``, verl's ``rollout.n``, SkyRL's ``n_samples_per_prompt``, verifiers'
  rollouts per example), and a repeated row carries the same ``task`` and ``seed``, so every
  member gets the same task, the same first observation and the same BudgetMix draw (drawn
  reproducibly from the row's seed): the start is the same, but it costs G resets (SkyRL and verl
  take env stacks from a pool and TRL reuses its instances, so a reset does not rebuild the env).

Example:
    >>> import gymnasium as gym
    >>> import agentgym_budget
    >>> from agentgym_budget.wrappers import BudgetMix, TurnBudget
    >>> base = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=5)
    >>> env = BudgetMix(TurnBudget(base, max_turns=10), budgets=(3, 8))
    >>> group = group_reset(env, 3, seed=4)
    >>> len(group.envs), {member.get_wrapper_attr("turns_left") for member in group.envs} == {group.info["max_turns"]}
    (3, True)
    >>> results = [member.step(command)[0] for member, command in zip(group.envs, ["go west", "look", "go west"])]
    >>> results[0] == results[2] != results[1]
    True
    >>> group.close()
"""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.wrappers import StateSnapshot

__all__ = ["Group", "group_reset"]


@dataclass
class Group:
    """G envs at one start state, with that state's observation and ``info`` (shared by all members).

    Attributes:
        envs: The members, each a :class:`~agentgym_budget.wrappers.StateSnapshot` stack.
        observation: The first observation of every member.
        info: The reset ``info`` of every member (a copy is made per :meth:`infos` call).
        state: The start state (restore it into any member to play the group's start again).
    """

    envs: list[gym.Env]
    observation: Any
    info: dict[str, Any]
    state: EnvState
    _closed: bool = field(default=False, repr=False)

    def infos(self) -> list[dict[str, Any]]:
        """One independent copy of the reset ``info`` per member."""
        return [copy.deepcopy(self.info) for _ in self.envs]

    def close(self) -> None:
        """Close every member (``env`` given to :func:`group_reset` stays open)."""
        if not self._closed:
            for member in self.envs:
                member.close()
            self._closed = True


def group_reset(
    env: gym.Env, group_size: int, *, seed: int | None = None, options: dict[str, Any] | None = None
) -> Group:
    """Reset ``env`` once (``seed``, ``options``) and fork it into ``group_size`` independent members.

    ``env`` is wrapped in a :class:`~agentgym_budget.wrappers.StateSnapshot` unless its outermost
    layer is one already (put your wrappers inside it: the members copy the whole stack).

    Raises:
        InvalidOptionError: ``group_size`` is not a positive integer.
        SnapshotUnsupportedError: The stack cannot be snapshotted.
    """
    if isinstance(group_size, bool) or not isinstance(group_size, numbers.Integral) or group_size < 1:
        raise InvalidOptionError(f"group_reset: group_size must be a positive integer, got {group_size!r}.")
    stack = env if isinstance(env, StateSnapshot) else StateSnapshot(env)
    observation, info = stack.reset(seed=seed, options=options)
    members = stack.fork(int(group_size))
    return Group(envs=list(members), observation=observation, info=dict(info), state=stack.snapshot())
