"""Probe states: shared states taken from reference trajectories, snapshotted once, and agents primed on them.

A *reference trajectory* (:class:`Trajectory`) is either the family's expert playing a task from a
seeded reset (its ``expert_action`` every turn), or an episode an agent played, read from an
``episodes.jsonl`` log (its ``task_id``, ``seed`` and ``actions``; the logs of ``passkt`` and of
the ``recovery`` command's natural episodes qualify). :func:`walk` plays the trajectory once on an
env stack wrapped in :class:`~agentgym_budget.wrappers.StateSnapshot`, snapshotting each decision
state once as it passes (depth ``d``: after ``d`` reference actions, the episode still running; a
native snapshot costs about a millisecond) and keeping the chosen ones; every later use of a state
restores its snapshot into a pooled stack (a fork: nothing is replayed).

A :class:`ProbePoint` keeps, besides the snapshot, the episode's first observation and every
earlier turn, so an agent asked to act there is *primed* (:func:`prime_agent`): it is reset at the
start of the episode and told each earlier turn through its optional ``observe`` member
(:func:`~agentgym_budget.agents.base.observe_turn`), as if it had played the reference prefix. Agents
with memory (chat history, a plan made at reset) thus see the state in context; memoryless agents
lose nothing.

Which depths: :func:`choose_depths` takes the requested depths that the trajectory reaches, or else
``count`` depths drawn uniformly without replacement (a seeded permutation, so asking for more keeps
the earlier ones).

Example:
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

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_budget.agents.base import observe_turn
from agentgym_budget.errors import DataError
from agentgym_budget.runner.env_args import default_split
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.runner.records import reference_problem
from agentgym_budget.runner.rollout import agent_view
from agentgym_budget.runner.seeds import episode_seed
from agentgym_budget.runner.store import read_jsonl
from agentgym_budget.state import EnvState

__all__ = [
    "HistoryTurn",
    "ProbePoint",
    "Trajectory",
    "choose_depths",
    "expert_trajectories",
    "logged_trajectories",
    "portable_agent",
    "prime_agent",
    "walk",
]

EXPERT_SOURCE = "expert"


def plan_of(info: Mapping[str, Any]) -> list[str]:
    """The expert's remaining plan in ``info`` (``[]`` when it has none).

    Example:
        >>> plan_of({"expert_plan": ["go east", "take coin"]}), plan_of({})
        (['go east', 'take coin'], [])
    """
    return list(info.get("expert_plan") or ())


@dataclass(frozen=True)
class Trajectory:
    """A reference trajectory to take probe states from.

    Attributes:
        task_id: The task.
        seed: Seed of the env reset.
        source: ``"expert"``, or ``"AGENT#sSAMPLE"`` for a logged episode.
        actions: The logged actions, or ``None`` for the expert's.
        budget: The logged episode's turn budget (``None`` for the expert).
    """

    task_id: str
    seed: int
    source: str = EXPERT_SOURCE
    actions: tuple[str, ...] | None = None
    budget: int | None = None

    def state_id(self, depth: int) -> str:
        """Identity of the state at ``depth`` on this trajectory (stable across runs with the same settings)."""
        return f"{self.task_id}|{self.source}|d{depth}"


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


def expert_trajectories(task_ids: Iterable[str], seed: int) -> list[Trajectory]:
    """The expert's trajectory on each task, reset with :func:`~agentgym_budget.runner.seeds.episode_seed` ``(seed, task, 0)``."""
    return [Trajectory(task, episode_seed(seed, task, 0)) for task in task_ids]


def logged_episodes(path: str | Path, env: EnvRef, agent: str | None = None) -> list[dict[str, Any]]:
    """The logged episodes of ``env`` in the JSONL log ``path`` (only ``agent``'s if given).

    Only episodes played from a reset are used (``passkt`` records, and the ``natural`` ones of a
    recovery run), with their actions. For each (agent, task, sample) the episode with the largest
    budget is kept (with a hidden budget, the shorter ones are its prefixes). They are ordered by
    sample, then task, then agent, so the first ones cover every task once before any task twice.

    Records without a ``split`` (logs of older versions) are read as of the env's default split.

    Raises:
        DataError: The file is missing; an episode line is not a usable reference (a missing or
            malformed task id, seed, budget, sample or actions: the message names the line); or the
            log holds no episode with actions of this env (and agent).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"No episode log at {path}; pass the episodes.jsonl of a passkt or recovery run.")
    kwargs = dict(env.kwargs)
    best: dict[tuple[str, str, int], dict[str, Any]] = {}
    for record in read_jsonl(path, check=_reference_problem):
        if record.get("kind", "natural") != "natural":
            continue
        if record.get("env_id") != env.env_id or (record.get("env_kwargs") or {}) != kwargs:
            continue
        split = record.get("split") or default_split(env.env_id)
        if split != env.split or (agent is not None and record.get("agent") != agent):
            continue
        slot = (str(record.get("agent")), str(record["task_id"]), int(record.get("sample", 0)))
        if slot not in best or int(record.get("budget", 0)) > int(best[slot].get("budget", 0)):
            best[slot] = record
    if not best:
        who = f" by agent {agent!r}" if agent else ""
        raise DataError(f"{path} holds no logged episode{who} with actions on {env.label}.")
    return [best[slot] for slot in sorted(best, key=lambda slot: (slot[2], slot[1], slot[0]))]


def _reference_problem(record: Mapping[str, Any]) -> str | None:
    return reference_problem(record) if record.get("kind", "natural") == "natural" else None


def portable_agent(agent: str, log: str | Path) -> str:
    """``agent`` with a model given by an absolute path made relative to the directory of the ``log`` it played in.

    A probe state's id and its seeds name the agent whose episode it comes from; with the path made
    relative, a run directory moved or copied elsewhere (the study's ``hf:OUT/fixed/final`` agents)
    probes the same states with the same samples.

    Example:
        >>> portable_agent("hf:/runs/study/sft/final", "/runs/study/passkt/episodes.jsonl")
        'hf:../sft/final'
        >>> portable_agent("noisy-expert-recover:eps=0.3", "/runs/p/episodes.jsonl")
        'noisy-expert-recover:eps=0.3'
    """
    kind, separator, rest = agent.partition(":")
    if not separator or not rest.startswith("/"):
        return agent
    location, colon, options = rest.partition(":")
    relative = os.path.relpath(location, Path(log).parent)
    return f"{kind}:{relative}{colon}{options}"


def logged_trajectories(path: str | Path, env: EnvRef, agent: str | None = None) -> list[Trajectory]:
    """The episodes of :func:`logged_episodes` as reference trajectories (source ``AGENT#sSAMPLE``, the agent
    made :func:`portable_agent`)."""
    return [
        Trajectory(
            str(record["task_id"]),
            int(record["seed"]),
            f"{portable_agent(str(record.get('agent')), path)}#s{int(record.get('sample', 0))}",
            tuple(record["actions"]),
            int(record["budget"]),
        )
        for record in logged_episodes(path, env, agent)
    ]


def trajectories_needed(states: int, per_trajectory: int) -> int:
    """How many trajectories give ``states`` probe states at ``per_trajectory`` states each.

    Example:
        >>> trajectories_needed(20, 1), trajectories_needed(20, 3)
        (20, 7)
    """
    return max(1, math.ceil(states / max(1, per_trajectory)))


def choose_depths(length: int, count: int, depths: Sequence[int] | None, *, seed: int, key: str) -> list[int]:
    """Depths to probe on a trajectory with ``length`` decision states (see the module docstring).

    Example:
        >>> len(choose_depths(10, 3, None, seed=0, key="t")), choose_depths(2, 5, None, seed=0, key="t")
        (3, [0, 1])
        >>> set(choose_depths(10, 3, None, seed=0, key="t")) <= set(choose_depths(10, 4, None, seed=0, key="t"))
        True
        >>> choose_depths(4, 1, [0, 2, 6], seed=0, key="t")
        [0, 2]
    """
    if depths:
        return sorted({d for d in depths if 0 <= d < length})
    order = np.random.default_rng(episode_seed(seed, key, 0)).permutation(length)
    return sorted(int(d) for d in order[: max(0, count)])


class ReferenceStates:
    """Mixin of run configurations that take their states from reference trajectories.

    The configuration provides ``states``, ``depths``, ``per_trajectory``, ``reference``,
    ``reference_agent`` and ``seed`` (see :class:`~agentgym_budget.eval.probes.plan.ProbeConfig`).
    """

    states: int
    depths: tuple[int, ...] | None
    per_trajectory: int
    reference: str
    reference_agent: str | None
    seed: int

    @property
    def states_per_trajectory(self) -> int:
        """States taken from each trajectory (at most)."""
        return len(self.depths) if self.depths else self.per_trajectory

    def trajectories(self, env: EnvRef) -> list[Trajectory]:
        """The reference trajectories of ``env`` used by the run."""
        count = trajectories_needed(self.states, self.states_per_trajectory)
        if self.reference == EXPERT_SOURCE:
            return expert_trajectories(env.task_ids()[:count], self.seed)
        return logged_trajectories(self.reference, env, self.reference_agent)[:count]

    def chosen_depths(self, trajectory: Trajectory, length: int) -> list[int]:
        """The depths used on ``trajectory`` when it has ``length`` decision states."""
        key = f"{trajectory.task_id}|{trajectory.source}"
        return choose_depths(length, self.per_trajectory, self.depths, seed=self.seed, key=key)


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
