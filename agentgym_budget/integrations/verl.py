"""verl integration: a multi-turn agent loop playing one agentgym-budget episode per row (extra ``verl``).

:class:`BudgetAgentLoop` is a ``verl.experimental.agent_loop.AgentLoopBase`` registered under
``agentgym_budget`` (a row's ``agent_name``). verl's ``AgentLoopWorker`` runs in Ray actors, where an
``@register`` made in the driver is not seen; three routes register it where it runs:

* nothing to configure: the package declares the entry point ``agentgym_budget`` in verl's group
  ``verl.plugins`` (:mod:`~agentgym_budget.integrations.verl_plugin`), which verl 0.9 loads in every process
  that imports verl, Ray workers included (unless ``VERL_USE_EXTERNAL_PLUGINS`` excludes it);
* ``actor_rollout_ref.rollout.agent.agent_loop_config_path=<AGENT_LOOP_CONFIG>`` (the YAML shipped with the
  package), for a verl that loads no plug-ins;
* in one process: importing this module (when verl is installed) or :func:`register_agent_loop`.

``actor_rollout_ref.model.external_lib`` does not work: verl imports it for model code, not in the
agent-loop workers. Session fields in the loop's YAML entry (``max_turns: 12``, ``env_id: ...``; verl
passes an entry's keys to the loop's constructor) are job-wide defaults and a row's ``extra_info`` wins
(:func:`~agentgym_budget.integrations.verl_data.entry_defaults`); a near miss of a field (``max_turn``) or
a per-episode field (``seed``, ``task``) in the entry raises :class:`~agentgym_budget.errors.InvalidOptionError`.

The mapping:

* **Row**: ``extra_info`` names the env, task/seed and budget (``max_turns``) or a BudgetMix draw
  (``budgets``), over the entry's defaults, see :mod:`~agentgym_budget.integrations.verl_data`; ``raw_prompt`` is the chat prompt,
  whose empty last user message is filled with the goal and first observation (else one is appended).
  Env stacks are reused across rows from a process-wide
  :class:`~agentgym_budget.integrations.pool.SessionPool`.
* **Turn**: the model's tokens come from ``server_manager.generate``; the decoded reply is exactly one
  command (the shared action parser) and one turn of the budget. Model tokens get ``response_mask`` 1
  and their ``response_logprobs``; the observation, appended as a user message through verl's
  Continuous Token builder (as verl's own tool loop does), gets mask 0 and log-prob 0.
* **End**: the episode's termination (won or lost) or truncation by its budget. verl caps the response
  at ``rollout.response_length`` tokens (default 512), which covers every reply *and* observation, so a
  long budget can be cut by length first: the loop stops, logs a warning and reports
  ``cut_by_length`` (the episode is neither terminated nor truncated then).
* **Output**: ``reward_score`` is the episode's return (the family's reward, or the
  ProcessReward-shaped return with ``reward="process"``); ``extra_fields`` carry ``won``, ``budget``,
  ``env_turns``, ``terminated``, ``truncated``, ``cut_by_length``, ``task_id``, ``env_return`` and
  ``admissible_rate`` (the share of replies that were admissible commands) per episode (verl's
  ``metrics`` model drops unknown keys), so success can be grouped by budget.
  ``num_turns`` follows verl's meaning: chat messages (the prompt counts one, then each reply and each
  observation), *not* env turns; those are ``extra_fields["env_turns"]``.

Example::

    # verl trainer overrides (see AGENT_LOOP_CONFIG and EXAMPLE_TRAINER_CONFIG):
    # actor_rollout_ref.rollout.mode=async
    # actor_rollout_ref.rollout.agent.agent_loop_config_path=<AGENT_LOOP_CONFIG>
    # data.train_files=coin.parquet   (agentgym-budget export-dataset ... --format verl)
"""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from types import SimpleNamespace
from typing import Any
from uuid import uuid4

from agentgym_budget.dependencies import require
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.pool import shared_pool
from agentgym_budget.integrations.session import EpisodeSession, EpisodeTurn
from agentgym_budget.integrations.verl_data import AGENT_NAME, entry_defaults, row_episode

__all__ = [
    "AGENT_LOOP_CONFIG",
    "EXAMPLE_TRAINER_CONFIG",
    "BudgetAgentLoop",  # noqa: F822 (built on first use by __getattr__: it needs verl)
    "register_agent_loop",
]

logger = logging.getLogger(__name__)

AGENT_LOOP_CONFIG = str(resources.files("agentgym_budget") / "integrations" / "verl_agent_loop.yaml")
"""Path of the ``agent_loop_config_path`` YAML naming :class:`BudgetAgentLoop` as ``agentgym_budget``."""

EXAMPLE_TRAINER_CONFIG = str(resources.files("agentgym_budget") / "integrations" / "verl_trainer_example.yaml")
"""Path of an example set of verl trainer overrides for this loop (GRPO, async rollout, CPU-sized lengths)."""


def _verl() -> Any:
    return require(
        "verl.experimental.agent_loop.agent_loop",
        extra="verl",
        feature="The verl agent loop",
        package="verl",
        min_python=(3, 10),
    )


def __getattr__(name: str) -> Any:
    if name == "BudgetAgentLoop":
        return _classes().BudgetAgentLoop
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _first_messages(raw_prompt: Any, first: EpisodeTurn) -> list[dict[str, Any]]:
    """The row's prompt with the goal and first observation in its last (empty) user message."""
    if raw_prompt is None:
        raw_prompt = []
    if hasattr(raw_prompt, "tolist"):
        raw_prompt = raw_prompt.tolist()
    if isinstance(raw_prompt, (str, Mapping)) or not all(isinstance(m, Mapping) for m in raw_prompt):
        raise InvalidOptionError(
            f"A verl row's raw_prompt must be a list of chat messages, got {type(raw_prompt).__name__}."
        )
    messages = [dict(message) for message in raw_prompt]
    if messages and messages[-1].get("role") == "user" and not messages[-1].get("content"):
        messages[-1]["content"] = first.text
    else:
        messages.append({"role": "user", "content": first.text})
    return messages


def _fields(session: EpisodeSession, cut_by_length: bool) -> dict[str, Any]:
    record = session.record()
    return {
        "won": bool(record["won"]),
        "budget": int(record["budget"]),
        "env_turns": int(record["turns"]),
        "terminated": bool(record["terminated"]),
        "truncated": bool(record["truncated"]),
        "cut_by_length": cut_by_length,
        "task_id": str(record["task_id"]),
        "env_return": float(record["env_return"]),
        "admissible_rate": record["admissible_rate"],
    }


def _warn_cut(session: EpisodeSession, limit: int) -> None:
    """Log that the episode was cut by ``rollout.response_length`` before it ended."""
    last = session.last
    logger.warning(
        "agentgym_budget: episode on task %r cut by rollout.response_length=%d after %d of %d turns; "
        "raise response_length or lower the budget (extra_fields['cut_by_length'] is True).",
        last.task_id if last else None,
        limit,
        last.turn if last else 0,
        last.max_turns if last else 0,
    )


@dataclass
class _Transcript:
    """One episode's conversation as token ids so far: its response mask and log-probs, chat messages, cut."""

    runtime: list[int]
    prompt_length: int
    logprobs: list[float] | None
    mask: list[int] = field(default_factory=list)
    chat_messages: int = 1
    cut: bool = False

    def output(self, session: EpisodeSession, limit: int) -> Any:
        """verl's ``AgentLoopOutput`` of the finished episode (the response capped at ``limit`` tokens)."""
        response = self.runtime[self.prompt_length :]
        return _verl().AgentLoopOutput(
            prompt_ids=self.runtime[: self.prompt_length],
            response_ids=response[:limit],
            response_mask=self.mask[:limit],
            response_logprobs=None if self.logprobs is None else self.logprobs[:limit],
            reward_score=session.total_reward,
            num_turns=self.chat_messages,
            metrics={},
            extra_fields=_fields(session, self.cut),
        )


class _EpisodeLoop:
    """The methods of :class:`BudgetAgentLoop`, mixed into verl's ``AgentLoopBase`` when verl is imported."""

    session_defaults: Mapping[str, Any] = {}
    """Job-wide session fields from the loop's YAML entry (a row's ``extra_info`` overrides them)."""

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
        config, episode = row_episode(kwargs.get("extra_info") or {}, self.session_defaults)
        pool = shared_pool(config)
        session = pool.acquire()
        try:
            return await self._play(session, episode, sampling_params, kwargs)
        finally:
            pool.release(session)

    async def _play(
        self, session: EpisodeSession, episode: dict[str, Any], sampling_params: dict[str, Any], row: Any
    ) -> Any:
        limit = int(self.rollout_config.response_length)
        first = await self.loop.run_in_executor(None, lambda: session.reset(**episode))
        messages: list[dict[str, Any]] | None = _first_messages(row.get("raw_prompt"), first)
        runtime = await self.ct_build_initial_tokens(messages)
        transcript = _Transcript(runtime, len(runtime), [] if sampling_params.get("logprobs", True) else None)
        request_id = uuid4().hex
        while messages is not None:
            reply = await self._reply(transcript, request_id, sampling_params, limit)
            if reply is None:
                break
            turn = await self.loop.run_in_executor(None, lambda reply=reply: session.step(reply))
            if turn.done:
                break
            messages = await self._observe(transcript, messages, reply, turn.text, limit)
        if transcript.cut:
            _warn_cut(session, limit)
        return transcript.output(session, limit)

    async def _reply(
        self, transcript: _Transcript, request_id: str, sampling_params: dict[str, Any], limit: int
    ) -> str | None:
        """Generate the model's next reply into ``transcript``; ``None`` when it was cut by length (not played)."""
        output = await self.server_manager.generate(
            request_id=request_id, prompt_ids=transcript.runtime, sampling_params=sampling_params
        )
        if not output.log_probs and output.token_ids:
            transcript.logprobs = None  # the server gave none: carry none rather than made-up values
        merged, transcript.mask, transcript.logprobs = await self.ct_merge_assistant_token(
            transcript.runtime,
            output.token_ids,
            transcript.mask,
            transcript.logprobs,
            assistant_logprobs=None if transcript.logprobs is None else output.log_probs or [],
        )
        transcript.runtime, transcript.chat_messages = merged.token_ids, transcript.chat_messages + 1
        transcript.cut = len(transcript.mask) > limit
        return None if transcript.cut else self.tokenizer.decode(output.token_ids, skip_special_tokens=True)

    async def _observe(
        self, transcript: _Transcript, messages: list[dict[str, Any]], reply: str, observation: str, limit: int
    ) -> list[dict[str, Any]] | None:
        """Append the reply and the env's ``observation`` as chat messages; ``None`` when no room is left."""
        previous = [*messages, {"role": "assistant", "content": reply}]
        messages = [*previous, {"role": "user", "content": observation}]
        merged, mask, logprobs = await self.ct_merge_context_msg(
            previous, messages, transcript.runtime, transcript.mask, transcript.logprobs
        )
        transcript.cut = len(mask) >= limit  # no room for the observation and another reply
        if transcript.cut:
            return None
        transcript.runtime, transcript.mask, transcript.logprobs = merged.token_ids, mask, logprobs
        transcript.chat_messages += 1
        return messages


@functools.cache
def _classes() -> SimpleNamespace:
    agent_loop = _verl()

    class BudgetAgentLoop(_EpisodeLoop, agent_loop.AgentLoopBase):
        """One agentgym-budget episode per row (see the module docstring)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.session_defaults, verl_arguments = entry_defaults(kwargs)
            super().__init__(*args, **verl_arguments)

    BudgetAgentLoop.__module__ = __name__
    BudgetAgentLoop.__qualname__ = "BudgetAgentLoop"
    agent_loop.register(AGENT_NAME)(BudgetAgentLoop)
    return SimpleNamespace(BudgetAgentLoop=BudgetAgentLoop)


def register_agent_loop() -> str:
    """Register :class:`BudgetAgentLoop` in this process's verl registry (idempotent); return its name.

    Importing this module does it too when verl is installed; verl's Ray workers get it from the
    ``verl.plugins`` entry point (or :data:`AGENT_LOOP_CONFIG`).

    Raises:
        MissingDependencyError: verl is not installed (extra ``verl``).
    """
    _classes()
    return AGENT_NAME


if importlib.util.find_spec("verl") is not None:  # importing the module registers the loop wherever verl is
    register_agent_loop()
