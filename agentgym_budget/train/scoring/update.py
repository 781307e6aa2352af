"""The update of a scoring policy: the candidates' distribution recomputed through the trained blocks, PPO-clipped.

The rollouts of a pass (``update_rows`` of them, a group when that is the group size) are read in one tree
row (:class:`~agentgym_budget.agents.scoring.packing.TreeRow`): every prompt token once however many
rollouts share it (a group's first prompt, members that played alike, a tree's trunk), and each trained
turn's candidates attached where that turn's prompt ended (once per distinct state). With ``start > 0`` the row starts
at the first trained block from the hidden states the rollout kept, so the frozen blocks are not run
again. From the candidates' token log-probs come the policy's log-probs over the candidates
(:func:`policy_logprobs`: the same normalisation, temperature and epsilon as the rollout), and the loss of
one turn with advantage ``A`` is PPO's clipped surrogate

    ``-min(r A, clip(r, 1 - c, 1 + c) A)``,  ``r = pi(a) / pi_old(a)``,

plus ``beta`` times the exact KL divergence over the candidates to the reference policy. A rollout's turn
losses are averaged first, then the rollouts' (a long failed episode weighs as much as a short won one).

Example::

    batch = [TurnBatch(rollout, advantages) for rollout, advantages in ...]
    metrics = update(policy, optimizer, batch, settings, options)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentgym_budget.agents.scoring.packing import DecoderParts, TreeRow, packed_forward
from agentgym_budget.agents.scoring.policy import divisor
from agentgym_budget.train.scoring.episodes import ScoredTurn

__all__: list[str] = []


@dataclass(frozen=True)
class TrainedEpisode:
    """What the update reads of one rollout (or one demonstration, for SFT).

    Attributes:
        segments: Each prompt of the episode: its ids and the kept hidden states of its tokens (or ``None``).
        turns: The trained turns.
        advantages: One advantage per trained turn (ignored by SFT).
    """

    segments: Sequence[tuple[tuple[int, ...], Any]]
    turns: Sequence[ScoredTurn]
    advantages: Sequence[float] = ()


class _Trie:
    """Episodes' prompts and candidates as one :class:`~agentgym_budget.agents.scoring.packing.TreeRow`: a token
    shared by several episodes' prompts (same prefix) is read once, and so is a candidate at a shared state."""

    def __init__(self, keep_hidden: bool) -> None:
        self.ids: list[int] = []
        self.parents: list[int] = []
        self.hidden: list[Any] = []
        self.keep_hidden = keep_hidden
        self.nodes: dict[tuple[int, int], int] = {}
        self.blocks: dict[tuple[int, tuple[int, ...]], int] = {}
        self.spans: list[tuple[int, int]] = []

    def _token(self, parent: int, token: int, hidden: Any, shared: bool) -> int:
        key = (parent, token)
        if shared and key in self.nodes:
            return self.nodes[key]
        self.ids.append(token)
        self.parents.append(parent)
        if self.keep_hidden:
            self.hidden.append(hidden)
        if shared:
            self.nodes[key] = len(self.ids) - 1
        return len(self.ids) - 1

    def prompt(self, ids: Sequence[int], states: Any) -> list[int]:
        """Add a prompt; returns the query index of each of its tokens."""
        path, parent = [], -1
        for k, token in enumerate(ids):
            parent = self._token(parent, int(token), states[k] if self.keep_hidden else None, shared=True)
            path.append(parent)
        return path

    def candidate(self, parent: int, ids: Sequence[int], hidden: Any) -> int:
        """Add a candidate read after query token ``parent``; returns its block's index."""
        key = (parent, tuple(ids))
        if key not in self.blocks:
            begin = len(self.ids)
            previous = parent
            for k, token in enumerate(ids):
                previous = self._token(previous, int(token), hidden[k] if self.keep_hidden else None, shared=False)
            self.blocks[key] = len(self.spans)
            self.spans.append((begin, len(self.ids)))
        return self.blocks[key]

    def row(self) -> tuple[TreeRow, Any]:
        import torch

        hidden = torch.stack(self.hidden) if self.keep_hidden else None
        return TreeRow(0, self.ids, self.parents, self.spans), hidden


def _tree(episodes: Sequence[TrainedEpisode], start: int) -> tuple[TreeRow, Any, list[list[list[int]]]]:
    """One tree row of ``episodes`` and, per episode, per trained turn, the block index of each candidate."""
    trie = _Trie(keep_hidden=start > 0)
    blocks = []
    for episode in episodes:
        paths = [trie.prompt(ids, states) for ids, states in episode.segments]
        per_turn = []
        for turn in episode.turns:
            parent = paths[turn.segment][turn.prompt_length - 1]
            hidden = turn.hidden or [None] * len(turn.candidates)
            per_turn.append([trie.candidate(parent, c, h) for c, h in zip(turn.candidates, hidden, strict=True)])
        blocks.append(per_turn)
    row, hidden = trie.row()
    return row, hidden, blocks


def turn_logprobs(token_logprobs: Sequence[Any], turn: ScoredTurn, *, normalise: str, temperature: float,
                  epsilon: float) -> Any:  # fmt: skip
    """The policy's log-probs over a turn's candidates from their token log-probs (differentiable)."""
    import torch

    scores = torch.stack(
        [values.sum() / divisor(command, len(values), normalise)
         for values, command in zip(token_logprobs, turn.commands, strict=True)]
    )  # fmt: skip
    logprobs = torch.log_softmax(scores / temperature, dim=-1)
    if epsilon:
        uniform = torch.full_like(logprobs, math.log(epsilon / len(turn.commands)))
        logprobs = torch.logaddexp(logprobs + math.log1p(-epsilon), uniform)
    return logprobs


def policy_logprobs(
    parts: DecoderParts,
    episodes: Sequence[TrainedEpisode],
    *,
    start: int,
    pad_id: int,
    normalise: str,
    temperature: float,
    epsilon: float,
) -> list[list[Any]]:
    """Per episode, per trained turn (in order): the policy's log-probs over the candidates, the episodes read in
    one tree row (their shared prompt prefixes and shared states once)."""
    row, hidden, blocks = _tree(episodes, start)
    result = packed_forward(parts, [row], pad_id=pad_id, hidden=None if hidden is None else [hidden], start=start)
    values = result.block_logprobs[0]
    return [
        [turn_logprobs([values[b] for b in indices], turn, normalise=normalise, temperature=temperature,
                       epsilon=epsilon)
         for turn, indices in zip(episode.turns, per_turn, strict=True)]
        for episode, per_turn in zip(episodes, blocks, strict=True)
    ]  # fmt: skip


def _clipped(logprobs: Any, turn: ScoredTurn, advantage: float, clip: float) -> tuple[Any, bool]:
    import torch

    ratio = torch.exp(logprobs[turn.chosen] - turn.logprob)
    clipped = torch.clamp(ratio, 1 - clip, 1 + clip)
    loss = -torch.minimum(ratio * advantage, clipped * advantage)
    return loss, bool(abs(float(ratio.detach()) - 1) > clip)


def ppo_update(
    policy: Any,
    optimizer: Any,
    episodes: Sequence[TrainedEpisode],
    *,
    settings: Any,
    temperature: float,
    beta: float,
    pad_id: int,
) -> dict[str, float]:
    """``settings.epochs`` optimiser steps on ``episodes`` (module docstring); returns the step's metrics.

    ``policy`` is a :class:`~agentgym_budget.train.scoring.weights.TrainedPolicy`, ``settings`` a
    :class:`~agentgym_budget.train.scoring.settings.ScoreSettings`.
    """
    import torch

    kwargs = {"start": policy.start, "pad_id": pad_id, "normalise": settings.normalise,
              "temperature": temperature, "epsilon": settings.epsilon}  # fmt: skip
    episodes = [e for e in episodes if e.turns]
    reference: list[list[Any]] = []
    if beta > 0:
        with torch.no_grad(), policy.reference_parts() as parts:
            for first in range(0, len(episodes), settings.update_rows):
                reference += policy_logprobs(parts, episodes[first : first + settings.update_rows], **kwargs)
    metrics = {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0, "entropy": 0.0}
    turns = sum(len(e.turns) for e in episodes)
    for _ in range(settings.epochs):
        optimizer.zero_grad(set_to_none=True)
        for first in range(0, len(episodes), settings.update_rows):
            chunk = episodes[first : first + settings.update_rows]
            logprobs = policy_logprobs(policy.parts, chunk, **kwargs)
            total = 0
            for index, (episode, per_turn) in enumerate(zip(chunk, logprobs, strict=True)):
                losses = []
                for turn, lp, advantage in zip(episode.turns, per_turn, episode.advantages, strict=True):
                    loss, clipped = _clipped(lp, turn, advantage, settings.clip)
                    if beta > 0:
                        kl = (lp.exp() * (lp - reference[first + index][len(losses)])).sum()
                        loss = loss + beta * kl
                        metrics["kl"] += float(kl.detach()) / turns / settings.epochs
                    metrics["clip_fraction"] += clipped / turns / settings.epochs
                    metrics["entropy"] += float(-(lp.exp() * lp).sum().detach()) / turns / settings.epochs
                    losses.append(loss)
                total = total + torch.stack(losses).mean() / len(episodes)
            total.backward()
            metrics["loss"] += float(total.detach()) / settings.epochs
        optimizer.step()
    return metrics
