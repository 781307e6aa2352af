"""The worker side of Pass@(K,T) runs: play a job's episodes and emit one record per episode.

:func:`play_job` runs in a worker process (or in the calling process with one worker). Env stacks
are kept in a per-process :class:`~agentgym_budget.runner.env_ref.EnvPool`, so a worker builds each
env once. Synchronous agents play their episodes one after another; asynchronous ones (LLM agents)
play up to :func:`episode_concurrency` episodes at once, each with its own env and agent instance,
taken in plan order from every task of the job (a job holds several tasks when one task has too few
episodes to fill the concurrency: :func:`~agentgym_budget.eval.passkt.plan.group_tasks`). Their envs are
built and reset in :data:`ENV_THREADS` thread(s), so the event loop keeps serving the HTTP client
while an env loads or generates a game (tens of milliseconds to seconds); their steps, which take
milliseconds, run on the event loop: handing every step to the thread cost the worker about 1 CPU ms
per step in GIL and wake-up traffic, more than the step itself frees the loop for
(``benchmarks/llm_concurrency.py`` compares both: :data:`STEPS_IN_ENV_THREAD`). Every episode has
its own seed, env and agent, so its record does not depend on which other episodes run beside it.
:func:`close_worker_resources` closes the pooled envs when the worker is done.

Each record holds the episode's identity (``agent``, ``env_id``, ``env_kwargs``, ``split``,
``task_id``, ``mode``, ``show_budget``, ``budget``, ``sample``, ``seed``) and its outcome (``won``,
``lost``, ``turns``, ``success_turn``, ``return``, ``progress``, ``actions``, ``rewards``,
``agent_stats``, ``elapsed_s``).

Example:
    >>> from agentgym_budget.eval.passkt.config import PassKTConfig
    >>> from agentgym_budget.eval.passkt.plan import PassKTJob, plan_episodes
    >>> from agentgym_budget.runner.rollout import EnvRef
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
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentgym_budget.agents.base import close_agent, close_shared_resources, is_async_agent, required_info_keys
from agentgym_budget.runner.env_ref import EnvPool
from agentgym_budget.runner.pool import Emit
from agentgym_budget.runner.rollout import play_episode

__all__ = ["STEPS_IN_ENV_THREAD", "episode_concurrency"]

ENV_THREADS = 1
"""Threads per worker process that build and reset the envs of an async agent's episodes."""

STEPS_IN_ENV_THREAD = False
"""Whether an async agent's env steps run in the env thread too (``False``: inline on the event loop)."""

_POOL = EnvPool()
_ENV_THREADS: ThreadPoolExecutor | None = None


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


def _env_threads() -> ThreadPoolExecutor:
    global _ENV_THREADS
    if _ENV_THREADS is None:
        _ENV_THREADS = ThreadPoolExecutor(ENV_THREADS, thread_name_prefix="agentgym-env")
    return _ENV_THREADS


async def _play_one(job: Any, plan: Any, emit: Emit, executor: ThreadPoolExecutor | None) -> None:
    agent = plan.agent.build()
    keys = required_info_keys(agent)
    if executor is None:
        env = _POOL.acquire(job.env, keys, job.show_budget)
    else:
        env = await asyncio.get_running_loop().run_in_executor(executor, _POOL.acquire, job.env, keys, job.show_budget)
    try:
        result = await play_episode(
            env,
            agent,
            task_id=plan.task_id,
            budget=plan.budget,
            seed=plan.seed,
            show_budget=job.show_budget,
            executor=executor,
            step_executor=executor if STEPS_IN_ENV_THREAD else None,
        )
    finally:
        _POOL.release(env)
        await close_agent(agent)
    emit(episode_record(job, plan, result))


def episode_concurrency(job: Any, spec: Any) -> int:
    """Episodes of the agent ``spec`` a worker plays at once: the job's setting, else the spec's ``concurrency``, else 1.

    Synchronous agents always play one episode at a time.

    Example:
        >>> from agentgym_budget.agents import parse_agent
        >>> from agentgym_budget.eval.passkt.plan import PassKTJob
        >>> from agentgym_budget.runner.rollout import EnvRef
        >>> job = PassKTJob(EnvRef.parse("TextWorld-CoinCollector-v0"), "independent", False, ("t",), ())
        >>> episode_concurrency(job, parse_agent("openai:m")), episode_concurrency(job, parse_agent("random"))
        (8, 1)
    """
    if not is_async_agent(spec.build()):
        return 1
    if job.episode_concurrency is not None:
        return max(1, int(job.episode_concurrency))
    return max(1, int(spec.options.get("concurrency", 1)))


async def _guarded(
    job: Any, plan: Any, emit: Emit, slots: asyncio.Semaphore, executor: ThreadPoolExecutor | None
) -> None:
    async with slots:
        await _play_one(job, plan, emit, executor)


async def _play_job(job: Any, emit: Emit) -> None:
    try:
        by_agent: dict[str, list[Any]] = {}
        for plan in job.episodes:
            by_agent.setdefault(plan.agent.name, []).append(plan)
        for plans in by_agent.values():
            if not is_async_agent(plans[0].agent.build()):
                for plan in plans:
                    await _play_one(job, plan, emit, None)
                continue
            slots = asyncio.Semaphore(episode_concurrency(job, plans[0].agent))
            await asyncio.gather(*(_guarded(job, plan, emit, slots, _env_threads()) for plan in plans))
    finally:
        await close_shared_resources()


def play_job(job: Any, emit: Emit) -> None:
    """Play every episode of a :class:`~agentgym_budget.eval.passkt.plan.PassKTJob`, emitting each record."""
    asyncio.run(_play_job(job, emit))


def close_worker_resources() -> None:
    """Close the env stacks pooled in this process and stop its env threads."""
    global _ENV_THREADS
    if _ENV_THREADS is not None:
        _ENV_THREADS.shutdown(wait=True)
        _ENV_THREADS = None
    _POOL.close()
