"""A scoring base worth training: SFT as cross-entropy over the candidates on a scripted agent's won episodes.

:func:`demonstrations` plays ``sft_agent`` (by default the noisy expert that recovers) on the training
tasks and keeps, per turn, the observation, the admissible actions, the command and whether it was the
expert's action. :func:`prepare` reads every kept episode once through the frozen model, exactly as the
``score:`` agent would read it (its prompts, its candidates), keeping the hidden states entering the
first trained block. Each SFT step then draws ``batch_size`` episodes (seeded) and minimises
``-log pi(command)`` over their turns, ``pi`` the softmax over the candidates' normalised scores at
temperature 1: one pass through the trained blocks per step. With ``mask_errors`` the demonstrator's
errors (commands that were not the expert's action) are left out of the loss but stay in the prompts,
so the policy learns the recovery, never the error.

The learning rate warms up over the first 5% of the steps, then decays with a cosine to 0.

Example::

    episodes = demonstrations(config, "noisy-expert-recover:eps=0.2", tasks=range(100), episodes_per_task=2, budget=9)
    prepared = prepare(scoring, episodes, capture=policy.capture, batch_size=64, mask_errors=True)
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from typing import Any

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.base import required_info_keys
from agentgym_budget.agents.scoring.agent import ScoringModel
from agentgym_budget.agents.scoring.scorer import score
from agentgym_budget.integrations.session import EpisodeSession
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.runner.seeds import episode_seed
from agentgym_budget.train.rollouts import rollout_seed
from agentgym_budget.train.scoring.episodes import EpisodeTokens
from agentgym_budget.train.scoring.update import TrainedEpisode, policy_logprobs
from agentgym_budget.train.trajectories import agent_info

__all__: list[str] = []


def demonstrations(
    config: SessionConfig,
    agent: str,
    *,
    tasks: Sequence[Any],
    episodes_per_task: int,
    budget: int,
    seed: int,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Episodes of the synchronous agent ``agent``: per episode its task, seed, goal, ``won`` and turns
    (``observation``, ``admissible``, ``command``, ``off_expert``). ``progress`` draws a bar of episodes played
    (a game the environment has not built yet is generated when its first episode starts)."""
    from tqdm import tqdm

    spec = parse_agent(agent)
    keys = tuple(sorted({*config.info_keys, *required_info_keys(spec.build()), "expert_action"}))
    session = EpisodeSession(dataclasses.replace(config, info_keys=keys, budgets=None))
    episodes = []
    bar = tqdm(total=len(tasks) * episodes_per_task, desc="demonstrations", unit="episode", disable=not progress)
    try:
        for task in tasks:
            for sample in range(episodes_per_task):
                bar.update(1)
                episode = episode_seed(seed, str(task), sample)
                turn = session.reset(task=task, seed=episode, max_turns=budget)
                player = spec.build()
                player.reset(turn.goal, turn.observation, agent_info(turn), seed=episode, budget=None)
                turns = []
                while not turn.done:
                    command = player.act(turn.observation, agent_info(turn))
                    expert = turn.info.get("expert_action")
                    turns.append({"observation": turn.observation, "admissible": list(turn.admissible_actions),
                                  "command": command, "off_expert": expert is not None and command != expert})  # fmt: skip
                    turn = session.step(command)
                episodes.append({"task": task, "seed": episode, "goal": session.last.goal,
                                 "won": session.last.won, "turns": turns})  # fmt: skip
    finally:
        bar.close()
        session.close()
    return episodes


def prepare(
    scoring: ScoringModel,
    episodes: Sequence[dict[str, Any]],
    *,
    capture: int | None,
    batch_size: int,
    mask_errors: bool,
    lockstep: int = 16,
    progress: bool = False,
) -> list[TrainedEpisode]:
    """The won ``episodes`` read through the frozen model (module docstring): one :class:`TrainedEpisode` each, its
    trained turns those whose command is a candidate (and, with ``mask_errors``, the expert's). ``progress`` draws
    a bar of the episodes read."""
    from tqdm import tqdm

    won = [e for e in episodes if e["won"]]
    prepared = []
    bar = tqdm(total=len(won), desc="reading demonstrations", unit="episode", disable=not progress)
    for first in range(0, len(won), lockstep):
        chunk = won[first : first + lockstep]
        tokens = [EpisodeTokens(scoring, e["goal"]) for e in chunk]
        for number in range(max(len(e["turns"]) for e in chunk)):
            live = [(t, e["turns"][number]) for t, e in zip(tokens, chunk, strict=True) if number < len(e["turns"])]
            requests = [t.request(turn["observation"], turn["admissible"]) for t, turn in live]
            batch = [request for request, _ in requests]
            results = score(scoring.model, batch, pad_id=scoring.pad_id, batch_size=batch_size, capture=capture)
            for (t, turn), (request, commands), scored in zip(live, requests, results, strict=True):
                chosen = commands.index(turn["command"]) if turn["command"] in commands else -1
                t.record(request, scored, commands, max(chosen, 0), 0.0)
                t.played = turn["command"]
                t.turns[-1].state = "skip" if chosen < 0 or (mask_errors and turn["off_expert"]) else ""
        for t in tokens:
            trained = [turn for turn in t.turns if turn.state != "skip"]
            prepared.append(TrainedEpisode(t.all_segments(), trained))
        bar.update(len(chunk))
    bar.close()
    return prepared


def learning_rate(step: int, steps: int, peak: float) -> float:
    """The SFT learning rate at ``step`` (0-based): linear warm-up over 5% of the steps, then a cosine to 0.

    Example:
        >>> [round(learning_rate(s, 20, 1.0), 3) for s in (0, 1, 10, 19)]
        [1.0, 1.0, 0.541, 0.007]
    """
    warm = max(1, math.ceil(0.05 * steps))
    if step < warm:
        return peak * (step + 1) / warm
    progress = (step - warm) / max(1, steps - warm)
    return peak * 0.5 * (1 + math.cos(math.pi * progress))


def sft_step(policy: Any, optimizer: Any, prepared: Sequence[TrainedEpisode], *, step: int, steps: int, peak: float,
             batch_size: int, seed: int, normalise: str, pad_id: int, rows: int) -> dict[str, float]:  # fmt: skip
    """One SFT step (module docstring); returns its ``loss`` and the share of turns the policy ranks the command first."""
    import torch

    draw = random.Random(rollout_seed(seed, "sft", step))
    batch = [e for e in draw.sample(list(prepared), min(batch_size, len(prepared))) if e.turns]
    for group in optimizer.param_groups:
        group["lr"] = learning_rate(step, steps, peak)
    optimizer.zero_grad(set_to_none=True)
    total_loss, agree, turns = 0.0, 0, sum(len(e.turns) for e in batch)
    for first in range(0, len(batch), rows):
        chunk = batch[first : first + rows]
        logprobs = policy_logprobs(policy.parts, chunk, start=policy.start, pad_id=pad_id, normalise=normalise,
                                   temperature=1.0, epsilon=0.0)  # fmt: skip
        losses = []
        for episode, per_turn in zip(chunk, logprobs, strict=True):
            for turn, lp in zip(episode.turns, per_turn, strict=True):
                losses.append(-lp[turn.chosen])
                agree += int(int(torch.argmax(lp)) == turn.chosen)
        loss = torch.stack(losses).sum() / max(1, turns)
        loss.backward()
        total_loss += float(loss.detach())
    optimizer.step()
    return {"loss": total_loss, "accuracy": agree / max(1, turns), "learning_rate": learning_rate(step, steps, peak)}
