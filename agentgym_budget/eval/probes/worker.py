"""The worker side of single-step probes: walk one reference trajectory, probe its states, emit one record per action.

:func:`probe_job` runs in a worker process (or in the calling process with one worker). It walks
the job's reference trajectory once (:func:`~agentgym_budget.eval.probes.states.walk`), and at each
chosen state asks every agent for ``m`` actions (a fresh agent per sample, primed with the reference
prefix, seeded with :func:`~agentgym_budget.runner.seeds.episode_seed` ``(seed, state_id, sample)``:
the same seeds for every agent), then judges each action with a
:class:`~agentgym_budget.eval.probes.judge.StateJudge` that restores the state's snapshot. The continuation
value is cached per distinct action (continuation seeds depend on the state and the action, not on
the probed agent), except for the ``self`` continuation where the probed agent plays on.

Each record holds the state (``task_id``, ``source``, ``state_id``, ``depth``, ``length`` = decision
states on the trajectory, ``budget``, ``turns_left``, ``plan_length``, ``progress``, ``admissible``,
``expert_action``), the sample (``agent``, ``sample``, ``seed``, ``action``) and its judgement
(``valid``, ``optimal``, ``error``, ``won_now``, ``lost_now``, ``progress_after``, ``progress_delta``,
``plan_length_after``, ``continuation``, ``rollouts``, ``wins``, ``value``) and, for agents that expose their
policy (``action_distribution()``, e.g. ``score:``), its exact expected judgement (``p_optimal``, ``p_error``).

Example:
    >>> from agentgym_budget.eval.probes.plan import ProbeConfig, plan_probe_jobs
    >>> from agentgym_budget.runner.rollout import EnvRef
    >>> config = ProbeConfig((EnvRef.parse("TextWorld-CoinCollector-v0", "level=3"),), ["expert"], states=1, samples=2)
    >>> records = []
    >>> probe_job(plan_probe_jobs(config)[0], records.append)
    >>> [(r["agent"], r["optimal"], r["value"]) for r in records]
    [('expert', True, 1.0), ('expert', True, 1.0)]
    >>> close_worker_resources()
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from agentgym_budget.agents.base import close_agent, close_shared_resources, required_info_keys
from agentgym_budget.eval.probes.discriminate import STATE_AGENT, STATE_SAMPLE, candidate_values, state_record
from agentgym_budget.eval.probes.judge import (
    JUDGE_INFO_KEYS,
    ActionOutcome,
    StateJudge,
    continue_from,
    hidden_keys_for,
)
from agentgym_budget.eval.probes.references import choose_depths
from agentgym_budget.eval.probes.states import ProbePoint, plan_of, prime_agent, walk
from agentgym_budget.registration import env_info
from agentgym_budget.runner.env_ref import EnvPool
from agentgym_budget.runner.pool import Emit
from agentgym_budget.runner.rollout import agent_view
from agentgym_budget.runner.seeds import episode_seed

__all__: list[str] = []

_POOL = EnvPool()
_CAP = 1000


def walk_budget(env: Any, trajectory: Any, budget: int | None, slack: int) -> int:
    """The episode budget of a probe trajectory: ``budget``, else the logged one, else the expert's length + ``slack``."""
    if budget is not None:
        return budget
    if trajectory.budget is not None:
        return int(trajectory.budget)
    _, info = env.reset(seed=trajectory.seed, options={"task": trajectory.task_id, "max_turns": _CAP})
    return max(1, len(plan_of(info)) + slack)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _probe_sample(job: Any, judge: StateJudge, point: ProbePoint, spec: Any, sample: int) -> dict[str, Any]:
    config = job.config
    seed = episode_seed(config.seed, point.state_id, sample)
    agent = spec.build()
    hidden = hidden_keys_for(agent)
    try:
        await prime_agent(
            agent,
            point.start,
            point.history,
            seed=seed,
            budget=point.budget,
            show_budget=config.show_budget,
            hidden=hidden,
        )
        action = await _maybe_await(agent.act(point.observation, agent_view(point.info, config.show_budget, hidden)))
        action = action if isinstance(action, str) else str(action)
        exact = exact_judgement(agent, judge)
        outcome = judge.outcome(action)
        wins = await _continuation_wins(config, judge, point, agent, action, outcome, seed)
    finally:
        await close_agent(agent)
    return _probe_record(job, point, spec.name, sample, seed, action, outcome, wins) | exact


def exact_judgement(agent: Any, judge: StateJudge) -> dict[str, Any]:
    """``p_optimal`` and ``p_error``: the probability mass the agent's last decision put on optimal actions and on
    errors, from its ``action_distribution()`` (``{}`` for an agent that does not expose one).

    Each action with mass is judged once per state (the judge caches outcomes), so the expected single-step
    accuracy is exact, free of the sampled action's Bernoulli noise.
    """
    read = getattr(agent, "action_distribution", None)
    distribution = read() if callable(read) else None
    if not distribution:
        return {}
    outcomes = {action: judge.outcome(action) for action, p in distribution.items() if p > 0}
    return {
        "p_optimal": round(sum(distribution[a] for a, o in outcomes.items() if o.optimal), 12),
        "p_error": round(sum(distribution[a] for a, o in outcomes.items() if o.error), 12),
    }


async def _continuation_wins(
    config: Any, judge: StateJudge, point: ProbePoint, agent: Any, action: str, outcome: ActionOutcome, seed: int
) -> list[bool]:
    """Whether the episode is won after ``action``: the agent plays on, or the continuation agent's rollouts do."""
    continuation = config.continuation_spec
    if continuation is not None:
        seeds = [episode_seed(config.seed, f"{point.state_id}|{action}", r) for r in range(config.rollouts)]
        return await judge.value(action, continuation, rollouts=config.rollouts, seeds=seeds)
    if outcome.ended:
        return [outcome.won]
    result = await continue_from(
        judge.env,
        outcome,
        agent,
        task_id=point.trajectory.task_id,
        seed=seed,
        budget=point.budget,
        show_budget=config.show_budget,
    )
    return [result.won]


def _probe_record(
    job: Any,
    point: ProbePoint,
    agent: str,
    sample: int,
    seed: int,
    action: str,
    outcome: ActionOutcome,
    wins: list[bool],
) -> dict[str, Any]:
    """The record of one probed action (see :mod:`agentgym_budget.eval.probes.summary` for the fields)."""
    config = job.config
    admissible = point.info.get("admissible_actions") or ()
    return {
        "kind": "probe",
        "agent": agent,
        **job.env.to_json(),
        "family": env_info(job.env.env_id).family,
        **point.record_fields(),
        "progress": point.progress,
        "admissible": len(admissible),
        "expert_action": point.plan[0],
        "sample": sample,
        "seed": seed,
        "action": action,
        "valid": outcome.valid,
        "optimal": outcome.optimal,
        "error": outcome.error,
        "won_now": outcome.won,
        "lost_now": outcome.lost,
        "progress_after": outcome.progress_after,
        "progress_delta": round(outcome.progress_delta, 9),
        "plan_length_after": outcome.plan_after,
        "continuation": config.continuation,
        "rollouts": len(wins),
        "wins": sum(wins),
        "value": sum(wins) / len(wins),
    }


async def _keep_state(job: Any, judge: StateJudge, point: ProbePoint, emit: Emit) -> bool:
    """Value every candidate action of ``point``; log the state once; whether its actions differ enough in value."""
    config = job.config
    values = await candidate_values(
        judge,
        point,
        config.continuation_spec,
        rollouts=config.rollouts,
        seed=config.seed,
        limit=config.max_candidates,
    )
    record = state_record(job.env.to_json(), point, config.continuation, values, config.min_value_gap)
    if (STATE_AGENT, point.state_id, STATE_SAMPLE) not in job.done:
        emit(record)
    return bool(record["discriminating"])


async def _probe_job(job: Any, emit: Emit) -> None:
    config = job.config
    keys = set(JUDGE_INFO_KEYS)
    for spec in (*config.specs, *([config.continuation_spec] if config.continuation_spec else [])):
        keys |= required_info_keys(spec.build())
    env = _POOL.acquire(job.env, keys, config.show_budget, snapshots=True)
    trajectory = job.trajectory
    try:
        budget = walk_budget(env, trajectory, config.budget, config.slack)

        def select(length: int) -> list[int]:
            return choose_depths(
                length,
                config.per_trajectory,
                config.depths,
                seed=config.seed,
                key=f"{trajectory.task_id}|{trajectory.source}",
            )

        points = walk(env, trajectory, select, budget=budget)
        for point in points:
            judge = StateJudge(env, point, show_budget=config.show_budget)
            if config.filters_states and not await _keep_state(job, judge, point, emit):
                continue
            for spec in config.specs:
                for sample in range(config.samples):
                    if (spec.name, point.state_id, sample) in job.done:
                        continue
                    emit(await _probe_sample(job, judge, point, spec, sample))
    finally:
        _POOL.release(env)
        await close_shared_resources()


def probe_job(job: Any, emit: Emit) -> None:
    """Probe the states of one :class:`~agentgym_budget.eval.probes.plan.ProbeJob`, emitting a record per action."""
    asyncio.run(_probe_job(job, emit))


def close_worker_resources() -> None:
    """Close the env stacks pooled in this process."""
    _POOL.close()
