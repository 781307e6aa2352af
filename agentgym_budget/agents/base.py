"""The agent protocol: what the runner calls, sync or async.

An agent plays one episode at a time. The runner (:mod:`agentgym_budget.runner.rollout`) calls

1. ``reset(goal, observation, info, seed=..., budget=...)`` once per episode, with the task's goal,
   the first observation and ``info``, the episode's seed (agents that sample must draw only from
   generators seeded with it, so that the same seed gives the same episode) and the turn budget
   when it is shown to the agent (``None`` when it is hidden);
2. ``act(observation, info) -> str`` once per turn, returning the command for the env.

:class:`Agent` is the synchronous form and :class:`AsyncAgent` the asynchronous one (``reset`` and
``act`` are coroutines; the runner plays several episodes of an async agent concurrently, e.g. to
keep an LLM server busy). Both are :class:`typing.Protocol` s: any object with these methods works.

Optional members, read with the helpers below:

* ``info_keys``: opt-in ``info`` keys the agent needs (e.g. ``{"expert_action"}``); the runner makes
  the env with them (:func:`required_info_keys`);
* ``stats()``: a JSON-serialisable mapping about the last episode (token counts, ...), stored
  with the episode (:func:`episode_stats`);
* ``close()`` (sync or async): release resources;
* ``observe(observation, info, action)`` (sync or async): a turn the agent did not choose was played
  from ``observation`` / ``info`` with ``action``. The probes of :mod:`agentgym_budget.eval.probes.plan` and
  :mod:`agentgym_budget.eval.recovery.plan` use it to give the agent the history of a state it did not
  reach itself (a reference prefix, or forced wrong actions); agents with memory should record the
  turn as if they had played it (:func:`observe_turn`).

When the budget is hidden the runner removes ``max_turns`` and ``turns_left`` from the ``info``
the agent sees, so a hidden budget is really hidden.

Example:
    >>> class Echo:
    ...     def reset(self, goal, observation, info, *, seed, budget=None):
    ...         self.first = info["admissible_actions"][0]
    ...     def act(self, observation, info):
    ...         return self.first
    >>> agent = Echo()
    >>> isinstance(agent, Agent), is_async_agent(agent), required_info_keys(agent)
    (True, False, frozenset())
    >>> agent.reset("win", "You are here.", {"admissible_actions": ["look"]}, seed=0)
    >>> agent.act("You are here.", {})
    'look'
"""

from __future__ import annotations

import inspect
import random
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["Agent", "AsyncAgent", "is_async_agent", "required_info_keys"]


@runtime_checkable
class Agent(Protocol):
    """A synchronous agent (see the module docstring)."""

    def reset(
        self, goal: str, observation: str, info: Mapping[str, Any], *, seed: int, budget: int | None = None
    ) -> None:
        """Start an episode on the task whose goal is ``goal``."""

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """Return the next command."""


@runtime_checkable
class AsyncAgent(Protocol):
    """An asynchronous agent: ``reset`` and ``act`` are coroutines (see the module docstring)."""

    async def reset(
        self, goal: str, observation: str, info: Mapping[str, Any], *, seed: int, budget: int | None = None
    ) -> None:
        """Start an episode on the task whose goal is ``goal``."""

    async def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """Return the next command."""


async def close_shared_resources() -> None:
    """Close what agents share within the running event loop (the chat clients, if any were made)."""
    chat_client = sys.modules.get("agentgym_budget.agents.chat_client")
    if chat_client is not None:
        await chat_client.close_shared_clients()


def is_async_agent(agent: object) -> bool:
    """Whether ``agent.act`` is a coroutine function (an :class:`AsyncAgent`)."""
    return inspect.iscoroutinefunction(getattr(agent, "act", None))


def required_info_keys(agent: object) -> frozenset[str]:
    """The opt-in ``info`` keys ``agent`` declares in ``info_keys`` (empty if none)."""
    return frozenset(getattr(agent, "info_keys", ()) or ())


def episode_stats(agent: object) -> dict[str, Any]:
    """``agent.stats()`` as a dict, or ``{}`` if the agent has no ``stats``."""
    stats = getattr(agent, "stats", None)
    return dict(stats()) if callable(stats) else {}


async def close_agent(agent: object) -> None:
    """Call ``agent.close()`` (awaiting it if it is a coroutine) if the agent has one."""
    close = getattr(agent, "close", None)
    if callable(close):
        result = close()
        if inspect.isawaitable(result):
            await result


async def observe_turn(agent: object, observation: str, info: Mapping[str, Any], action: str) -> bool:
    """Tell ``agent`` that ``action`` was played for it from ``observation`` (its optional ``observe``).

    Returns whether the agent has an ``observe`` member (memoryless agents need none).

    Example:
        >>> import asyncio
        >>> class Memory:
        ...     turns = []
        ...     def observe(self, observation, info, action):
        ...         self.turns.append(action)
        >>> agent = Memory()
        >>> asyncio.run(observe_turn(agent, "A hall.", {}, "go north")), agent.turns
        (True, ['go north'])
        >>> asyncio.run(observe_turn(object(), "A hall.", {}, "go north"))
        False
    """
    observe = getattr(agent, "observe", None)
    if not callable(observe):
        return False
    result = observe(observation, info, action)
    if inspect.isawaitable(result):
        await result
    return True


class SeededAgent:
    """Base of the built-in agents: a :class:`random.Random` reseeded at every ``reset``.

    Subclasses implement :meth:`act` and may extend :meth:`reset`.

    Attributes:
        rng: The episode's generator (seeded with the episode seed at reset).
        info_keys: Opt-in ``info`` keys the agent needs.
    """

    info_keys: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def reset(
        self, goal: str, observation: str, info: Mapping[str, Any], *, seed: int, budget: int | None = None
    ) -> None:
        """Reseed :attr:`rng` with ``seed``."""
        self.rng = random.Random(seed)

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def choose(self, actions: Sequence[str], exclude: str | None = None) -> str | None:
        """A uniformly random element of ``actions`` other than ``exclude`` (``None`` if there is none)."""
        pool = [a for a in actions if a != exclude]
        return self.rng.choice(pool) if pool else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
