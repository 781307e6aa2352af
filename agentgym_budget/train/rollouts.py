"""Rollouts the package plays itself for GRPO: batched, key/value-cached generation; chain or tree groups.

TRL's own multi-turn loop (``--generation trl``, the default of chain rollouts) generates every turn of
every rollout from the whole conversation again. These rollouts play the same conversations (token ids
built by :class:`~agentgym_budget.chat.format.ConversationTokens`, replies read as the ``hf:PATH`` agent
reads them: every ``act`` call is a turn, a reply without one is one turn of its text) with the
``hf:PATH`` agent's generator (:func:`~agentgym_budget.agents.hf_generation.generate`): the replies of all
running rollouts of a step in one batch, each rollout keeping the keys / values of its conversation so
far, so a reply reads only the tokens added since the last one.

Groups (the rollouts GRPO compares):

* **chain**: ``G`` independent episodes of one task and budget from its start (``start_turn`` 0).
* **tree**: one episode (the trunk) is played to its end while its state is saved before each reply
  (:meth:`~agentgym_budget.integrations.session.EpisodeSession.save`: the env stack's exact snapshot); a
  branch turn ``t`` is drawn uniformly among its replies; ``G - 1`` branches restore the state of turn
  ``t`` and play on with their own samples. The group is the trunk's continuation from ``t`` and the
  branches: they share the environment state and the conversation up to ``t`` exactly (the group's
  prompt), so GRPO's advantage compares continuations of one state (step-level credit from outcome
  reward, as in Tree-GRPO, with the real environment state restored).

Every generation is seeded (:func:`rollout_seed`): the same step of the same run plays the same rollouts.

Example::

    groups = play_groups(local, pool, [GroupSpec(fields={"task": 0, "seed": 7}, size=4, seed=7)], Sampling())
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym_budget.agents.hf_generation import GenerationRequest, PrefixCache, Sampling, generate, row_seed
from agentgym_budget.chat.format import ConversationTokens
from agentgym_budget.chat.tool import act_commands
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.session import EpisodeSession, SessionState

__all__ = ["ROLLOUT_MODES", "GroupSpec", "Rollout", "play_groups", "rollout_seed"]

ROLLOUT_MODES = ("chain", "tree")
"""How a GRPO group is played (see the module docstring)."""


def rollout_seed(*parts: Any) -> int:
    """A 63-bit seed from ``parts`` (stable across runs and platforms).

    Example:
        >>> rollout_seed(0, 1, "branch") == rollout_seed(0, 1, "branch") != rollout_seed(0, 2, "branch")
        True
    """
    digest = hashlib.sha256("|".join(map(str, ("rollout", *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True)
class GroupSpec:
    """One GRPO group to play.

    Attributes:
        fields: The episode fields of its start (``task``, ``seed``, ``max_turns``...; a dataset row).
        size: Rollouts in the group (``num_generations``).
        seed: Seed of its generations (and of its branch turn).
    """

    fields: Mapping[str, Any]
    size: int
    seed: int


@dataclass
class _Checkpoint:
    state: SessionState
    ids: tuple[int, ...]
    mask_length: int
    turn: int


@dataclass
class Rollout:
    """One rollout: the episode it plays, its conversation and which of its tokens the model wrote.

    Attributes:
        session: The episode.
        conversation: Its token ids from the system prompt on.
        seed: Seed of its generations (reply ``k`` samples with ``row_seed(seed, k)``).
        group: Index of its group in the step.
        start_turn: The turn its own part starts at (0, or a tree group's branch turn).
        prompt_length: Leading ids of ``conversation`` shared by its group (the GRPO prompt).
        model_mask: One flag per id after the prompt: 1 for the model's tokens, 0 for the tool's answers.
        replies: Replies generated so far.
        generated_tokens: Tokens it generated (a tree trunk's before its branch turn included).
        record: The episode's summary once it is over (:meth:`EpisodeSession.record`; the session may be reused).
    """

    session: EpisodeSession
    conversation: ConversationTokens
    seed: int
    group: int
    start_turn: int = 0
    prompt_length: int = 0
    model_mask: list[int] = field(default_factory=list)
    replies: int = 0
    generated_tokens: int = 0
    record: dict[str, Any] | None = None
    cache: PrefixCache = field(default_factory=PrefixCache, repr=False)
    checkpoints: list[_Checkpoint] | None = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        """Its episode is over."""
        return self.session.done

    @property
    def prompt_ids(self) -> list[int]:
        """The group's shared prefix."""
        return self.conversation.ids[: self.prompt_length]

    @property
    def completion_ids(self) -> list[int]:
        """Its own tokens after the prefix (replies and tool answers; see :attr:`model_mask`)."""
        return self.conversation.ids[self.prompt_length :]

    def save_checkpoint(self) -> None:
        """Record the exact state before the next reply (a tree's trunk does, so branches can start there)."""
        turn = self.session.last.turn if self.session.last is not None else 0
        checkpoint = _Checkpoint(self.session.save(), tuple(self.conversation.ids), len(self.model_mask), turn)
        self.checkpoints.append(checkpoint)

    def request(self, sampling: Sampling) -> GenerationRequest:
        """The next reply to generate."""
        return GenerationRequest(tuple(self.conversation.ids), row_seed(self.seed, self.replies), sampling, self.cache)

    def receive(self, reply_ids: Sequence[int], local: Any) -> None:
        """Append a reply and play it: every ``act`` call is a turn, a reply without one is one turn of its text."""
        ids = self.conversation.ids
        prefix = list(ids)
        self.conversation.add_completion(reply_ids)
        self.model_mask.extend([1] * (len(ids) - len(prefix)))
        self.replies += 1
        self.generated_tokens += len(reply_ids)
        commands, text = act_commands(local.parse(list(reply_ids), prefix), local.chat_format.tool)
        answers = []
        for command in commands or [text]:
            if self.session.done:
                break
            answers.append(self.session.step(command).text)
        if not self.session.done:
            before = len(ids)
            self.conversation.add_tool_answers(answers)
            self.model_mask.extend([0] * (len(ids) - before))

    def branch_from(self, checkpoint: _Checkpoint) -> None:
        """Keep only the part from ``checkpoint`` on: the prefix before it becomes the group's prompt."""
        self.prompt_length = len(checkpoint.ids)
        self.model_mask = self.model_mask[checkpoint.mask_length :]
        self.start_turn = checkpoint.turn
        self.checkpoints = None


def play(local: Any, rollouts: Sequence[Rollout], sampling: Sampling, batch_size: int | None = None) -> None:
    """Play ``rollouts`` to their ends: each round, the replies of the running ones in batches of ``batch_size``
    (all at once when ``None``; a smaller batch bounds the memory of the keys / values being generated)."""
    running = [r for r in rollouts if not r.done]
    while running:
        for rollout in running:
            if rollout.checkpoints is not None:
                rollout.save_checkpoint()
        size = batch_size or len(running)
        generations = []
        for first in range(0, len(running), size):
            batch = running[first : first + size]
            generations += generate(local, [r.request(sampling) for r in batch])
        for rollout, generation in zip(running, generations, strict=True):
            rollout.receive(generation.ids, local)
            if rollout.done:
                rollout.record = rollout.session.record()
        running = [r for r in running if not r.done]


def _start(local: Any, session: EpisodeSession, spec: GroupSpec, group: int, member: int) -> Rollout:
    first = session.reset(**dict(spec.fields))
    conversation = ConversationTokens(local.tokenizer, local.chat_format, first.text)
    rollout = Rollout(session, conversation, rollout_seed(spec.seed, member), group)
    rollout.prompt_length = len(conversation.ids)
    return rollout


def _branch(local: Any, session: EpisodeSession, trunk: Rollout, checkpoint: _Checkpoint, member: int) -> Rollout:
    session.restore(checkpoint.state)
    conversation = trunk.conversation.copy()
    conversation.ids = list(checkpoint.ids)
    seed = rollout_seed(trunk.seed, "branch", checkpoint.turn, member)
    return Rollout(session, conversation, seed, trunk.group, checkpoint.turn, len(checkpoint.ids))


def check_groups(specs: Sequence[GroupSpec], sessions: Sequence[Any], mode: str) -> None:
    """Check that ``mode`` is a rollout mode and ``sessions`` hold one session per rollout of ``specs``.

    Raises:
        InvalidOptionError: Unknown ``mode``, or fewer sessions than rollouts.

    Example:
        >>> check_groups([], [], "fan")
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: Unknown rollout mode 'fan'; expected one of ('chain', 'tree').
    """
    if mode not in ROLLOUT_MODES:
        raise InvalidOptionError(f"Unknown rollout mode {mode!r}; expected one of {ROLLOUT_MODES}.")
    needed = sum(spec.size for spec in specs)
    if len(sessions) < needed:
        raise InvalidOptionError(f"play_groups: {len(sessions)} sessions for {needed} rollouts.")


def play_groups(
    local: Any,
    sessions: Sequence[EpisodeSession],
    specs: Sequence[GroupSpec],
    sampling: Sampling,
    *,
    mode: str = "chain",
    batch_size: int | None = None,
) -> list[list[Rollout]]:
    """Play every group of ``specs`` (``mode`` chain or tree) on ``sessions``; returns the rollouts by group.

    ``batch_size`` bounds the replies generated in one forward batch (default: every running rollout).

    ``sessions`` must hold at least one session per rollout (``sum(spec.size)``), all of one config.

    Raises:
        InvalidOptionError: Unknown ``mode``, or fewer sessions than rollouts.
    """
    check_groups(specs, sessions, mode)
    free = iter(sessions)
    if mode == "chain":
        groups = [[_start(local, next(free), s, g, m) for m in range(s.size)] for g, s in enumerate(specs)]
        play(local, [r for group in groups for r in group], sampling, batch_size)
        return groups
    trunks = [_start(local, next(free), spec, g, 0) for g, spec in enumerate(specs)]
    for trunk in trunks:
        trunk.checkpoints = []
    play(local, trunks, sampling, batch_size)
    groups = []
    for trunk, spec in zip(trunks, specs, strict=True):
        checkpoint = trunk.checkpoints[rollout_seed(spec.seed, "turn") % len(trunk.checkpoints)]
        trunk.branch_from(checkpoint)
        groups.append([trunk, *(_branch(local, next(free), trunk, checkpoint, m) for m in range(1, spec.size))])
    play(local, [r for group in groups for r in group[1:]], sampling, batch_size)
    return groups
