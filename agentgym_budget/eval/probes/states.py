"""Probe states: shared states taken from reference trajectories, snapshotted once, and agents primed on them.

:func:`walk` plays a reference trajectory (:class:`~agentgym_budget.eval.probes.references.Trajectory`:
the expert's, or an episode an agent played) once on an env stack wrapped in
:class:`~agentgym_budget.wrappers.StateSnapshot`, snapshotting each decision state once as it passes
(depth ``d``: after ``d`` reference actions, the episode still running; a native snapshot costs about a
millisecond) and keeping the chosen ones; every later use of a state restores its snapshot into a pooled
stack (a fork: nothing is replayed).

A :class:`ProbePoint` keeps, besides the snapshot, the episode's first observation and every
earlier turn, so an agent asked to act there is *primed* (:func:`prime_agent`): it is reset at the
start of the episode and told each earlier turn through its optional ``observe`` member
(:func:`~agentgym_budget.agents.base.observe_turn`), as if it had played the reference prefix. Agents
with memory (chat history, a plan made at reset) thus see the state in context; memoryless agents
lose nothing.

Example:
    >>> from agentgym_budget.eval.probes.references import expert_trajectories
    >>> from agentgym_budget.runner.rollout import EnvRef
    >>> ref = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")
    >>> env = ref.make({"expert_plan", "expert_action"}, snapshots=True, max_turns=50)
    >>> trajectory = expert_trajectories(ref.task_ids()[:1], seed=0)[0]
    >>> points = walk(env, trajectory, lambda length: [0, length - 1])
    >>> [(p.depth, p.plan[0], len(p.history)) for p in points]
    [(0, 'go west', 0), (2, 'take coin', 2)]
    >>> env.restore(points[1].snapshot)
    >>> env.step("take coin")[4]["won"]
    True
    >>> env.close()
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from agentgym_budget.agents.base import observe_turn
from agentgym_budget.eval.probes.references import Trajectory
from agentgym_budget.runner.rollout import agent_view
from agentgym_budget.snapshots.state import EnvState

__all__ = ["walk"]


def plan_of(info: Mapping[str, Any]) -> list[str]:
    """The expert's remaining plan in ``info`` (``[]`` when it has none).

    Example:
        >>> plan_of({"expert_plan": ["go east", "take coin"]}), plan_of({})
        (['go east', 'take coin'], [])
    """
    return list(info.get("expert_plan") or ())


@dataclass(frozen=True)
class HistoryTurn:
    """One earlier turn: what was seen, and the action taken from there."""

    observation: str
    info: Mapping[str, Any]
    action: str


@dataclass(frozen=True)
class ProbePoint:
    """A decision state on a reference trajectory, snapshotted once.

    Attributes:
        trajectory: Where it comes from.
        depth: Reference actions taken before it.
        snapshot: The state of the whole stack (restore it into any stack made like the walked one).
        observation: The observation at the state.
        info: The ``info`` at the state (with the expert's plan).
        start: ``(observation, info)`` after the reset of the episode.
        history: The ``depth`` earlier turns.
        budget: The episode budget of the walk.
        length: Decision states on the whole trajectory.
    """

    trajectory: Trajectory
    depth: int
    snapshot: EnvState
    observation: str
    info: Mapping[str, Any]
    start: tuple[str, Mapping[str, Any]]
    history: tuple[HistoryTurn, ...]
    budget: int
    length: int

    @property
    def state_id(self) -> str:
        """See :meth:`Trajectory.state_id`."""
        return self.trajectory.state_id(self.depth)

    @property
    def plan(self) -> list[str]:
        """The expert's plan from this state."""
        return plan_of(self.info)

    @property
    def progress(self) -> float:
        """``progress`` at this state."""
        return float(self.info.get("progress", 0.0))

    def record_fields(self) -> dict[str, Any]:
        """The fields naming this state in the probe logs (task, source, state id, depth, budget, plan length)."""
        return {
            "task_id": self.trajectory.task_id,
            "source": self.trajectory.source,
            "state_id": self.state_id,
            "depth": self.depth,
            "length": self.length,
            "budget": self.budget,
            "turns_left": self.budget - self.depth,
            "plan_length": len(self.plan),
        }


def walk(
    env: gym.Env,
    trajectory: Trajectory,
    select: Callable[[int], Sequence[int]],
    *,
    budget: int | None = None,
) -> list[ProbePoint]:
    """Play ``trajectory`` once on ``env`` and return its decision states at the depths ``select(length)`` picks.

    Args:
        env: A stack made with ``snapshots=True`` whose ``info`` has ``expert_plan`` (and ``expert_action``
            for the expert's trajectories).
        trajectory: The reference.
        select: Called with the number of decision states; returns the depths wanted.
        budget: Episode budget of the walk (default: the logged budget, else a cap that never binds).

    A decision state is one where the episode is running, the reference has a next action and the
    expert has a plan.
    """
    actions = trajectory.actions
    cap = budget or trajectory.budget or (10 * len(actions) + 10 if actions is not None else 1000)
    observation, info = env.reset(seed=trajectory.seed, options={"task": trajectory.task_id, "max_turns": cap})
    start = (observation, dict(info))
    states: list[tuple[str, dict[str, Any], EnvState]] = []
    history: list[HistoryTurn] = []
    while not (info.get("won") or info.get("lost") or info.get("turns_left") == 0):
        depth = len(history)
        if actions is None:
            plan = plan_of(info)
            action = info.get("expert_action") or (plan[0] if plan else None)
        else:
            action = actions[depth] if depth < len(actions) else None
        if action is None or not plan_of(info):
            break
        states.append((observation, dict(info), env.snapshot()))
        next_observation, _, terminated, truncated, next_info = env.step(action)
        history.append(HistoryTurn(observation, dict(info), action))
        observation, info = next_observation, next_info
        if terminated or truncated:
            break
    chosen = sorted({d for d in select(len(states)) if 0 <= d < len(states)})
    return [
        ProbePoint(trajectory, d, states[d][2], states[d][0], states[d][1], start, tuple(history[:d]), cap, len(states))
        for d in chosen
    ]


async def prime_agent(
    agent: Any,
    start: tuple[str, Mapping[str, Any]],
    history: Sequence[HistoryTurn],
    *,
    seed: int,
    budget: int | None,
    show_budget: bool,
    hidden: Iterable[str] = (),
) -> None:
    """Reset ``agent`` at the episode's ``start`` and tell it every turn of ``history`` (see the module docstring).

    Args:
        agent: A sync or async agent.
        start: ``(observation, info)`` after the reset.
        history: Earlier turns, oldest first.
        seed: The agent's episode seed.
        budget: The episode budget (given to the agent only when ``show_budget``).
        show_budget: Whether the agent may see its budget.
        hidden: ``info`` keys the agent must not see.

    Example:
        >>> import asyncio
        >>> from agentgym_budget.agents import NoisyExpertNoRecover
        >>> agent = NoisyExpertNoRecover(eps=0.0)
        >>> start = ("Hall.", {"expert_plan": ["go east", "take coin"], "goal": "coin"})
        >>> asyncio.run(prime_agent(agent, start, [HistoryTurn("Hall.", {}, "go east")], seed=0, budget=None,
        ...                         show_budget=False))
        >>> agent.act("Room.", {"admissible_actions": ["take coin", "go west"]})
        'take coin'
    """
    hidden = frozenset(hidden)
    observation, info = start
    result = agent.reset(
        info.get("goal", ""),
        observation,
        agent_view(info, show_budget, hidden),
        seed=seed,
        budget=budget if show_budget else None,
    )
    if hasattr(result, "__await__"):
        await result
    for turn in history:
        await observe_turn(agent, turn.observation, agent_view(turn.info, show_budget, hidden), turn.action)
