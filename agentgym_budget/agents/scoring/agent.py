"""The ``score:MODEL`` agent: a causal LM that chooses among the admissible commands by their likelihood.

Each turn the agent's prompt (:mod:`~agentgym_budget.agents.scoring.prompt`) grows by the command it
played and the new observation; every admissible command is scored as the assistant's reply
(:mod:`~agentgym_budget.agents.scoring.scorer`: the prompt read once and only its new tokens, the
candidates batched over its keys / values) and the command is drawn from the policy of
:mod:`~agentgym_budget.agents.scoring.policy`. No text is generated, so no command is ever invalid, and
the distribution over the commands is exact: :meth:`ScoreAgent.action_distribution` gives it (the
``probe`` command reports the exact expected accuracy from it).

The episodes a worker plays at once (``concurrency``) are scored together: an async agent's turn joins
the pass of the other ready episodes (up to ``batch_size`` candidates a pass), and episodes at the same
state (same prompt and candidates) are scored once.

Candidates are the env's ``admissible_actions`` (duplicates once). An action with a placeholder such as
WebShop's ``search[<keywords>]`` becomes one candidate per query built from the goal
(:func:`goal_queries`). A state that lists no action raises
:class:`~agentgym_budget.errors.AgentError`; more than ``max_candidates`` too (a bound on the work of one
turn: raise it to score more).

Example:
    >>> from agentgym_budget.agents import parse_agent
    >>> parse_agent("score:/no/such/model")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.ModelPathError: agent 'score:/no/such/model': No model directory at '/no/such/model' (the path does not exist). Give a directory written by save_pretrained (a training run's checkpoint, e.g. runs/train-bm/final); nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import re
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.agents.hf_model import check_model_dir, load_local_model
from agentgym_budget.agents.scoring.policy import candidate_scores, check_normalise, choose, distribution
from agentgym_budget.agents.scoring.prompt import (
    COMMAND_TOKENS,
    EpisodePrompt,
    PromptCodec,
    ScoringFormat,
    next_prompt,
    user_message,
)
from agentgym_budget.agents.scoring.scorer import DEFAULT_BATCH, PromptState, Scored, ScoreRequest, score
from agentgym_budget.errors import AgentError, InvalidOptionError

__all__ = ["ScoreAgent"]

SUPPORTED = (
    "TextWorld, TWX, ALFWorld, BabyAI and ScienceWorld (admissible actions; ScienceWorld's bounded list), "
    "WebShop (search queries built from the instruction)"
)
"""Families whose states list the commands a scoring agent chooses among."""

_PLACEHOLDER = re.compile(r"<[A-Za-z_ ]+>")
_PRICE = re.compile(r",?\s*(and\s+)?price\s+(lower|less)\s+than\s+[\d.,]+\s*dollars?", re.IGNORECASE)
_CLAUSE = re.compile(r",| with | which | that | and ")


def goal_queries(goal: str) -> list[str]:
    """Search queries for a placeholder such as ``search[<keywords>]``: the goal without its price clause, and
    the goal's first clause (up to the first ``,``, ``with``, ``which``, ``that`` or ``and``).

    Example:
        >>> goal_queries("Instruction: i need a blue cotton shirt with long sleeves, and price lower than 30.00 dollars")
        ['i need a blue cotton shirt with long sleeves', 'i need a blue cotton shirt']
    """
    text = re.sub(r"^\s*instruction:\s*", "", str(goal), flags=re.IGNORECASE)
    text = " ".join(_PRICE.sub("", text).lower().split()).strip(" ,.")
    first = _CLAUSE.split(text, maxsplit=1)[0].strip(" ,.")
    return list(dict.fromkeys(q for q in (text, first) if q))


def candidate_commands(info: Mapping[str, Any], goal: str) -> list[str]:
    """The commands a scoring agent chooses among in a state (see the module docstring).

    Raises:
        AgentError: The state lists no action, or a placeholder needs a goal and there is none.
    """
    listed = [str(a) for a in (info.get("admissible_actions") or ())]
    if not listed:
        raise AgentError(
            f"score: agents choose among the admissible actions the env lists (info['admissible_actions']), and "
            f"this state lists none. Families that list them: {SUPPORTED}."
        )
    commands = []
    for action in listed:
        if _PLACEHOLDER.search(action):
            queries = goal_queries(goal)
            if not queries:
                raise AgentError(f"score: {action!r} needs a query built from the goal, and the task has no goal.")
            commands.extend(_PLACEHOLDER.sub(lambda _, q=q: q, action) for q in queries)
        else:
            commands.append(action)
    return list(dict.fromkeys(commands))


@dataclass(frozen=True)
class ScoringModel:
    """A model ready to score: the loaded model, its prompt pieces and its context.

    Attributes:
        model: The causal LM.
        codec: Its :class:`~agentgym_budget.agents.scoring.prompt.PromptCodec`.
        pad_id: Token id of padding.
        context: Longest sequence it reads.
    """

    model: Any
    codec: PromptCodec
    pad_id: int
    context: int


_MODELS: dict[tuple[Any, int], ScoringModel] = {}
_LOCK = threading.Lock()


def scoring_model(path: str | Path, *, threads: int = 0, command_tokens: int = COMMAND_TOKENS) -> ScoringModel:
    """The scoring model of ``path`` (loaded once per process; ``threads`` > 0 sets torch's thread count)."""
    local = load_local_model(path, threads=threads)
    key = (id(local), int(command_tokens))
    with _LOCK:
        if key not in _MODELS:
            codec = PromptCodec(local.tokenizer, ScoringFormat.load(local.path), command_tokens)
            _MODELS[key] = ScoringModel(local.model, codec, local.pad_id, local.context)
        return _MODELS[key]


class _Batcher:
    """Scores the requests of one event loop's episodes together (the ``hf:`` agent's batcher, for scoring)."""

    def __init__(self, scoring: ScoringModel, batch_size: int) -> None:
        self.scoring, self.batch_size = scoring, batch_size
        self._pending: list[tuple[ScoreRequest, asyncio.Future[Scored]]] = []
        self._server: asyncio.Task[None] | None = None

    async def score(self, request: ScoreRequest) -> Scored:
        future: asyncio.Future[Scored] = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        if self._server is None or self._server.done():
            self._server = asyncio.ensure_future(self._serve())
        return await future

    async def _serve(self) -> None:
        while self._pending:
            quiet = 0
            while quiet < 2:  # until the other ready episodes have queued their turns
                count = len(self._pending)
                await asyncio.sleep(0)
                quiet = quiet + 1 if len(self._pending) == count else 0
            batch = [(r, f) for r, f in self._pending if not f.cancelled()]
            self._pending = []
            if not batch:
                continue
            try:
                scoring = self.scoring
                requests = [request for request, _ in batch]
                results = await asyncio.to_thread(
                    score, scoring.model, requests, pad_id=scoring.pad_id, batch_size=self.batch_size
                )
            except Exception as err:  # every waiting episode gets the error, none hangs
                results = [err] * len(batch)
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_exception(result) if isinstance(result, Exception) else future.set_result(result)


_BATCHERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[int, int], _Batcher]] = (
    weakref.WeakKeyDictionary()
)


def _batcher(scoring: ScoringModel, batch_size: int) -> _Batcher:
    batchers = _BATCHERS.setdefault(asyncio.get_running_loop(), {})
    key = (id(scoring), batch_size)
    if key not in batchers:
        batchers[key] = _Batcher(scoring, batch_size)
    return batchers[key]


class ScoreAgent:
    """A causal LM choosing among the admissible commands by their likelihood (module docstring); an async agent.

    Args:
        path: Model directory, ``.gguf`` file or named model (checked at once; loaded on first use, once per process).
        temperature: Softmax temperature over the candidates' scores (0: the best score).
        normalise: ``mean``, ``word`` or ``sum`` (:mod:`~agentgym_budget.agents.scoring.policy`).
        epsilon: Share of the probability spread uniformly over the candidates.
        batch_size: Most candidates scored in one forward pass.
        concurrency: Episodes a worker plays at once (read by the evaluation runners).
        threads: torch threads of the process (0: torch's default).
        max_candidates: Most candidates in a state (more raise :class:`~agentgym_budget.errors.AgentError`).
        command_tokens: Tokens of a command that are scored.

    Raises:
        ModelPathError: ``path`` holds no model.
        InvalidOptionError: A parameter is out of range.
    """

    info_keys = frozenset({"admissible_actions"})
    """The runner asks every env for its commands, also where listing them is opt-in (ScienceWorld)."""

    def __init__(
        self,
        path: str,
        *,
        temperature: float = 1.0,
        normalise: str = "word",
        epsilon: float = 0.0,
        batch_size: int = DEFAULT_BATCH,
        concurrency: int = 8,
        threads: int = 1,
        max_candidates: int = 1000,
        command_tokens: int = COMMAND_TOKENS,
    ) -> None:
        if temperature < 0 or not 0 <= epsilon <= 1 or min(batch_size, concurrency, max_candidates, command_tokens) < 1:
            raise InvalidOptionError(
                "score agent: need temperature >= 0, 0 <= epsilon <= 1 and batch_size, concurrency, max_candidates, "
                f"command_tokens >= 1; got {temperature}, {epsilon}, {batch_size}, {concurrency}, {max_candidates}, "
                f"{command_tokens}."
            )
        self.path, self.directory = str(path), check_model_dir(path)
        self.temperature, self.normalise, self.epsilon = float(temperature), check_normalise(normalise), float(epsilon)
        self.batch_size, self.concurrency, self.threads = int(batch_size), int(concurrency), int(threads)
        self.max_candidates, self.command_tokens = int(max_candidates), int(command_tokens)
        self._scoring: ScoringModel | None = None
        self._reset_episode("", 0)

    def __repr__(self) -> str:
        return f"ScoreAgent(path={self.path!r}, temperature={self.temperature}, normalise={self.normalise!r})"

    @property
    def scoring(self) -> ScoringModel:
        """The loaded model (loaded on first use, shared by the process's agents)."""
        if self._scoring is None:
            self._scoring = scoring_model(self.directory, threads=self.threads, command_tokens=self.command_tokens)
        return self._scoring

    def _reset_episode(self, goal: str, seed: int) -> None:
        self._goal, self._seed, self._turn = goal, int(seed), 0
        self._prompt: EpisodePrompt | None = None
        self._state = PromptState()
        self._played: str | None = None
        self._distribution: dict[str, float] = {}
        self._scored: Scored | None = None
        self._stats = dict.fromkeys(("turns", "prompt_tokens", "cached_tokens", "candidates", "context_cuts"), 0)

    async def reset(
        self, goal: str, observation: str, info: Mapping[str, Any], *, seed: int, budget: int | None = None
    ) -> None:
        """Start an episode (the prompt begins at the first :meth:`act` or :meth:`observe`)."""
        self._reset_episode(str(goal or info.get("goal") or ""), seed)

    def _extend(self, observation: str, commands: Sequence[str]) -> None:
        codec, first = self.scoring.codec, self._prompt is None
        text = user_message(observation, commands, goal=self._goal, first=first, scoring_format=codec.format)
        self._prompt = next_prompt(self._prompt, codec, text, self._played, self.scoring.context)

    async def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """The next command, drawn from the policy over the state's candidates."""
        commands = candidate_commands(info, self._goal)
        if len(commands) > self.max_candidates:
            raise AgentError(
                f"score agent: {len(commands)} candidates in this state, more than max_candidates={self.max_candidates}; "
                "raise it (score:MODEL:max_candidates=N) to score them all, in passes of batch_size candidates."
            )
        self._extend(observation, commands)
        codec = self.scoring.codec
        ids = [codec.command(c) for c in commands]
        self._stats["context_cuts"] += int(self._prompt.fit(max(len(c) for c in ids)))
        request = ScoreRequest(tuple(self._prompt.ids), tuple(ids), self._state)
        scored = self._scored = await _batcher(self.scoring, self.batch_size).score(request)
        scores = candidate_scores(scored.token_logprobs, commands, self.normalise)
        probabilities = distribution(scores, temperature=self.temperature, epsilon=self.epsilon)
        index = choose(probabilities, seed=self._seed, turn=self._turn)
        self._distribution = dict(zip(commands, probabilities, strict=True))
        stats = self._stats
        stats["turns"] += 1
        stats["prompt_tokens"] += scored.prompt_tokens
        stats["cached_tokens"] += scored.cached_tokens
        stats["candidates"] += len(commands)
        self._turn += 1
        self._played = commands[index]
        return self._played

    async def observe(self, observation: str, info: Mapping[str, Any], action: str) -> None:
        """A turn played for the agent (probes): appended to the prompt as if the agent had played it."""
        commands = candidate_commands(info, self._goal) if info.get("admissible_actions") else []
        self._extend(observation, commands)
        self._played = str(action)

    def action_distribution(self) -> dict[str, float]:
        """The policy of the last :meth:`act`: probability of each candidate command (exact, not sampled)."""
        return dict(self._distribution)

    def stats(self) -> dict[str, int]:
        """Turns, prompt tokens (and those read from the cache), candidates scored and context cuts of the episode."""
        return dict(self._stats)
