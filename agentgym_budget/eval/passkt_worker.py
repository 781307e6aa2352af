"""The worker side of Pass@(K,T) runs: play a job's episodes and emit one record per episode.

:func:`play_job` runs in a worker process (or in the calling process with one worker). Env stacks
are kept in a per-process :class:`~agentgym_budget.eval.rollout.EnvPool`, so a worker builds each
env once. Synchronous agents play their episodes one after another; asynchronous ones (LLM agents)
play up to ``episode_concurrency`` episodes at once, each with its own env and agent instance.
:func:`close_worker_resources` closes the pooled envs when the worker is done.

Each record holds the episode's identity (``agent``, ``env_id``, ``env_kwargs``, ``split``,
``task_id``, ``mode``, ``show_budget``, ``budget``, ``sample``, ``seed``) and its outcome (``won``,
``lost``, ``turns``, ``success_turn``, ``return``, ``progress``, ``actions``, ``rewards``,
``agent_stats``, ``elapsed_s``).

Example:
    >>> from agentgym_budget.eval.passkt import PassKTConfig, PassKTJob, plan_episodes
    >>> from agentgym_budget.eval.rollout import EnvRef
    >>> config = PassKTConfig(EnvRef.parse("TextWorld-CoinCollector-v0"), ["expert"], ks=(1,), budgets=(20,), samples=1)
    >>> task = config.resolve_tasks()[0]
    >>> job = PassKTJob(config.env, "independent", False, task, tuple(plan_episodes(config, [task])))
    >>> records = []
    >>> play_job(job, records.append)
    >>> [(r["agent"], r["budget"], r["won"], r["turns"] == r["success_turn"]) for r in records]
    [('expert', 20, True, True)]
    >>> close_worker_resources()
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentgym_budget.agents.base import close_agent, close_shared_resources, is_async_agent, required_info_keys
from agentgym_budget.eval.pool import Emit
from agentgym_budget.eval.rollout import EnvPool, play_episode

__all__ = ["close_worker_resources", "episode_record", "play_job"]

_POOL = EnvPool()


def episode_record(job: Any, plan: Any, result: Any) -> dict[str, Any]:
    """The JSONL record of one played episode of ``job``."""
    return {
        "agent": plan.agent.name,
        **job.env.to_json(),
        "mode": job.mode,
        "show_budget": job.show_budget,
        "sample": plan.sample,
        **result.to_record(),
    }


async def _play_one(job: Any, plan: Any, emit: Emit) -> None:
    agent = plan.agent.build()
    env = _POOL.acquire(job.env, required_info_keys(agent), job.show_budget)
    try:
        result = await play_episode(
            env, agent, task_id=plan.task_id, budget=plan.budget, seed=plan.seed, show_budget=job.show_budget
        )
    finally:
        _POOL.release(env)
        await close_agent(agent)
    emit(episode_record(job, plan, result))


def _concurrency(job: Any, plan: Any) -> int:
    if job.episode_concurrency is not None:
        return max(1, int(job.episode_concurrency))
    return max(1, int(plan.agent.options.get("concurrency", 1)))


async def _play_job(job: Any, emit: Emit) -> None:
    try:
        by_agent: dict[str, list[Any]] = {}
        for plan in job.episodes:
            by_agent.setdefault(plan.agent.name, []).append(plan)
        for plans in by_agent.values():
            if not is_async_agent(plans[0].agent.build()):
                for plan in plans:
                    await _play_one(job, plan, emit)
                continue
            slots = asyncio.Semaphore(_concurrency(job, plans[0]))

            async def guarded(plan: Any, slots: asyncio.Semaphore = slots) -> None:
                async with slots:
                    await _play_one(job, plan, emit)

            await asyncio.gather(*(guarded(plan) for plan in plans))
    finally:
        await close_shared_resources()


def play_job(job: Any, emit: Emit) -> None:
    """Play every episode of a :class:`~agentgym_budget.eval.passkt.PassKTJob`, emitting each record."""
    asyncio.run(_play_job(job, emit))


def close_worker_resources() -> None:
    """Close the env stacks pooled in this process."""
    _POOL.close()
