"""An LLM agent for any OpenAI-compatible chat endpoint (CLI name ``openai:MODEL``).

Each turn the agent sends the goal, the last ``history`` turns, the current observation, the
admissible actions (``show_actions``) and, when the runner shows the budget, the turns left
(:class:`~agentgym_budget.agents.prompting.PromptTemplate`), then extracts the command from the reply
(:func:`~agentgym_budget.agents.prompting.extract_action`). Requests go through a
:class:`~agentgym_budget.agents.chat_client.ChatClient` shared by the agents of a process (timeouts,
retries with backoff, a concurrency limit); the API key comes from the environment variable named by
``api_key_env`` and is never logged or written to results. :meth:`OpenAIChatAgent.stats` reports the
episode's requests, retries, prompt and completion tokens and how many replies matched no admissible
action. A ``seed`` derived from the episode seed and the turn is sent with every request, so servers
that honour it (vLLM, llama.cpp, OpenAI) sample reproducibly.

Parameters of the CLI name (``openai:MODEL:key=value,...``): ``base_url`` (default ``$OPENAI_BASE_URL``
or ``http://localhost:8000/v1``), ``api_key_env`` (``OPENAI_API_KEY``), ``temperature`` (0.7),
``top_p`` (1.0), ``max_tokens`` (256), ``history`` (turns shown, 8), ``show_actions`` (true),
``template`` (a JSON prompt template file), ``timeout`` (60 s), ``retries`` (4), ``backoff`` (1 s),
``concurrency`` (requests in flight per worker process, and episodes played at once per worker; 8),
``send_seed`` (true).

Example:
    >>> agent = OpenAIChatAgent("my-model", base_url="http://127.0.0.1:9/v1", temperature=0.0)
    >>> agent
    OpenAIChatAgent(model='my-model', base_url='http://127.0.0.1:9/v1', temperature=0.0, history=8)
    >>> agent.stats()["requests"]
    0
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from agentgym_budget.agents.chat_client import ChatClient, shared_client, without_userinfo
from agentgym_budget.agents.prompting import PromptTemplate, extract_action
from agentgym_budget.errors import InvalidOptionError

__all__ = ["OpenAIChatAgent"]

DEFAULT_BASE_URL = "http://localhost:8000/v1"
"""Server used when neither ``base_url`` nor ``$OPENAI_BASE_URL`` is set (vLLM's default port)."""


class OpenAIChatAgent:
    """Chat-model agent (see the module docstring); an :class:`~agentgym_budget.agents.base.AsyncAgent`.

    Args:
        model: Model name sent to the server.
        base_url: API root; ``None`` or ``""`` uses ``$OPENAI_BASE_URL`` or :data:`DEFAULT_BASE_URL`.
        api_key_env: Environment variable holding the API key.
        temperature: Sampling temperature.
        top_p: Nucleus sampling mass.
        max_tokens: Completion length limit per turn.
        history: Number of past turns included in the prompt.
        show_actions: Show the admissible actions in the prompt.
        template: Path of a JSON prompt template, or ``""`` for the default one.
        timeout: Seconds per request.
        retries: Retries after a retryable failure.
        backoff: First retry delay in seconds.
        concurrency: Requests in flight per process (the client's limit).
        send_seed: Send a per-turn ``seed`` derived from the episode seed.
        client: A client to use instead of the process's shared one.

    Raises:
        InvalidOptionError: A parameter is out of range.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.7,
        top_p: float = 1.0,
        max_tokens: int = 256,
        history: int = 8,
        show_actions: bool = True,
        template: str = "",
        timeout: float = 60.0,
        retries: int = 4,
        backoff: float = 1.0,
        concurrency: int = 8,
        send_seed: bool = True,
        client: ChatClient | None = None,
    ) -> None:
        if history < 0 or max_tokens < 1 or temperature < 0 or not 0 < top_p <= 1:
            raise InvalidOptionError(
                f"openai agent: need history >= 0, max_tokens >= 1, temperature >= 0 and 0 < top_p <= 1; got "
                f"history={history}, max_tokens={max_tokens}, temperature={temperature}, top_p={top_p}."
            )
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.temperature, self.top_p, self.max_tokens = float(temperature), float(top_p), int(max_tokens)
        self.history = int(history)
        self.show_actions = bool(show_actions)
        self.template = PromptTemplate.from_file(template) if template else PromptTemplate()
        self.send_seed = bool(send_seed)
        self._client_options = {
            "api_key_env": api_key_env,
            "timeout": float(timeout),
            "retries": int(retries),
            "backoff": float(backoff),
            "concurrency": int(concurrency),
        }
        self._client = client
        self._goal = ""
        self._seed = 0
        self._budget: int | None = None
        self._turns: list[tuple[str, str]] = []
        self._stats: dict[str, int] = {}
        self._reset_stats()

    @property
    def info_keys(self) -> frozenset[str]:
        """``admissible_actions`` when they are shown (lean envs compute them only when asked)."""
        return frozenset({"admissible_actions"}) if self.show_actions else frozenset()

    def __repr__(self) -> str:
        return (
            f"OpenAIChatAgent(model={self.model!r}, base_url={without_userinfo(self.base_url)!r}, "
            f"temperature={self.temperature}, history={self.history})"
        )

    def _reset_stats(self) -> None:
        self._stats = {
            "requests": 0,
            "retries": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "unmatched_actions": 0,
        }

    @property
    def client(self) -> ChatClient:
        """The client in use (the running loop's shared one unless one was given)."""
        if self._client is None:
            return shared_client(self.base_url, **self._client_options)
        return self._client

    async def reset(
        self, goal: str, observation: str, info: Mapping[str, Any], *, seed: int, budget: int | None = None
    ) -> None:
        """Start an episode: remember the goal, the seed and whether the budget is shown."""
        self._goal, self._seed, self._budget = goal, int(seed), budget
        self._turns = []
        self._reset_stats()

    def messages(self, observation: str, info: Mapping[str, Any]) -> list[dict[str, str]]:
        """The chat messages for the current turn."""
        admissible = list(info.get("admissible_actions") or ())
        history = self._turns[-self.history :] if self.history else []
        turns_left = info.get("turns_left") if self._budget is not None else None
        return self.template.messages(
            self._goal,
            history,
            observation,
            admissible if self.show_actions else None,
            turns_left=turns_left,
            max_turns=self._budget if turns_left is not None else None,
        )

    async def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """Ask the model for the next command.

        Raises:
            AgentError: The server failed after every retry, or answered with no completion.
        """
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages(observation, info),
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if self.send_seed:
            payload["seed"] = (self._seed * 1_000_003 + len(self._turns)) % (2**31 - 1)
        result = await self.client.complete(payload)
        self._stats["requests"] += 1
        self._stats["retries"] += result.retries
        self._stats["prompt_tokens"] += result.prompt_tokens
        self._stats["completion_tokens"] += result.completion_tokens
        action, matched = extract_action(result.text, info.get("admissible_actions") or ())
        if not matched:
            self._stats["unmatched_actions"] += 1
        self._turns.append((observation, action))
        return action

    async def observe(self, observation: str, info: Mapping[str, Any], action: str) -> None:
        """A turn played for the agent (a probe's reference prefix or forced action): kept in its history."""
        self._turns.append((observation, action))

    def stats(self) -> dict[str, int]:
        """Requests, retries, token counts and unmatched actions of the current episode."""
        return dict(self._stats)
