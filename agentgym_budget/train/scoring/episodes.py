"""Rollouts of a scoring policy: groups played in lockstep, one scoring pass per turn; chain or tree groups.

Each turn, every running rollout of a step builds its prompt exactly as the ``score:`` agent does
(:func:`~agentgym_budget.agents.scoring.prompt.user_message`, the append-only
:class:`~agentgym_budget.agents.scoring.prompt.EpisodePrompt`) and all of them are scored in one call of
:func:`~agentgym_budget.agents.scoring.scorer.score`: rollouts at the same state (a group's first turn,
members that played alike) are scored once, and each reads only its prompt's new tokens. The command is
drawn from the policy with the rollout's seed (:func:`~agentgym_budget.agents.scoring.policy.choose`), and
the turn is kept for the update (:class:`ScoredTurn`): its candidates, the choice and its log-prob under
the policy that played it, and the hidden states entering the first trained block (the frozen blocks'
output, which the update does not recompute).

Groups, as in :mod:`agentgym_budget.train.rollouts`: **chain** (``G`` episodes of one task and budget from
its start) or **tree** (one trunk played to its end with its exact state saved before each turn, then
``G - 1`` branches from a drawn turn's restored state; the group is the trunk's continuation and the
branches). Every draw is seeded (:func:`~agentgym_budget.train.rollouts.rollout_seed`).

Example::

    groups = play_groups(scoring, sessions, [GroupSpec({"task": 0, "seed": 7}, 8, 7)], PlayOptions(capture=28))
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym_budget.agents.scoring.agent import ScoringModel, candidate_commands
from agentgym_budget.agents.scoring.policy import candidate_scores, choose, distribution
from agentgym_budget.agents.scoring.prompt import EpisodePrompt, next_prompt, user_message
from agentgym_budget.agents.scoring.scorer import PromptState, Scored, ScoreRequest, score
from agentgym_budget.integrations.session import EpisodeSession, SessionState
from agentgym_budget.train.rollouts import GroupSpec, check_groups, rollout_seed

__all__: list[str] = []


@dataclass(frozen=True)
class PlayOptions:
    """How rollouts choose and what they keep.

    Attributes:
        temperature: Softmax temperature over the candidates' scores.
        epsilon: Share of the policy spread uniformly over the candidates.
        normalise: How a candidate's token log-probs become its score.
        batch_size: Most candidates in one forward pass.
        capture: Keep the hidden states entering this block (``None``: keep none).
        digests: Record the environment state each turn acted from (GiGPO's anchor states: ``info["state_digest"]``
            and the turns left; the sessions must request ``state_digest``).
    """

    temperature: float = 1.0
    epsilon: float = 0.0
    normalise: str = "word"
    batch_size: int = 64
    capture: int | None = None
    digests: bool = False


@dataclass
class ScoredTurn:
    """One turn of a rollout, as the update needs it.

    Attributes:
        prompt_length: Tokens of the turn's prompt (a prefix of its segment's prompt).
        segment: Which prompt of the episode (a new one starts when a prompt is cut to fit the context).
        commands: The candidate commands.
        candidates: Their scored token ids.
        chosen: Index of the command played.
        logprob: Its log-prob under the policy that played it.
        hidden: Per candidate, the hidden states entering the first trained block (``None`` if not kept).
        reward: The turn's reward.
        state: Digest of the environment state the turn acted from (``""`` if not recorded).
    """

    prompt_length: int
    segment: int
    commands: tuple[str, ...]
    candidates: tuple[tuple[int, ...], ...]
    chosen: int
    logprob: float
    hidden: tuple[Any, ...] | None
    reward: float = 0.0
    state: str = ""


class EpisodeTokens:
    """An episode's prompt, its kept keys / values and hidden states, and its scored turns.

    Args:
        scoring: The model.
        goal: The task's goal (shown on the first turn; builds queries for placeholders).
    """

    def __init__(self, scoring: ScoringModel, goal: str) -> None:
        self.scoring, self.goal = scoring, goal
        self.prompt: EpisodePrompt | None = None
        self.state = PromptState()
        self.turns: list[ScoredTurn] = []
        self.segments: list[tuple[tuple[int, ...], Any]] = []
        self.played: str | None = None

    def request(self, observation: str, admissible: Sequence[str]) -> tuple[ScoreRequest, list[str]]:
        """The next turn's scoring request (after the command played last) and its candidate commands."""
        codec = self.scoring.codec
        commands = candidate_commands({"admissible_actions": list(admissible)}, self.goal)
        first = self.prompt is None
        text = user_message(observation, commands, goal=self.goal, first=first, scoring_format=codec.format)
        before = () if first else tuple(self.prompt.ids)
        self.prompt = next_prompt(self.prompt, codec, text, self.played, self.scoring.context)
        candidates = tuple(codec.command(c) for c in commands)
        self.prompt.fit(max(len(c) for c in candidates))
        ids = tuple(self.prompt.ids)
        if before and ids[: len(before)] != before:  # a new prompt (cut to fit, or no history): a new segment
            self.segments.append((self.state.ids, self.state.hidden))
            self.state = PromptState()
        return ScoreRequest(ids, candidates, self.state), commands

    def record(self, request: ScoreRequest, scored: Scored, commands: Sequence[str], chosen: int, logprob: float,
               reward: float = 0.0, state: str = "") -> ScoredTurn:  # fmt: skip
        """Keep a scored turn and the command played."""
        turn = ScoredTurn(len(request.ids), len(self.segments), tuple(commands), request.candidates, chosen,
                          logprob, scored.candidate_hidden, reward, state)  # fmt: skip
        self.turns.append(turn)
        self.played = commands[chosen]
        return turn

    def all_segments(self) -> list[tuple[tuple[int, ...], Any]]:
        """Every prompt of the episode with its kept hidden states (the last one is the current prompt)."""
        return [*self.segments, (self.state.ids, self.state.hidden)]

    def copy(self) -> EpisodeTokens:
        """An independent copy sharing the (read-only) tensors: a branch of a tree."""
        twin = copy.copy(self)
        twin.prompt = copy.deepcopy(self.prompt) if self.prompt is not None else None
        twin.state = PromptState(self.state.ids, self.state.layers, self.state.hidden)
        twin.turns, twin.segments = list(self.turns), list(self.segments)
        return twin


@dataclass
class ScoringRollout:
    """One rollout of a group.

    Attributes:
        session: The episode.
        tokens: Its prompt and scored turns.
        seed: Seed of its choices.
        group: Index of its group in the step.
        start_turn: Its first trained turn (0, or a tree group's branch turn).
        record: The episode's summary once it is over.
    """

    session: EpisodeSession
    tokens: EpisodeTokens
    seed: int
    group: int
    start_turn: int = 0
    record: dict[str, Any] | None = None
    checkpoints: list[tuple[SessionState, EpisodeTokens]] | None = field(default=None, repr=False)

    @property
    def trained_turns(self) -> list[ScoredTurn]:
        """The turns the update trains on."""
        return self.tokens.turns[self.start_turn :]


def _choose(rollout: ScoringRollout, scored: Scored, commands: list[str], options: PlayOptions) -> tuple[int, float]:
    scores = candidate_scores(scored.token_logprobs, commands, options.normalise)
    probabilities = distribution(scores, temperature=options.temperature, epsilon=options.epsilon)
    index = choose(probabilities, seed=rollout.seed, turn=len(rollout.tokens.turns))
    return index, math.log(probabilities[index])


def play(scoring: ScoringModel, rollouts: Sequence[ScoringRollout], options: PlayOptions) -> None:
    """Play ``rollouts`` to their ends in lockstep: one scoring call per turn for all the running ones."""
    running = [r for r in rollouts if not r.session.done]
    while running:
        requests = []
        for rollout in running:
            if rollout.checkpoints is not None:
                rollout.checkpoints.append((rollout.session.save(), rollout.tokens.copy()))
            last = rollout.session.last
            requests.append(rollout.tokens.request(last.observation, last.admissible_actions))
        batch = [request for request, _ in requests]
        results = score(
            scoring.model, batch, pad_id=scoring.pad_id, batch_size=options.batch_size, capture=options.capture
        )
        for rollout, (request, commands), scored in zip(running, requests, results, strict=True):
            index, logprob = _choose(rollout, scored, commands, options)
            digest = _digest(rollout) if options.digests else ""
            turn = rollout.session.step(commands[index])
            rollout.tokens.record(request, scored, commands, index, logprob, turn.reward, digest)
            if rollout.session.done:
                rollout.record = rollout.session.record()
        running = [r for r in running if not r.session.done]


def _digest(rollout: ScoringRollout) -> str:
    """The state a turn acts from, as GiGPO groups turns: the env's ``state_digest`` and the turns left (the
    session's config must request the ``state_digest`` info key)."""
    last = rollout.session.last
    return f"{last.info['state_digest']}/{last.turns_left}"


def _start(scoring: ScoringModel, session: EpisodeSession, spec: GroupSpec, group: int, member: int) -> ScoringRollout:
    first = session.reset(**dict(spec.fields))
    return ScoringRollout(session, EpisodeTokens(scoring, first.goal), rollout_seed(spec.seed, member), group)


def play_groups(
    scoring: ScoringModel,
    sessions: Sequence[EpisodeSession],
    specs: Sequence[GroupSpec],
    options: PlayOptions,
    *,
    mode: str = "chain",
) -> list[list[ScoringRollout]]:
    """Play every group of ``specs`` (``mode`` chain or tree) on ``sessions`` (one per rollout); rollouts by group.

    Raises:
        InvalidOptionError: Unknown ``mode``, or fewer sessions than rollouts.
    """
    check_groups(specs, sessions, mode)
    free = iter(sessions)
    if mode == "chain":
        groups = [[_start(scoring, next(free), s, g, m) for m in range(s.size)] for g, s in enumerate(specs)]
        play(scoring, [r for group in groups for r in group], options)
        return groups
    trunks = [_start(scoring, next(free), spec, g, 0) for g, spec in enumerate(specs)]
    for trunk in trunks:
        trunk.checkpoints = []
    play(scoring, trunks, options)
    groups = []
    for trunk, spec in zip(trunks, specs, strict=True):
        turn = rollout_seed(spec.seed, "turn") % len(trunk.checkpoints)
        state, tokens = trunk.checkpoints[turn]
        trunk.start_turn, trunk.checkpoints = turn, None
        branches = []
        for member in range(1, spec.size):
            session = next(free)
            session.restore(state)
            seed = rollout_seed(trunk.seed, "branch", turn, member)
            branches.append(ScoringRollout(session, tokens.copy(), seed, trunk.group, turn))
        groups.append([trunk, *branches])
    play(scoring, [r for group in groups for r in group[1:]], options)
    return groups
