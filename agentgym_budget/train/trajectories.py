"""Supervised data: episodes of the suite's scripted agents as TRL tool-calling conversations.

:func:`agent_conversations` plays an agent (``expert``, ``noisy-expert-recover:eps=0.3``, any
registered synchronous agent) through the same :class:`~agentgym_budget.integrations.trl.BudgetToolEnv`
that GRPO trains with, so a conversation holds exactly the text a trained model is shown:

* ``system``: the system prompt of the rows (:data:`~agentgym_budget.chat.tool.DEFAULT_SYSTEM_PROMPT`);
* ``user``: the episode's first text (goal, first observation, admissible actions, the budget when shown);
* per turn an ``assistant`` message calling ``act(command=...)`` and the ``tool`` message with the env's answer;
* a last ``assistant`` message :data:`STOP_MESSAGE` after the ``[Episode over: ...]`` answer, so a model
  learns to stop calling the tool when the episode is over (TRL has no done signal).

Only won episodes are kept by default (``keep="won"``): imitation of a noisy expert's *successful*
episodes, errors and recoveries included. Each record lists its ``off_expert_turns``: the turns whose
command was not the expert's action in that state (``info["expert_action"]``, re-planned every turn).
:attr:`Trajectories.off_expert_turns` gives them per kept conversation, so SFT can leave those turns
out of the loss (:func:`~agentgym_budget.train.sft.run_sft` ``masked_turns``): the model then sees the
states an error leads to and learns the recovery, but never the error itself.

Example:
    >>> from agentgym_budget.integrations.session_config import SessionConfig
    >>> config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=2")
    >>> data = agent_conversations(config, "expert", tasks=[0], episodes_per_task=1, budget=5)
    >>> [m["role"] for m in data.conversations[0]]
    ['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']
    >>> data.conversations[0][-1]["content"] == STOP_MESSAGE, data.records[0]["won"], data.records[0]["turns"]
    (True, True, 2)
    >>> data.off_expert_turns
    [[]]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.base import episode_stats, is_async_agent, required_info_keys
from agentgym_budget.chat.tool import DEFAULT_SYSTEM_PROMPT, tool_call
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.session import EpisodeTurn
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.trl import BudgetToolEnv
from agentgym_budget.runner.env_args import expert_recovers
from agentgym_budget.runner.seeds import episode_seed
from agentgym_budget.wrappers.turn_budget import validate_budget

__all__ = ["DEMONSTRATIONS", "Trajectories", "agent_conversations"]

STOP_MESSAGE = "The episode is over."
"""The assistant's last message, after the tool answered that the episode ended."""

KEEP = ("won", "all")
"""Which episodes :func:`agent_conversations` keeps."""

DEMONSTRATIONS: dict[str, tuple[str, bool]] = {
    "masked": ("noisy-expert-recover:eps=0.2", True),
    "clean": ("expert", False),
    "noisy": ("noisy-expert-recover:eps=0.2", False),
}
"""Named SFT demonstrations: ``name -> (sft_agent, sft_mask_errors)``.

``masked`` (default): the recovering noisy expert's won episodes with its injected errors left out of
the loss, so the base sees the states errors lead to and learns to recover, never to err. ``clean``:
the expert's own wins (no error, so no recovery either; on Coin Collector level 3 that tiny base
answered with format debris after its first slip and won 0.03-0.06 at every budget). ``noisy``: the
noisy expert's wins with its errors trained on (the default before masking)."""


def default_demonstrations(env_id: str) -> str:
    """The demonstrations ``train`` uses on ``env_id`` when none are named: ``masked``, or ``clean`` where the
    expert cannot recover from an error (the TWX ids: their expert is the engine's gold path from the start,
    so the noisy expert's wins would be rare, and whatever follows its first error unsupervised).

    Example:
        >>> default_demonstrations("TextWorld-CoinCollector-v0"), default_demonstrations("TWX-CoinCollector-v0")
        ('masked', 'clean')
    """
    return "masked" if expert_recovers(env_id) else "clean"


@dataclass
class Trajectories:
    """Conversations for supervised fine-tuning and a record of every episode played.

    Attributes:
        conversations: The kept episodes as chat messages (see the module docstring).
        records: One summary per episode played (kept or not): ``task``, ``seed``, ``won``, ``turns``,
            ``budget``, ``kept``, ``commands``, ``off_expert_turns`` (indices of the commands that were not the
            expert's action) and the agent's ``stats`` (e.g. its ``mistakes``).
    """

    conversations: list[list[dict[str, Any]]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def win_rate(self) -> float:
        """Share of the episodes played that were won."""
        return sum(r["won"] for r in self.records) / len(self.records) if self.records else 0.0

    @property
    def off_expert_turns(self) -> list[list[int]]:
        """Per conversation, the indices of its tool-calling turns whose command was not the expert's action
        (empty for records written before the field existed)."""
        return [list(r.get("off_expert_turns", ())) for r in self.records if r.get("kept", True)]


def agent_info(turn: EpisodeTurn) -> dict[str, Any]:
    """The ``info`` an evaluation agent expects, rebuilt from a session turn (budget keys left out: hidden).

    Example:
        >>> turn = EpisodeTurn("", "A hall.", 0.0, 0.0, False, False, 0, 5, 5, False, False, False, 0.0,
        ...                    ("go east",), "coin-1", "Take the coin.", info={"expert_action": "go east"})
        >>> agent_info(turn)["expert_action"], agent_info(turn)["admissible_actions"]
        ('go east', ['go east'])
    """
    return {
        "admissible_actions": list(turn.admissible_actions),
        "goal": turn.goal,
        "task_id": turn.task_id,
        "won": turn.won,
        "lost": turn.lost,
        "progress": turn.progress,
        "turn": turn.turn,
        **dict(turn.info),
    }


def agent_conversations(
    config: SessionConfig,
    agent: str,
    *,
    tasks: Sequence[str | int],
    episodes_per_task: int,
    budget: int,
    seed: int = 0,
    keep: str = "won",
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    progress: bool = False,
) -> Trajectories:
    """Play ``agent`` on ``tasks`` and return the episodes as tool-calling conversations.

    Args:
        config: What the model will be trained on (its ``show_budget`` / ``show_actions`` shape the text).
        agent: A synchronous agent name (``parse_agent`` syntax), e.g. ``"noisy-expert-recover:eps=0.3"``.
        tasks: Task ids or indices of ``config``'s split.
        episodes_per_task: Episodes per task; episode ``s`` of task ``t`` is seeded with
            :func:`~agentgym_budget.runner.seeds.episode_seed` ``(seed, str(t), s)`` (agent and budget draw).
        budget: Turn budget of every episode.
        seed: Seed of the data.
        keep: ``"won"`` (default) or ``"all"`` episodes become conversations.
        system_prompt: The system message.
        progress: Show a progress bar (episodes played).

    Raises:
        InvalidOptionError: An async agent, a bad ``keep`` or ``episodes_per_task``.
        InvalidBudgetError: A bad ``budget``.
    """
    spec = parse_agent(agent)
    if is_async_agent(spec.build()):
        raise InvalidOptionError(f"agent_conversations plays scripted (synchronous) agents; {spec.name} is async.")
    if keep not in KEEP:
        raise InvalidOptionError(f"keep must be one of {', '.join(KEEP)}, got {keep!r}.")
    if isinstance(episodes_per_task, bool) or not isinstance(episodes_per_task, int) or episodes_per_task < 1:
        raise InvalidOptionError(f"episodes_per_task must be a positive integer, got {episodes_per_task!r}.")
    budget = validate_budget(budget, "for agent_conversations(budget=...)")
    keys = tuple(sorted({*config.info_keys, *required_info_keys(spec.build())}))
    env = BudgetToolEnv(dataclasses.replace(config, info_keys=keys))
    data = Trajectories()
    bar = tqdm(total=len(tasks) * episodes_per_task, desc="demonstrations", unit="episode", disable=not progress)
    try:
        for task in tasks:
            for sample in range(episodes_per_task):
                bar.update(1)
                episode = episode_seed(seed, str(task), sample)
                messages, record = _play(env, spec, task, episode, budget, system_prompt)
                record["kept"] = keep == "all" or record["won"]
                data.records.append(record)
                if record["kept"]:
                    data.conversations.append(messages)
    finally:
        bar.close()
        env.session.close()
    return data


def _play(
    env: BudgetToolEnv, spec: Any, task: str | int, seed: int, budget: int, system_prompt: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    agent = spec.build()
    text = env.reset(task=task, seed=seed, max_turns=budget)
    turn = env.session.last
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": text},
    ]
    agent.reset(turn.goal, turn.observation, agent_info(turn), seed=seed, budget=None)
    off_expert: list[int] = []
    calls = 0
    while not turn.done:
        command = agent.act(turn.observation, agent_info(turn))
        expert = turn.info.get("expert_action")
        if expert is not None and command != expert:
            off_expert.append(calls)
        calls += 1
        messages.append({"role": "assistant", "content": "", "tool_calls": [tool_call("act", command=command)]})
        messages.append({"role": "tool", "name": "act", "content": env.act(command)})
        turn = env.session.last
    messages.append({"role": "assistant", "content": STOP_MESSAGE})
    record = env.record
    return messages, {
        "task": task,
        "task_id": record["task_id"],
        "seed": seed,
        "budget": record["budget"],
        "won": record["won"],
        "turns": record["turns"],
        "commands": record["commands"],
        "off_expert_turns": off_expert,
        "stats": episode_stats(agent),
    }
