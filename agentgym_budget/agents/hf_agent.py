"""The ``hf:PATH`` agent: a local Hugging Face causal LM, played the way :mod:`agentgym_budget.train` trains it.

``PATH`` is a directory written by ``save_pretrained`` (model and tokenizer), usually a training
run's checkpoint with its :class:`~agentgym_budget.chat.format.ChatFormat` beside the weights
(``agentgym_chat.json``). Without that file the default format is used: the system prompt of
:data:`~agentgym_budget.chat.tool.DEFAULT_SYSTEM_PROMPT`, the ``act`` tool, admissible
actions shown; the model's own chat template renders it (it must support tools). Nothing is downloaded.

How an episode is played, as TRL's multi-turn GRPO played it in training
(:class:`~agentgym_budget.integrations.trl.BudgetToolEnv`):

* The conversation is token ids built by
  :class:`~agentgym_budget.chat.format.ConversationTokens`: the system prompt and the first text
  (goal, observation, admissible actions: :func:`~agentgym_budget.chat.tool.turn_text`) with
  the ``act`` tool's schema; then each reply's own tokens, verbatim, and each tool answer's suffix ids.
* Each reply is read with TRL's response parser (:mod:`agentgym_budget.agents.hf_model`). Every call
  ``act(command=...)`` in it is one turn, played in order (TRL runs every call of a reply; the later
  ones are played on the next turns without generating, and their answers are appended together
  as TRL does). Each command goes through the shared parser
  (:func:`~agentgym_budget.agents.actions.parse_action`) as ``act`` sends it.
* A reply with no ``act`` call (plain text, or a malformed call) is one turn: its text is read as
  one command by :func:`~agentgym_budget.agents.actions.parse_action` (possibly ``""``: the
  env's usual feedback), and the next observation is appended as the tool's answer. GRPO rollouts
  play such a reply the same way (:func:`~agentgym_budget.integrations.trl.play_free_text`).
* Turns played for the agent by probes (``observe``) are appended as ``act`` calls.

Generation is batched across the episodes a worker plays at once (``concurrency``, up to
``batch_size`` per forward pass; :mod:`agentgym_budget.agents.hf_generation`) and seeded: reply ``i``
of the episode with seed ``s`` samples from its own generator seeded with ``row_seed(s, i)``, so
the same seed gives the same episode whatever else is in the batch. Each episode keeps the keys / values
of its conversation so far (:class:`~agentgym_budget.agents.hf_generation.PrefixCache`): a reply reads
only the tokens added since the last one (the reply and the tool's answer), not the whole conversation.

Parameters of the CLI name (``hf:PATH:key=value,...``): ``temperature`` (1.0, TRL's default; 0 is
greedy), ``top_p`` (1.0), ``top_k`` (0: off), ``max_new_tokens`` (128 per reply), ``batch_size``
(8), ``concurrency`` (episodes played at once per worker, 8), ``threads`` (torch threads per worker
process, 1; 0: torch's default, one per core), ``prefix_cache`` (true). :meth:`HFAgent.stats` reports the episode's replies, tokens, calls,
free-text turns, replies cut at ``max_new_tokens`` and conversations cut to fit the context.

Example:
    >>> from agentgym_budget.agents import parse_agent
    >>> parse_agent("hf:/no/such/checkpoint:temperature=0")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.ModelPathError: agent 'hf:/no/such/checkpoint:temperature=0': No model directory at '/no/such/checkpoint' (the path does not exist). Give a directory written by save_pretrained (a training run's checkpoint, e.g. runs/train-bm/final); nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentgym_budget.agents.actions import parse_action
from agentgym_budget.agents.hf_generation import GenerationRequest, PrefixCache, Sampling, batcher_for, row_seed
from agentgym_budget.agents.hf_model import LocalModel, check_model_dir, load_local_model
from agentgym_budget.chat.tool import act_commands, turn_text
from agentgym_budget.errors import AgentError, InvalidOptionError

__all__ = ["HFAgent"]


class HFAgent:
    """A local causal LM playing through the ``act`` tool (see the module docstring); an async agent.

    Args:
        path: Model directory (checked at once; loaded on first use, once per process).
        temperature: Sampling temperature (0: greedy).
        top_p: Nucleus sampling mass.
        top_k: Top-k filter (0: off).
        max_new_tokens: Longest reply in tokens.
        batch_size: Most replies generated in one forward batch.
        concurrency: Episodes a worker plays at once (read by the evaluation runners).
        threads: torch threads of the process (0: torch's default, one per core). Default 1: the evaluation
            runs one worker process per core, and two threads per worker on a 2-core machine made SmolLM2's
            generation ~10x slower (threads waiting on each other; ``benchmarks/train_speed.py``).
        prefix_cache: Keep the conversation's keys / values between replies (off: read it all every turn).

    Raises:
        ModelPathError: ``path`` holds no model.
        InvalidOptionError: A parameter is out of range.
    """

    def __init__(
        self,
        path: str,
        *,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        max_new_tokens: int = 128,
        batch_size: int = 8,
        concurrency: int = 8,
        threads: int = 1,
        prefix_cache: bool = True,
    ) -> None:
        self.sampling = Sampling(float(temperature), float(top_p), int(top_k), int(max_new_tokens))
        if batch_size < 1 or concurrency < 1 or threads < 0:
            raise InvalidOptionError(
                f"hf agent: need batch_size >= 1, concurrency >= 1 and threads >= 0; got batch_size={batch_size}, "
                f"concurrency={concurrency}, threads={threads}."
            )
        self.path = str(path)
        self.directory = check_model_dir(path)
        self.batch_size, self.concurrency, self.threads = int(batch_size), int(concurrency), int(threads)
        self.prefix_cache = bool(prefix_cache)
        self._local: LocalModel | None = None
        self._conversation: Any = None
        self._cache = PrefixCache()
        self._seed = 0
        self._replies = 0
        self._queue: list[str] = []
        self._answers: list[str] = []
        self._awaiting_answer = False
        self._stats: dict[str, int] = {}

    def __repr__(self) -> str:
        s = self.sampling
        return f"HFAgent(path={self.path!r}, temperature={s.temperature}, top_p={s.top_p}, top_k={s.top_k})"

    @property
    def local(self) -> LocalModel:
        """The loaded model (loaded on first use, shared by the process's agents)."""
        if self._local is None:
            self._local = load_local_model(self.directory, threads=self.threads)
        return self._local

    def _text(self, observation: str, info: Mapping[str, Any], goal: str | None = None) -> str:
        admissible = tuple(info.get("admissible_actions") or ()) if self.local.chat_format.show_actions else ()
        return turn_text(observation, admissible, goal=goal)

    async def reset(
        self, goal: str, observation: str, info: Mapping[str, Any], *, seed: int, budget: int | None = None
    ) -> None:
        """Start the conversation: system prompt, tool schema and the first text."""
        from agentgym_budget.chat.format import ConversationTokens

        local = self.local
        self._conversation = ConversationTokens(local.tokenizer, local.chat_format, self._text(observation, info, goal))
        self._seed, self._replies, self._cache = int(seed), 0, PrefixCache()
        self._queue, self._answers, self._awaiting_answer = [], [], False
        self._stats = {
            "replies": 0,
            "prompt_tokens": 0,
            "cached_tokens": 0,
            "completion_tokens": 0,
            "act_calls": 0,
            "free_text_turns": 0,
            "cut_replies": 0,
            "context_cuts": 0,
            "unmatched_actions": 0,
        }

    def _receive(self, observation: str, info: Mapping[str, Any]) -> None:
        if self._conversation is None:
            raise AgentError("hf agent: reset() must be called before act() or observe().")
        if self._awaiting_answer:
            self._answers.append(self._text(observation, info))
            self._awaiting_answer = False

    def _flush_answers(self) -> None:
        if self._answers:
            self._conversation.add_tool_answers(self._answers)
        self._answers = []

    def _play(self, command: str, info: Mapping[str, Any]) -> str:
        parsed = parse_action(command, tuple(info.get("admissible_actions") or ()))
        self._stats["unmatched_actions"] += int(not parsed.matched)
        self._awaiting_answer = True
        return parsed.command

    async def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """The next command: a queued call of the last reply, else a new reply's first ``act`` call or text."""
        self._receive(observation, info)
        if self._queue:
            return self._play(self._queue.pop(0), info)
        self._flush_answers()
        conversation = self._conversation
        prefix = list(conversation.ids)
        cache = self._cache if self.prefix_cache else None
        request = GenerationRequest(tuple(prefix), row_seed(self._seed, self._replies), self.sampling, cache)
        reply = await batcher_for(self.local, self.batch_size).generate(request)
        self._replies += 1
        conversation.add_completion(reply.ids)
        stats = self._stats
        stats["replies"] += 1
        stats["prompt_tokens"] += reply.prompt_tokens
        stats["cached_tokens"] += reply.cached_tokens
        stats["completion_tokens"] += len(reply.ids)
        stats["cut_replies"] += int(not reply.ended)
        stats["context_cuts"] += int(reply.context_cut > 0)
        commands, text = act_commands(self.local.parse(reply.ids, prefix), self.local.chat_format.tool)
        if not commands:
            stats["free_text_turns"] += 1
            return self._play(text, info)
        stats["act_calls"] += len(commands)
        self._queue = commands[1:]
        return self._play(commands[0], info)

    async def observe(self, observation: str, info: Mapping[str, Any], action: str) -> None:
        """A turn played for the agent (probes): appended as an ``act`` call; queued calls are dropped."""
        self._receive(observation, info)
        self._queue = []
        self._flush_answers()
        self._conversation.add_call(action)
        self._awaiting_answer = True

    @property
    def token_ids(self) -> list[int]:
        """The episode's conversation so far, as token ids (what the model reads next, before pending answers)."""
        return [] if self._conversation is None else list(self._conversation.ids)

    def stats(self) -> dict[str, int]:
        """Replies, prompt / completion tokens, ``act`` calls, free-text turns and cuts of the current episode."""
        return dict(self._stats)
