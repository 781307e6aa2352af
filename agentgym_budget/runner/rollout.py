"""Playing one episode of one agent: the episode loop shared by every evaluation command.

Pass@(K,T), probes and recovery runs all play their episodes here (the env references and pools
they play on are :mod:`agentgym_budget.runner.env_ref`; both names are importable from here too):

* :func:`play_episode` plays one episode with a sync or async agent and returns an
  :class:`EpisodeResult`; :func:`run_episode` is its synchronous form. Given an ``executor``, it
  resets the env there (and steps it in ``step_executor``, if given), so the event loop stays free
  for the agent's requests while the env loads a game (concurrent episodes of an LLM agent).

An episode with budget ``T`` is reset with ``options={"task": task_id, "max_turns": T}`` and
``seed``; the agent is reset with the same seed. When the budget is hidden the agent's ``info``
lacks ``max_turns`` and ``turns_left`` (and the observation has no budget notice); when it is
shown the observation carries ``TurnBudget``'s notice and the agent receives ``budget=T``.

Example:
    >>> from agentgym_budget.agents import NoisyExpertRecover
    >>> ref = EnvRef.parse("TextWorld-CoinCollector-v0")
    >>> env = ref.make(info_keys={"expert_action"})
    >>> result = run_episode(env, NoisyExpertRecover(eps=0.0), task_id=ref.task_ids()[0], budget=20, seed=1)
    >>> result.won, result.turns == result.success_turn == len(result.actions)
    (True, True)
    >>> env.close()
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_budget.agents.base import close_shared_resources, episode_stats, is_async_agent
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.runner.env_ref import EnvPool as EnvPool  # re-exported: the old home
from agentgym_budget.runner.env_ref import EnvRef as EnvRef

__all__ = ["EpisodeResult", "agent_view", "play_episode"]

HIDDEN_BUDGET_KEYS = ("max_turns", "turns_left")
"""``info`` keys removed from what the agent sees when the budget is hidden."""


@dataclass
class EpisodeResult:
    """What happened in one episode.

    Attributes:
        task_id: The task played.
        budget: The turn budget ``T``.
        seed: Seed of the env reset and of the agent.
        won: The task was won within the budget.
        lost: The task was lost (a terminal failure in the game).
        turns: Turns played.
        success_turn: The turn of the win (``None`` if not won).
        total_return: Sum of rewards.
        progress: The ``progress`` of the last state.
        actions: Every action, in order.
        rewards: Every reward, in order.
        agent_stats: ``agent.stats()`` after the episode.
        elapsed_s: Wall-clock seconds.
    """

    task_id: str
    budget: int
    seed: int
    won: bool
    lost: bool
    turns: int
    success_turn: int | None
    total_return: float
    progress: float
    actions: list[str] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    agent_stats: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def to_record(self) -> dict[str, Any]:
        """JSON form; the return is stored under ``"return"``."""
        record = asdict(self)
        record["return"] = record.pop("total_return")
        return record


def agent_view(info: Mapping[str, Any], show_budget: bool, hidden: Iterable[str] = ()) -> dict[str, Any]:
    """The ``info`` the agent sees: without :data:`HIDDEN_BUDGET_KEYS` when the budget is hidden, nor ``hidden``.

    ``hidden`` removes keys the env computes for someone else (e.g. the expert's plan a probe needs
    to judge an agent that did not ask for it).

    Example:
        >>> sorted(agent_view({"turn": 1, "max_turns": 5, "turns_left": 4, "won": False}, show_budget=False))
        ['turn', 'won']
        >>> sorted(agent_view({"turn": 1, "expert_plan": ["go east"]}, show_budget=True, hidden={"expert_plan"}))
        ['turn']
    """
    dropped = set(hidden) if show_budget else {*hidden, *HIDDEN_BUDGET_KEYS}
    return {key: value for key, value in info.items() if key not in dropped}


async def _call(method: Any, *args: Any, **kwargs: Any) -> Any:
    result = method(*args, **kwargs)
    return await result if inspect.isawaitable(result) else result


async def _run_env(executor: Executor | None, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    if executor is None:
        return method(*args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(executor, lambda: method(*args, **kwargs))


async def play_episode(
    env: gym.Env,
    agent: Any,
    *,
    task_id: str,
    budget: int,
    seed: int,
    show_budget: bool | None = None,
    start: tuple[str, Mapping[str, Any]] | None = None,
    reset_agent: bool = True,
    hidden_keys: Iterable[str] = (),
    executor: Executor | None = None,
    step_executor: Executor | None = None,
) -> EpisodeResult:
    """Play one episode of ``agent`` (sync or async) on ``env`` (a stack with a ``TurnBudget``).

    Args:
        env: The env stack; it is reset here unless ``start`` is given.
        agent: An :class:`~agentgym_budget.agents.Agent` or :class:`~agentgym_budget.agents.AsyncAgent`.
        task_id: Task to play.
        budget: Turn budget ``T`` (passed as the ``max_turns`` reset option).
        seed: Seed of the env reset and of the agent.
        show_budget: Whether the agent is told its budget; ``None`` reads the ``TurnBudget``'s setting.
        start: ``(observation, info)`` of an env already positioned (e.g. restored from a snapshot):
            the env is not reset and the episode continues from there with the turns it has left.
        reset_agent: ``False`` when the caller already reset the agent (e.g. and told it the turns
            before ``start`` with ``observe``): the agent continues its episode.
        hidden_keys: ``info`` keys the agent must not see (see :func:`agent_view`).
        executor: Where ``env.reset`` runs (e.g. a thread, so that concurrent episodes of an async
            agent keep the event loop free while an env loads or generates its game); ``None``: inline.
        step_executor: Where ``env.step`` runs; ``None``: inline. Steps take milliseconds, and handing
            each one to a thread costs a busy worker more CPU than it frees its event loop (see
            :mod:`agentgym_budget.eval.passkt.worker`). The env must not be used by anyone else
            meanwhile; the trajectory is the same wherever it runs.

    Returns:
        The :class:`EpisodeResult`; ``turns`` counts only the turns played here.
    """
    if show_budget is None:
        show_budget = bool(env.get_wrapper_attr("show_budget"))
    began = time.perf_counter()
    hidden_keys = frozenset(hidden_keys)
    observation, info = await _first_turn(
        env, agent, task_id, budget, seed, show_budget, start, reset_agent, hidden_keys, executor
    )
    actions, rewards, success_turn, info = await _play_turns(
        env, agent, observation, info, show_budget, hidden_keys, step_executor
    )
    return EpisodeResult(
        task_id=task_id,
        budget=int(budget),
        seed=int(seed),
        won=bool(info.get("won")),
        lost=bool(info.get("lost")),
        turns=len(actions),
        success_turn=success_turn,
        total_return=float(sum(rewards)),
        progress=float(info.get("progress", 0.0)),
        actions=actions,
        rewards=rewards,
        agent_stats=episode_stats(agent),
        elapsed_s=round(time.perf_counter() - began, 4),
    )


async def _first_turn(
    env: gym.Env,
    agent: Any,
    task_id: str,
    budget: int,
    seed: int,
    show_budget: bool,
    start: tuple[str, Mapping[str, Any]] | None,
    reset_agent: bool,
    hidden_keys: frozenset[str],
    executor: Executor | None,
) -> tuple[str, dict[str, Any]]:
    """The episode's first ``(observation, info)``: the env reset (or ``start``), the agent reset if asked."""
    if start is None:
        observation, info = await _run_env(
            executor, env.reset, seed=seed, options={"task": task_id, "max_turns": budget}
        )
    else:
        observation, info = start[0], dict(start[1])
    if reset_agent:
        await _call(
            agent.reset,
            info.get("goal", ""),
            observation,
            agent_view(info, show_budget, hidden_keys),
            seed=seed,
            budget=budget if show_budget else None,
        )
    return observation, info


async def _play_turns(
    env: gym.Env,
    agent: Any,
    observation: str,
    info: dict[str, Any],
    show_budget: bool,
    hidden_keys: frozenset[str],
    step_executor: Executor | None,
) -> tuple[list[str], list[float], int | None, dict[str, Any]]:
    """Turns until the episode ends: ``(actions, rewards, turn of the first win or None, last info)``."""
    actions: list[str] = []
    rewards: list[float] = []
    success_turn: int | None = None
    done = bool(info.get("won")) or bool(info.get("lost")) or info.get("turns_left") == 0
    while not done:
        action = await _call(agent.act, observation, agent_view(info, show_budget, hidden_keys))
        observation, reward, terminated, truncated, info = await _run_env(step_executor, env.step, action)
        actions.append(action)
        rewards.append(float(reward))
        if info.get("won") and success_turn is None:
            success_turn = len(actions)
        done = bool(terminated or truncated)
    return actions, rewards, success_turn, info


def run_episode(env: gym.Env, agent: Any, **kwargs: Any) -> EpisodeResult:
    """Synchronous :func:`play_episode` (not from inside a running event loop)."""
    if is_async_agent(agent):

        async def play_and_clean_up() -> EpisodeResult:
            try:
                return await play_episode(env, agent, **kwargs)
            finally:
                await close_shared_resources()

        return asyncio.run(play_and_clean_up())
    coroutine = play_episode(env, agent, **kwargs)
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    coroutine.close()
    raise RuntimeError("run_episode: a synchronous agent awaited something; pass an async agent's coroutine.")


def episode_turn_outcome(record: Mapping[str, Any], budget: int) -> tuple[bool, int, float]:
    """``(won, turns, return)`` of a logged episode read at a smaller or equal ``budget`` (prefix reading).

    Example:
        >>> record = {"won": True, "success_turn": 4, "turns": 4, "rewards": [0, 0, 0, 1.0], "budget": 10}
        >>> episode_turn_outcome(record, 3), episode_turn_outcome(record, 4)
        ((False, 3, 0.0), (True, 4, 1.0))
    """
    if budget > record["budget"]:
        raise InvalidOptionError(f"An episode run with budget {record['budget']} cannot be read at budget {budget}.")
    turns = min(int(record["turns"]), int(budget))
    success = record.get("success_turn")
    won = success is not None and success <= budget
    return won, turns, float(sum(record.get("rewards", [])[:turns]))
