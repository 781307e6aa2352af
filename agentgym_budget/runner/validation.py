"""Validation shared by the run configurations (probe and recovery runs).

Example:
    >>> count(3, "states")
    3
    >>> count(0, "k", zero=True)
    0
    >>> count(0, "states")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: states must be a positive integer, got 0.
    >>> [spec.name for spec in run_agents(["expert", "random"], "probe")]
    ['expert', 'random']
"""

from __future__ import annotations

from collections.abc import Iterable

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.registry import AgentSpec
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.runner.env_ref import EnvRef

__all__ = ["count"]


def count(value: object, what: str, *, zero: bool = False) -> int:
    """Return ``value`` if it is a positive (``zero=True``: non-negative) integer, else raise.

    Raises:
        InvalidOptionError: ``value`` is not such an integer (booleans are rejected).
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if zero else 1):
        raise InvalidOptionError(f"{what} must be a {'non-negative' if zero else 'positive'} integer, got {value!r}.")
    return value


def run_envs(envs: EnvRef | Iterable[EnvRef], kind: str) -> tuple[EnvRef, ...]:
    """The environments of a ``kind`` run as a non-empty tuple.

    Raises:
        InvalidOptionError: No environment was given.
    """
    refs = (envs,) if isinstance(envs, EnvRef) else tuple(envs)
    if not refs:
        raise InvalidOptionError(f"A {kind} run needs at least one environment.")
    return refs


def run_agents(agents: Iterable[str | AgentSpec], kind: str) -> tuple[AgentSpec, ...]:
    """The agents of a ``kind`` run, parsed, as a non-empty tuple of distinct agents.

    Raises:
        InvalidOptionError: No agent, or the same agent twice.
        UnknownAgentError: An agent name is not registered.
    """
    specs = tuple(parse_agent(agent) for agent in agents)
    names = [spec.name for spec in specs]
    if not specs or len(set(names)) != len(names):
        raise InvalidOptionError(f"A {kind} run needs one or more distinct agents, got {names}.")
    return specs
