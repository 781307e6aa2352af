"""The worker side of recovery runs: perturbed continuations, natural episodes, traces of logged episodes.

:func:`recovery_job` runs one job of :mod:`agentgym_budget.eval.recovery.plan` and emits one record per
episode:

``perturbed`` (:class:`~agentgym_budget.eval.recovery.plan.PerturbJob`)
    The reference trajectory is walked once and each chosen state ``s`` (depth ``t``) snapshotted.
    From ``s`` a sequence of ``max(ks)`` wrong actions is drawn once (seeded by the state: the same
    for every agent and sample; :meth:`~agentgym_budget.eval.probes.judge.StateJudge.wrong_action`), so the
    ``k``-action perturbation is the first ``k`` of them. For each ``k``, agent and sample, the state
    after the ``k`` forced actions is restored into the pooled stack (no replay), its budget set to
    ``t + k + R`` so that ``R`` turns are left, and the agent, primed with the reference prefix and
    the forced actions as turns it did not choose, plays on. With a hidden budget one episode at
    ``R = max(budgets)`` gives the outcome at every ``R`` (won by turn ``R``); with a shown budget
    there is one episode per ``R``. Fields: the state (``task_id``, ``source``, ``state_id``, ``depth``,
    ``length``, ``plan_length``, ``state_progress``), the perturbation (``k``, ``forced``, ``forced_errors``,
    ``plan_length_forced``, ``progress_forced``), the episode (``agent``, ``sample``, ``seed``, ``mode``,
    ``budget`` = ``R``, ``won``, ``lost``, ``turns``, ``success_turn``, ``actions``, ...).
``natural`` (:class:`~agentgym_budget.eval.recovery.plan.NaturalJob`)
    Episodes played from the seeded reset (seeds of :func:`~agentgym_budget.runner.seeds.episode_seed`,
    as in ``passkt``), traced while played (:class:`~agentgym_budget.eval.recovery.natural.TraceRecorder`):
    ``plan_lengths`` and ``progress_trace`` per state besides the usual episode fields.
``traced`` (:class:`~agentgym_budget.eval.recovery.plan.TraceJob`)
    Logged episodes replayed once to trace them (``source`` is the log they come from).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from typing import Any

from agentgym_budget.agents.base import close_agent, close_shared_resources, required_info_keys
from agentgym_budget.eval.probes.judge import JUDGE_INFO_KEYS, StateJudge, hidden_keys_for
from agentgym_budget.eval.probes.states import HistoryTurn, ProbePoint, prime_agent, walk
from agentgym_budget.eval.recovery.natural import TraceRecorder, trace_actions
from agentgym_budget.registration import env_info
from agentgym_budget.runner.env_ref import EnvPool
from agentgym_budget.runner.pool import Emit
from agentgym_budget.runner.rollout import play_episode
from agentgym_budget.runner.seeds import episode_seed

__all__: list[str] = []

_POOL = EnvPool()
_CAP = 10_000


def _keys(config: Any) -> set[str]:
    keys = set(JUDGE_INFO_KEYS)
    for spec in config.specs:
        keys |= required_info_keys(spec.build())
    return keys


def _budgeted(info: Mapping[str, Any], budget: int, turn: int) -> dict[str, Any]:
    return {**info, "max_turns": budget, "turns_left": budget - turn}


def _common(job: Any, spec: Any) -> dict[str, Any]:
    return {"agent": spec.name, **job.env.to_json(), "family": env_info(job.env.env_id).family}


async def _perturb_state(job: Any, env: Any, point: ProbePoint, emit: Emit) -> None:
    config = job.config
    judge = StateJudge(env, point, show_budget=config.show_budget)
    forced = _forced_actions(judge, point, config)
    budgets = config.budgets if config.show_budget else (max(config.budgets),)
    for k in config.ks:
        if k > len(forced):
            continue
        for spec in config.specs:
            for sample in range(config.samples):
                seed = episode_seed(config.seed, f"{point.state_id}|k{k}", sample)
                for remaining in budgets:
                    if (spec.name, point.state_id, k, sample, remaining) in job.done:
                        continue
                    result = await _play_after_forced(env, spec, point, forced[:k], remaining, seed, config.show_budget)
                    emit(_perturbed_record(job, spec, point, forced[:k], sample, result))


def _forced_actions(judge: StateJudge, point: ProbePoint, config: Any) -> list[Any]:
    """Up to ``max(config.ks)`` wrong actions forced one after the other from ``point`` (fewer if none is left)."""
    rng = random.Random(episode_seed(config.seed, f"{point.state_id}|forced", 0))
    forced = []
    snapshot, info = point.snapshot, point.info
    for _ in range(max(config.ks)):
        outcome = judge.wrong_action(snapshot, info, rng, harmful=config.harmful)
        if outcome is None:
            break
        forced.append(outcome)
        snapshot, info = outcome.snapshot, outcome.info
    return forced


async def _play_after_forced(
    env: Any, spec: Any, point: ProbePoint, forced: list[Any], remaining: int, seed: int, show_budget: bool
) -> Any:
    """One episode of ``spec``'s agent from the state after ``forced``, with ``remaining`` turns left."""
    turns = [*point.history]
    observation, info = point.observation, point.info
    for outcome in forced:
        turns.append(HistoryTurn(observation, info, outcome.action))
        observation, info = outcome.observation, outcome.info
    snapshot = forced[-1].snapshot if forced else point.snapshot
    seen = point.depth + len(forced)
    total = seen + remaining
    agent = spec.build()
    hidden = hidden_keys_for(agent)
    try:
        start = (point.start[0], _budgeted(point.start[1], total, 0))
        history = [HistoryTurn(t.observation, _budgeted(t.info, total, i), t.action) for i, t in enumerate(turns)]
        await prime_agent(agent, start, history, seed=seed, budget=total, show_budget=show_budget, hidden=hidden)
        env.restore(snapshot)
        env.get_wrapper_attr("set_episode_budget")(total)
        return await play_episode(
            env,
            agent,
            task_id=point.trajectory.task_id,
            budget=remaining,
            seed=seed,
            show_budget=show_budget,
            start=(observation, _budgeted(info, total, seen)),
            reset_agent=False,
            hidden_keys=hidden,
        )
    finally:
        await close_agent(agent)


def _perturbed_record(job: Any, spec: Any, point: ProbePoint, forced: list[Any], sample: int, result: Any) -> dict:
    config = job.config
    last = forced[-1] if forced else None
    return {
        "kind": "perturbed",
        **_common(job, spec),
        "task_id": point.trajectory.task_id,
        "source": point.trajectory.source,
        "state_id": point.state_id,
        "depth": point.depth,
        "length": point.length,
        "plan_length": len(point.plan),
        "state_progress": point.progress,
        "k": len(forced),
        "forced": [o.action for o in forced],
        "forced_errors": [o.error for o in forced],
        "plan_length_forced": last.plan_after if last is not None else len(point.plan),
        "progress_forced": last.progress_after if last is not None else point.progress,
        "mode": "independent" if config.show_budget else "prefix",
        "show_budget": config.show_budget,
        "sample": sample,
        **result.to_record(),
    }


async def _perturb_job(job: Any, emit: Emit) -> None:
    config, trajectory = job.config, job.trajectory
    env = _POOL.acquire(job.env, _keys(config), False, snapshots=True)
    try:
        points = walk(env, trajectory, lambda length: config.chosen_depths(trajectory, length), budget=_CAP)
        for point in points:
            await _perturb_state(job, env, point, emit)
    finally:
        _POOL.release(env)


async def _natural_job(job: Any, emit: Emit) -> None:
    config = job.config
    env = _POOL.acquire(job.env, _keys(config), config.show_budget)
    recorder = TraceRecorder(env)
    try:
        for spec in config.specs:
            for sample in range(config.natural):
                if (spec.name, sample) in job.done:
                    continue
                seed = episode_seed(config.seed, job.task_id, sample)
                agent = spec.build()
                try:
                    result = await play_episode(
                        recorder,
                        agent,
                        task_id=job.task_id,
                        budget=config.natural_budget,
                        seed=seed,
                        show_budget=config.show_budget,
                        hidden_keys=hidden_keys_for(agent),
                    )
                finally:
                    await close_agent(agent)
                emit(
                    {
                        "kind": "natural",
                        **_common(job, spec),
                        "mode": "independent",
                        "show_budget": config.show_budget,
                        "sample": sample,
                        **result.to_record(),
                        "plan_lengths": list(recorder.plan_lengths),
                        "progress_trace": list(recorder.progress),
                    }
                )
    finally:
        _POOL.release(env)


def _trace_job(job: Any, emit: Emit) -> None:
    env = _POOL.acquire(job.env, JUDGE_INFO_KEYS, False)
    try:
        for record in job.records:
            plans, progress = trace_actions(env, record["task_id"], record["seed"], record["budget"], record["actions"])
            emit(
                {
                    "kind": "traced",
                    "source": job.source,
                    "agent": record["agent"],
                    **job.env.to_json(),
                    "family": env_info(job.env.env_id).family,
                    **{key: record.get(key) for key in ("task_id", "sample", "seed", "budget", "won", "turns")},
                    "success_turn": record.get("success_turn"),
                    "actions": list(record["actions"]),
                    "plan_lengths": plans,
                    "progress_trace": progress,
                }
            )
    finally:
        _POOL.release(env)


async def _run(job: Any, emit: Emit) -> None:
    try:
        if job.kind == "perturbed":
            await _perturb_job(job, emit)
        elif job.kind == "natural":
            await _natural_job(job, emit)
        else:
            _trace_job(job, emit)
    finally:
        await close_shared_resources()


def recovery_job(job: Any, emit: Emit) -> None:
    """Run one recovery job (perturbed, natural or traced), emitting one record per episode."""
    asyncio.run(_run(job, emit))


def close_worker_resources() -> None:
    """Close the env stacks pooled in this process."""
    _POOL.close()
