"""verifiers route: verifiers' built-in ``openenv`` taskset plays a ``serve`` server (extra ``verifiers``).

No verifiers-specific environment code is needed: verifiers' ``OpenEnvTaskset`` makes one task per
set of reset arguments, and its ``OpenEnvEnv`` sends the model ``{"observation": ..., "action_schema":
...}`` each turn, turns the model's raw reply into ``{"command": reply}`` (the action has one required
field) and sums the rewards into the ``openenv_reward`` reward. The server parses the reply into one
command (one turn), keeps the budget, hides ``max_turns`` / ``turns_left`` when the budget is hidden
and ends the exchange with ``done`` (terminated or truncated).

From the command line (verifiers' harnesses run through ``uv``)::

    agentgym-budget serve TextWorld-CoinCollector-v0 --env-args level=5 --budget 20 --port 8000 &
    eval openenv --env.taskset.base_url http://127.0.0.1:8000 \\
        --env.taskset.resets '[{"seed": 0}, {"seed": 1, "max_turns": 10}]' ...

In Python, :func:`openenv_taskset` builds the taskset with validated episode fields and
:func:`play` runs verifiers' own ``OpenEnvEnv.run`` in this process with any agentgym-budget agent
as the player (no harness, no ``uv``), which is how the suite tests the route.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from agentgym_budget.agents.base import episode_stats
from agentgym_budget.dependencies import require
from agentgym_budget.integrations.session_config import episode_fields

__all__ = ["PlayedEpisode", "openenv_taskset", "play"]

_FEATURE = "The verifiers route"

logger = logging.getLogger(__name__)


def _openenv_tasksets() -> Any:
    require("verifiers", extra="verifiers", feature=_FEATURE, min_python=(3, 11))
    return require("verifiers.v1.tasksets.openenv", extra="verifiers", feature=_FEATURE, package="verifiers")


def openenv_taskset(base_url: str, episodes: Sequence[Mapping[str, Any]] = ({},)) -> Any:
    """verifiers' ``OpenEnvTaskset`` over a ``serve`` server: one task per episode (validated fields).

    Raises:
        InvalidOptionError: An episode has unknown or mistyped fields (see ``episode_fields``).
        MissingDependencyError: ``verifiers`` is not installed (extra ``verifiers``).
    """
    resets = [episode_fields(dict(episode)) for episode in episodes]
    tasksets = _openenv_tasksets()
    return tasksets.OpenEnvTaskset(tasksets.OpenEnvConfig(id="openenv", base_url=base_url, resets=resets))


@dataclass
class PlayedEpisode:
    """One task played through verifiers' ``OpenEnvEnv``.

    Attributes:
        reset: The task's reset arguments.
        rewards: Rewards verifiers recorded (``openenv_reward`` is the episode's return).
        stop: Why the exchange stopped early, if it did (verifiers' stop condition).
        turns: Model replies sent.
        replies: The replies, in order.
        last_observation: The episode's final observation (the server's fields): the one after the last
            step, which verifiers never shows the player; :func:`play` reads it by replaying the
            replies on a fresh session, checked against every observation the player saw. If the
            replay diverges (an episode with neither ``seed`` nor ``task``), it stays the last one seen.
        observations: Every observation the player saw, in order.
        agent_stats: ``agent.stats()`` after the episode.
    """

    reset: dict[str, Any]
    rewards: dict[str, float] = field(default_factory=dict)
    stop: str | None = None
    turns: int = 0
    replies: list[str] = field(default_factory=list)
    last_observation: dict[str, Any] = field(default_factory=dict)
    observations: list[dict[str, Any]] = field(default_factory=list)
    agent_stats: dict[str, Any] = field(default_factory=dict)


class _Trace:
    """The part of a verifiers trace that ``OpenEnvEnv.run`` uses: rewards and the stop condition."""

    def __init__(self, episode: PlayedEpisode) -> None:
        self._episode = episode

    def record_reward(self, name: str, value: float, weight: float = 1.0) -> None:
        self._episode.rewards[name] = float(value)

    def stop(self, condition: str) -> None:
        self._episode.stop = condition


class _Interaction:
    def __init__(self, player: AgentPlayer, episode: PlayedEpisode) -> None:
        self._player = player
        self._episode = episode
        self.trace = _Trace(episode)

    async def turn(self, message: str | None = None) -> Any:
        segment, assistant_message = self._player.segment_types()
        payload = json.loads(message or "{}")
        observation = dict(payload.get("observation") or {})
        self._episode.last_observation = observation
        self._episode.observations.append(observation)
        reply = await self._player.reply(observation, first=self._episode.turns == 0)
        self._episode.turns += 1
        self._episode.replies.append(reply)
        return segment(messages=[assistant_message(content=reply)])

    async def __aenter__(self) -> _Interaction:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


class AgentPlayer:
    """An agentgym-budget agent as verifiers' player (``agents.player`` of ``OpenEnvEnv.run``).

    Each turn it reads the observation fields from verifiers' payload, calls the agent (``reset``
    on the first turn, then ``act``) with the observation ``text`` and an ``info`` built from the
    fields (budget keys only when the server shows the budget) and replies ``Action: <command>``.

    Args:
        agent: A sync or async agentgym-budget agent.
        seed: Seed given to the agent at each episode.
    """

    def __init__(self, agent: Any, *, seed: int = 0) -> None:
        self.agent = agent
        self.seed = seed
        self.episode: PlayedEpisode | None = None

    @staticmethod
    def segment_types() -> tuple[Any, Any]:
        vf = require("verifiers.v1", extra="verifiers", feature=_FEATURE, package="verifiers")
        from verifiers.v1.types import AssistantMessage

        return vf.Segment, AssistantMessage

    def interaction(self, task: Any) -> _Interaction:
        self.episode = PlayedEpisode(reset=dict(task.data.reset))
        return _Interaction(self, self.episode)

    async def reply(self, observation: Mapping[str, Any], *, first: bool) -> str:
        info = {
            key: observation.get(key)
            for key in ("admissible_actions", "won", "lost", "progress", "task_id", "goal", "turn")
        }
        if observation.get("max_turns") is not None:
            info.update(max_turns=observation["max_turns"], turns_left=observation["turns_left"])
        info.update(observation.get("info") or {})
        text = str(observation.get("text", ""))
        if first:
            result = self.agent.reset(info.get("goal") or "", text, info, seed=self.seed, budget=info.get("max_turns"))
            if hasattr(result, "__await__"):
                await result
        command = self.agent.act(text, info)
        if hasattr(command, "__await__"):
            command = await command
        return f"Action: {command}"


def _final_observation(base_url: str, episode: PlayedEpisode) -> dict[str, Any] | None:
    """Replay ``episode`` on a fresh session as verifiers played it; its final observation, or ``None`` if it diverges."""
    from agentgym_budget.integrations.openenv import RemoteSession

    with RemoteSession(base_url) as session:
        observation = session.reset(**episode.reset)
        for seen, reply in zip(episode.observations, episode.replies, strict=False):
            if observation.text != seen.get("text"):
                logger.warning(
                    "verifiers play: the replay of %s diverged; last_observation is the last one seen.", episode.reset
                )
                return None
            if observation.done or not reply.strip():  # verifiers stops there without stepping
                break
            observation = session.step(reply.strip())
        fields = observation.model_dump()
    return (
        {key: value for key, value in fields.items() if key in episode.observations[-1]}
        if episode.observations
        else fields
    )


async def play(
    base_url: str, episodes: Sequence[Mapping[str, Any]], agent: Any, *, seed: int = 0
) -> list[PlayedEpisode]:
    """Play every episode with verifiers' own ``OpenEnvEnv.run`` against ``base_url``, ``agent`` as the player.

    Episodes run one after the other (each opens its own server session).
    """
    tasksets = _openenv_tasksets()
    taskset = openenv_taskset(base_url, episodes)
    env = tasksets.OpenEnvEnv(tasksets.OpenEnvEnvConfig(taskset=taskset.config))
    player = AgentPlayer(agent, seed=seed)
    played = []
    for task in taskset.load():
        await env.run(task, SimpleNamespace(player=player))
        assert player.episode is not None
        final = await asyncio.to_thread(_final_observation, base_url, player.episode)
        if final is not None:
            player.episode.last_observation = final
        player.episode.agent_stats = episode_stats(agent)
        played.append(player.episode)
    return played
