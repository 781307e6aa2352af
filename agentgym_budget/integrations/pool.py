"""Pools of episode sessions, shared by the adapters whose library makes an env per episode.

Building an env stack costs far more than resetting one, and OpenEnv (one env per WebSocket session)
and SkyRL (one env per trajectory, in threads) make envs all the time, so their adapters take
:class:`~agentgym_budget.integrations.session.EpisodeSession` s from a :class:`SessionPool`.

Example:
    >>> from agentgym_budget.integrations.session_config import SessionConfig
    >>> pool = SessionPool(SessionConfig("TextWorld-CoinCollector-v0"))
    >>> session = pool.acquire()
    >>> _ = session.reset(seed=0)
    >>> pool.release(session)
    >>> pool.acquire() is session, session.last is None  # reused, with no episode running
    (True, True)
    >>> pool.close()
"""

from __future__ import annotations

import threading

from agentgym_budget.integrations.session import EpisodeSession
from agentgym_budget.integrations.session_config import SessionConfig

__all__: list[str] = []


class SessionPool:
    """Sessions of one config kept for reuse across episodes; safe to use from many threads.

    Building a stack costs far more than resetting one, and the libraries make an env per episode
    (SkyRL: per trajectory; OpenEnv: per WebSocket session), so adapters take sessions from a pool.

    Args:
        config: The config of every session in the pool.
        max_idle: Idle sessions kept at most; more are closed when released.
        max_budget: Every session's ``max_budget`` (see :class:`EpisodeSession`).
        max_history_bytes: Every session's ``max_history_bytes``.

    Raises:
        InvalidBudgetError: ``max_budget`` is invalid or below the config's budgets.
        InvalidOptionError: ``max_history_bytes`` is invalid.
    """

    def __init__(
        self,
        config: SessionConfig,
        *,
        max_idle: int = 64,
        max_budget: int | None = None,
        max_history_bytes: int | None = None,
    ) -> None:
        EpisodeSession.check_limits(config, max_budget, max_history_bytes)
        self.config = config
        self.max_idle = max_idle
        self._limits = {"max_budget": max_budget, "max_history_bytes": max_history_bytes}
        self._idle: list[EpisodeSession] = []
        self._lock = threading.Lock()
        self.created = 0

    def acquire(self) -> EpisodeSession:
        """An idle session (with no episode running), or a new one."""
        with self._lock:
            if self._idle:
                session = self._idle.pop()
                session.forget()
                return session
            self.created += 1
        return EpisodeSession(self.config, **self._limits)

    def release(self, session: EpisodeSession) -> None:
        """Give back a session from :meth:`acquire`; its episode is dropped now, the env's record of it included
        (an idle session holds no commands)."""
        session.forget()
        with self._lock:
            if len(self._idle) < self.max_idle:
                self._idle.append(session)
                return
        session.close()

    def close(self) -> None:
        """Close every idle session."""
        with self._lock:
            idle, self._idle = self._idle, []
        for session in idle:
            session.close()


_POOLS: dict[SessionConfig, SessionPool] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(config: SessionConfig) -> SessionPool:
    """The process-wide :class:`SessionPool` of ``config`` (adapters whose library builds envs itself use it)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(config)
        if pool is None:
            pool = _POOLS[config] = SessionPool(config)
        return pool
