"""The synchronous client of a ``serve`` server (:class:`RemoteSession`), raising the server's typed errors.

An agentgym-budget error raised on the server reaches the client as OpenEnv's ``RuntimeError`` whose
message names the error class (:mod:`.openenv`); :class:`RemoteSession` raises that class again.
"""

from __future__ import annotations

import re
from typing import Any

from agentgym_budget import errors
from agentgym_budget.errors import AgentGymBudgetError
from agentgym_budget.integrations.openenv_classes import _classes

__all__: list[str] = []

_WIRE_ERROR = re.compile(r"Server error: (?P<name>[A-Za-z]+Error): (?P<message>.*) \(code: [A-Z_]+\)$", re.DOTALL)


def _typed(err: Exception) -> Exception:
    match = _WIRE_ERROR.match(str(err))
    if match:
        cls = getattr(errors, match["name"], None)
        if isinstance(cls, type) and issubclass(cls, AgentGymBudgetError):
            return cls(match["message"])
    return err


class RemoteSession:
    """A synchronous client session of a ``serve`` server, with the API of an ``EpisodeSession``.

    ``reset(**fields)`` and ``step(reply)`` return a ``BudgetObservation``; errors the server
    reports for agentgym-budget reasons are raised as the same typed errors here.

    Args:
        base_url: The server's URL (``http://HOST:PORT`` or ``ws://HOST:PORT``).
        **client_kwargs: Passed to OpenEnv's ``EnvClient`` (e.g. ``message_timeout_s``).
    """

    def __init__(self, base_url: str, **client_kwargs: Any) -> None:
        classes = _classes()
        self._client = classes.BudgetEnvClient(base_url=base_url, **client_kwargs).sync()
        self._client.connect()

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self._client, method)(*args, **kwargs)
        except RuntimeError as err:
            typed = _typed(err)
            if typed is err:
                raise
            raise typed from None

    def reset(self, **fields: Any) -> Any:
        """Start an episode (episode fields: ``task``, ``seed``, ``max_turns``, ``show_budget``)."""
        return self._call("reset", **fields).observation

    def step(self, reply: str) -> Any:
        """Play one turn with the model's reply (or a command)."""
        return self._call("step", reply).observation

    def state(self) -> Any:
        """The server-side ``BudgetState`` of this session."""
        return self._call("state")

    def close(self) -> None:
        """Close the connection (the server ends the session and recycles its env)."""
        self._client.close()

    def __enter__(self) -> RemoteSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
