"""Reference trajectories: where probe and recovery states come from, and which of their depths are used.

A *reference trajectory* (:class:`Trajectory`) is either the family's expert playing a task from a
seeded reset (:func:`expert_trajectories`: its ``expert_action`` every turn), or an episode an agent
played, read from an ``episodes.jsonl`` log (:func:`logged_trajectories`: its ``task_id``, ``seed`` and
``actions``; the logs of ``passkt`` and of the ``recovery`` command's natural episodes qualify).
:func:`~agentgym_budget.eval.probes.states.walk` plays one and snapshots the chosen depths.

Which depths: :func:`choose_depths` takes the requested depths that the trajectory reaches, or else
``count`` depths drawn uniformly without replacement (a seeded permutation, so asking for more keeps
the earlier ones). :class:`ReferenceStates` is the part of a run configuration that says which.

Example:
    >>> expert_trajectories(["task-a"], seed=0)[0].state_id(2)
    'task-a|expert|d2'
    >>> choose_depths(5, 2, [1, 7], seed=0, key="task-a|expert")
    [1]
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_budget.errors import DataError
from agentgym_budget.runner.env_args import default_split
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.runner.records import reference_problem
from agentgym_budget.runner.seeds import episode_seed
from agentgym_budget.runner.store import read_jsonl

__all__ = ["ReferenceStates"]

EXPERT_SOURCE = "expert"


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


def _portable_agent(agent: str, log: str | Path) -> str:
    """``agent`` with a model given by an absolute path made relative to the directory of the ``log`` it played in.

    A probe state's id and its seeds name the agent whose episode it comes from; with the path made
    relative, a run directory moved or copied elsewhere (the study's ``hf:OUT/fixed/final`` agents)
    probes the same states with the same samples.

    Example:
        >>> _portable_agent("hf:/runs/study/sft/final", "/runs/study/passkt/episodes.jsonl")
        'hf:../sft/final'
        >>> _portable_agent("noisy-expert-recover:eps=0.3", "/runs/p/episodes.jsonl")
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
    made :func:`_portable_agent`)."""
    return [
        Trajectory(
            str(record["task_id"]),
            int(record["seed"]),
            f"{_portable_agent(str(record.get('agent')), path)}#s{int(record.get('sample', 0))}",
            tuple(record["actions"]),
            int(record["budget"]),
        )
        for record in logged_episodes(path, env, agent)
    ]


def _trajectories_needed(states: int, per_trajectory: int) -> int:
    """How many trajectories give ``states`` probe states at ``per_trajectory`` states each.

    Example:
        >>> _trajectories_needed(20, 1), _trajectories_needed(20, 3)
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
        count = _trajectories_needed(self.states, self.states_per_trajectory)
        if self.reference == EXPERT_SOURCE:
            return expert_trajectories(env.task_ids()[:count], self.seed)
        return logged_trajectories(self.reference, env, self.reference_agent)[:count]

    def chosen_depths(self, trajectory: Trajectory, length: int) -> list[int]:
        """The depths used on ``trajectory`` when it has ``length`` decision states."""
        key = f"{trajectory.task_id}|{trajectory.source}"
        return choose_depths(length, self.per_trajectory, self.depths, seed=self.seed, key=key)
