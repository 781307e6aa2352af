"""Rollouts in Ray actors: one state, snapshotted once on the driver, continued in several actors.

What travels is a configuration plus a snapshot, never an env object:

* a :class:`RolloutConfig` (registered id, constructor arguments, split, ``info`` keys, and the
  wrapper settings: ``TurnBudget`` budget and visibility, optional ``BudgetMix``) builds the same
  stack anywhere (:meth:`RolloutConfig.make`); each :class:`RolloutWorker` actor builds its stack
  once from it;
* a :class:`ForkPoint` (the stack's :class:`~agentgym_budget.snapshots.state.EnvState` plus the observation and
  ``info`` the agent sees there) is put in the object store once (``ray.put``); every actor that
  plays from it receives the same object, its buffers read-only views of the store (zero-copy), and
  restores it: nothing is replayed, no engine is shipped;
* a :class:`Continuation` says what to play from there: a registered agent (by name, with a seed) or
  a fixed list of commands; the actor returns a :class:`Rollout` (actions, observations, rewards,
  how it ended).

:func:`play_from` is the same continuation in this process; a fork of the state played here
(:meth:`~agentgym_budget.wrappers.StateSnapshot.fork`) and in an actor give the same rollout.
Agents are reset at the fork point with its observation and ``info`` (memoryless agents such as
the experts and ``random`` lose nothing; an agent with memory does not see the turns before it).

Example (in-process; :func:`play_forks` runs the same continuations in Ray actors):
    >>> config = RolloutConfig("TextWorld-CoinCollector-v0", env_kwargs="level=3", max_turns=8, info_keys=("expert_action",))
    >>> env = config.make()
    >>> observation, info = env.reset(seed=0, options={"task": config.env.task_ids()[0]})
    >>> observation, _, _, _, info = env.step("look")
    >>> point = ForkPoint.take(env, observation, info)
    >>> expert = play_from(env, point, Continuation(agent="expert"))
    >>> expert.won, expert.start_turn, expert.turn, expert.actions
    (True, 1, 4, ['go west', 'go north', 'take coin'])
    >>> again = play_from(env, point, Continuation(actions=("go west", "look")))
    >>> again.won, again.turn, again.truncated
    (False, 3, False)
    >>> env.close()
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.base import close_agent, close_shared_resources, episode_stats, required_info_keys
from agentgym_budget.core.info_keys import STANDARD_INFO_KEYS
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.runner.ray_cluster import ray_connection
from agentgym_budget.runner.rollout import agent_view
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.wrappers import BudgetMix, StateSnapshot, TurnBudget
from agentgym_budget.wrappers.turn_budget import validate_budget

__all__ = [
    "Continuation",
    "ForkPoint",
    "Rollout",
    "RolloutConfig",
    "RolloutWorker",
    "play_forks",
    "play_from",
    "rollout_actors",
]


@dataclass(frozen=True)
class RolloutConfig:
    """An env stack as data: ``StateSnapshot([BudgetMix](TurnBudget(make(env_id, **env_kwargs))))``.

    Args:
        env: Registered id (namespace optional), or an :class:`~agentgym_budget.runner.env_ref.EnvRef`.
        env_kwargs: Constructor arguments (``"level=3"`` or a mapping), when ``env`` is an id.
        split: Task split, when ``env`` is an id (``None``: the env's default).
        max_turns: ``TurnBudget``'s budget.
        show_budget: Show the budget in observations and to agents.
        info_keys: Opt-in ``info`` keys (agents that need some say so, e.g. ``expert_action``).
        budgets: ``BudgetMix`` budgets drawn per episode (``None``: no ``BudgetMix``).
        budget_weights: Their weights.

    Raises:
        UnknownEnvIdError: ``env`` is not registered.
        InvalidOptionError: Bad constructor arguments or weights.
        InvalidBudgetError: A budget that is not a positive integer.

    Example:
        >>> RolloutConfig("TextWorld-CoinCollector-v0", env_kwargs={"level": 3}, budgets=(5, 10)).env.label
        'TextWorld-CoinCollector-v0(level=3)'
        >>> RolloutConfig("TextWorld-CoinCollector-v0", max_turns=0)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidBudgetError: Invalid turn budget 0 (int) as RolloutConfig.max_turns: expected a positive integer number of turns, e.g. 20.
    """

    env: EnvRef | str
    env_kwargs: str | Mapping[str, Any] | None = None
    split: str | None = None
    max_turns: int = 50
    show_budget: bool = False
    info_keys: tuple[str, ...] = ()
    budgets: tuple[int, ...] | None = None
    budget_weights: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.env, str):
            object.__setattr__(self, "env", EnvRef.parse(self.env, self.env_kwargs, self.split))
        elif self.env_kwargs is not None or self.split is not None:
            raise InvalidOptionError("Give env_kwargs and split inside the EnvRef, or give env as an id.")
        object.__setattr__(self, "env_kwargs", None)
        object.__setattr__(self, "split", None)
        object.__setattr__(self, "max_turns", validate_budget(self.max_turns, "as RolloutConfig.max_turns"))
        object.__setattr__(self, "info_keys", tuple(sorted(set(self.info_keys))))
        if self.budgets is not None:
            budgets = tuple(validate_budget(b, "in RolloutConfig.budgets") for b in self.budgets)
            object.__setattr__(self, "budgets", budgets)
            if self.budget_weights is not None and len(self.budget_weights) != len(budgets):
                raise InvalidOptionError(
                    f"RolloutConfig: {len(self.budget_weights)} budget_weights for {len(budgets)} budgets; "
                    "give one weight per budget."
                )
        elif self.budget_weights is not None:
            raise InvalidOptionError("RolloutConfig: budget_weights without budgets; give budgets=(...) too.")

    @property
    def ref(self) -> EnvRef:
        """The environment reference."""
        return self.env  # type: ignore[return-value]

    def make(self) -> StateSnapshot:
        """Build the stack (the same on the driver and in every actor)."""
        env: gym.Env = TurnBudget(self.ref.make_base(self.info_keys), self.max_turns, show_budget=self.show_budget)
        if self.budgets is not None:
            env = BudgetMix(env, list(self.budgets), list(self.budget_weights) if self.budget_weights else None)
        return StateSnapshot(env)


@dataclass(frozen=True)
class ForkPoint:
    """A state to continue from: the stack's snapshot and what the agent sees there.

    Attributes:
        snapshot: The state of the whole stack.
        observation: The observation at that state (what the last ``reset``/``step`` returned).
        info: The ``info`` at that state.
    """

    snapshot: EnvState
    observation: str
    info: Mapping[str, Any]

    @classmethod
    def take(cls, env: StateSnapshot, observation: str, info: Mapping[str, Any]) -> ForkPoint:
        """Snapshot ``env`` (a :meth:`RolloutConfig.make` stack) where it stands, with its last observation and ``info``."""
        return cls(env.snapshot(), observation, dict(info))


@dataclass(frozen=True)
class Continuation:
    """What to play from a :class:`ForkPoint`: an agent, or a fixed list of commands.

    Args:
        agent: A registered agent (``parse_agent`` syntax, e.g. ``"noisy-expert-recover:eps=0.3"``).
        actions: Commands to play in order (the rollout stops early if the episode ends).
        seed: The agent's seed (same seed, same rollout).
        max_steps: Stop after this many turns even if the episode goes on (``None``: play to its end).

    Raises:
        InvalidOptionError: Neither or both of ``agent`` and ``actions``.

    Example:
        >>> Continuation(agent="random", actions=("look",))
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: A Continuation plays an agent or a list of actions, not both: give agent='random' or actions=('look',).
    """

    agent: str | None = None
    actions: tuple[str, ...] | None = None
    seed: int = 0
    max_steps: int | None = None

    def __post_init__(self) -> None:
        if (self.agent is None) == (self.actions is None):
            given = "both" if self.agent is not None else "neither"
            raise InvalidOptionError(
                f"A Continuation plays an agent or a list of actions, not {given}: give "
                f"agent={self.agent or 'expert'!r} or actions={tuple(self.actions or ('look',))!r}."
            )
        if self.actions is not None:
            object.__setattr__(self, "actions", tuple(self.actions))
        if self.agent is not None:
            object.__setattr__(self, "agent", parse_agent(self.agent).name)
        if self.max_steps is not None:
            object.__setattr__(self, "max_steps", validate_budget(self.max_steps, "as Continuation.max_steps"))


@dataclass
class Rollout:
    """What was played from a :class:`ForkPoint`.

    Attributes:
        actions: The commands played.
        observations: The observation after each of them.
        rewards: The reward of each.
        terminated: The task was won or lost.
        truncated: The budget ran out.
        won: The task was won.
        lost: The task was lost.
        start_turn: ``TurnBudget``'s turn at the fork point.
        turn: Its turn at the end.
        progress: The last ``progress``.
        agent_stats: The agent's ``stats()`` (``{}`` for a list of actions).
    """

    actions: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    won: bool = False
    lost: bool = False
    start_turn: int = 0
    turn: int = 0
    progress: float = 0.0
    agent_stats: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


async def _call(method: Any, *args: Any, **kwargs: Any) -> Any:
    result = method(*args, **kwargs)
    return await result if inspect.isawaitable(result) else result


async def _play(env: StateSnapshot, point: ForkPoint, continuation: Continuation) -> Rollout:
    show_budget = bool(env.get_wrapper_attr("show_budget"))
    info = dict(point.info)
    rollout = Rollout(start_turn=int(info.get("turn", 0)), turn=int(info.get("turn", 0)))
    rollout.progress = float(info.get("progress", 0.0))
    agent = None
    if continuation.agent is not None:
        agent = parse_agent(continuation.agent).build()
        base = env.unwrapped
        provided = set(STANDARD_INFO_KEYS) - set(getattr(base, "omitted_info_keys", ())) | set(
            getattr(base, "info_keys", ())
        )
        missing = required_info_keys(agent) - provided
        if missing:
            raise InvalidOptionError(
                f"Agent {continuation.agent!r} needs the info keys {sorted(missing)}, which the env was not made "
                f"with; add them to RolloutConfig(info_keys=...)."
            )
        budget = info.get("max_turns") if show_budget else None
        view = agent_view(info, show_budget)
        await _call(agent.reset, info.get("goal", ""), point.observation, view, seed=continuation.seed, budget=budget)
    env.restore(point.snapshot)
    observation, done = point.observation, bool(info.get("won") or info.get("lost") or info.get("turns_left") == 0)
    script = list(continuation.actions or ())
    try:
        while not done and (continuation.max_steps is None or len(rollout.actions) < continuation.max_steps):
            if agent is not None:
                action = await _call(agent.act, observation, agent_view(info, show_budget))
            elif script:
                action = script.pop(0)
            else:
                break
            observation, reward, terminated, truncated, info = env.step(action)
            rollout.actions.append(action)
            rollout.observations.append(observation)
            rollout.rewards.append(float(reward))
            rollout.terminated, rollout.truncated = bool(terminated), bool(truncated)
            done = bool(terminated or truncated)
        rollout.agent_stats = episode_stats(agent) if agent is not None else {}
    finally:
        if agent is not None:
            await close_agent(agent)
            await close_shared_resources()
    rollout.won, rollout.lost = bool(info.get("won")), bool(info.get("lost"))
    rollout.turn = int(info.get("turn", rollout.start_turn + len(rollout.actions)))
    rollout.progress = float(info.get("progress", 0.0))
    return rollout


def play_from(env: StateSnapshot, point: ForkPoint, continuation: Continuation) -> Rollout:
    """Restore ``point`` into ``env`` (a :meth:`RolloutConfig.make` stack) and play ``continuation`` from it.

    Raises:
        SnapshotMismatchError: ``point`` was taken on a stack of another configuration.
        InvalidOptionError: The agent needs ``info`` keys the env was not made with.
    """
    return asyncio.run(_play(env, point, continuation))


class RolloutWorker:
    """A Ray actor (wrapped by ``ray.remote`` in :func:`rollout_actors`) holding one stack built from a config."""

    def __init__(self, config: RolloutConfig) -> None:
        self.env = config.make()

    def play(self, point: ForkPoint, continuation: Continuation) -> Rollout:
        """:func:`play_from` on this actor's stack."""
        return play_from(self.env, point, continuation)

    def close(self) -> None:
        """Close the stack."""
        self.env.close()


def rollout_actors(config: RolloutConfig, count: int, *, num_cpus: float = 1.0) -> list[Any]:
    """Start ``count`` :class:`RolloutWorker` actors (``num_cpus`` each) built from ``config``.

    Needs a Ray connection (``ray.init``, or :func:`~agentgym_budget.runner.ray_cluster.ray_connection`).
    """
    from agentgym_budget.runner.ray_cluster import import_ray

    ray = import_ray("Rollouts in Ray actors")
    validate_budget(count, "as the number of actors")
    actor_class = ray.remote(RolloutWorker).options(num_cpus=num_cpus)
    return [actor_class.remote(config) for _ in range(count)]


def play_forks(
    config: RolloutConfig,
    point: ForkPoint,
    continuations: Sequence[Continuation],
    *,
    actors: int | Sequence[Any] = 2,
    num_cpus: float = 1.0,
) -> list[Rollout]:
    """Play every continuation from ``point`` in Ray actors; ``point`` is put in the object store once.

    Args:
        config: The stack's configuration (the one ``point`` was taken on).
        point: The state to continue from.
        continuations: What to play, one rollout each (handed to the actors in turn).
        actors: How many :class:`RolloutWorker` actors to start for the call (killed at its end), or
            actors from :func:`rollout_actors` to use (left running).
        num_cpus: CPUs each started actor reserves.

    Returns:
        The rollouts, in the order of ``continuations``.

    Raises:
        MissingDependencyError: Ray is not installed.

    When this process is not connected to Ray, a local cluster is started for the call
    (:func:`~agentgym_budget.runner.ray_cluster.ray_connection`).
    """
    if not continuations:
        return []
    with ray_connection() as ray:
        started = rollout_actors(config, actors, num_cpus=num_cpus) if isinstance(actors, int) else []
        handles = started or list(actors)  # type: ignore[arg-type]
        try:
            shared = ray.put(point)
            refs = [handles[i % len(handles)].play.remote(shared, c) for i, c in enumerate(continuations)]
            return ray.get(refs)
        finally:
            for actor in started:
                ray.kill(actor)
