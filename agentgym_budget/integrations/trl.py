"""TRL integration: multi-turn GRPO on any agentgym-budget environment (extra ``trl``, Python >= 3.11).

``GRPOTrainer(environment_factory=environment_factory(config))`` plays each rollout in a
:class:`BudgetToolEnv`. TRL's contract and how it is mapped:

* TRL makes one instance per concurrent rollout with the no-argument factory and reuses it;
  ``reset(**row)`` receives the dataset row: its episode fields (``task``, ``seed``, ``max_turns``,
  ``show_budget``; see :func:`~agentgym_budget.integrations.session_config.episode_fields`) pick the
  episode, ``prompt`` and the columns named in ``ignore_columns`` are ignored, any other column is
  refused. The returned text (goal, first observation, admissible actions, the budget when shown) is
  appended to the row's last user message.
* Every public method is a tool: there is exactly one, ``act(command)``. One call is one turn of the
  :class:`~agentgym_budget.wrappers.TurnBudget`; the command is read with the shared parser
  (:func:`~agentgym_budget.agents.actions.parse_action`). TRL has no done signal, so the call
  that ends the episode answers the observation plus ``[Episode over: ...]`` and later calls answer
  that the episode is over without playing (they cost no turn and change nothing).
  Set ``max_tool_calling_iterations`` to at least the largest budget (:func:`check_trainer_args`).
* A reply with no valid ``act`` call while the episode runs (plain text, a malformed call) would end
  TRL's rollout, while the ``hf:PATH`` evaluation agent plays its text as one command. With
  ``free_text_turns`` (the default of :func:`grpo_trainer`) training does the same:
  :func:`play_free_text` makes such a reply a call ``act(command=<its text>)`` and keeps only the
  valid ``act`` calls of a reply, so a reply costs the same turn in training and in evaluation. After
  the end (``[Episode over: ...]`` was answered) a reply without a call ends the rollout, as before.
* ``get_reward()`` returns the episode's return: the family's reward, or the ProcessReward-shaped
  one with ``reward="process"``. ``record`` (a property, so not a tool) summarises the episode
  (budget, turns, won, truncated, ...) for metrics by budget.
* Budgets per episode: ``SessionConfig(budgets=...)`` draws one per episode with BudgetMix
  (reproducibly from the row's ``seed``); a row's ``max_turns`` overrides the draw.

Example:
    >>> from agentgym_budget.integrations.session_config import SessionConfig
    >>> factory = environment_factory(SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=1", max_turns=2))
    >>> env = factory()
    >>> text = env.reset(prompt=[{"role": "user", "content": ""}], seed=0)
    >>> "take coin" in text
    True
    >>> print(env.act("take coin").splitlines()[-1])
    [Episode over: task completed in 1 turn.]
    >>> env.act("look")
    'The episode is over (task completed in 1 turn); do not call act again.'
    >>> env.get_reward(), env.record["turns"], env.record["won"]
    (1.0, 1, True)
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from agentgym_budget.chat.tool import DEFAULT_SYSTEM_PROMPT, EPISODE_OVER, act_commands, tool_call
from agentgym_budget.dependencies import require
from agentgym_budget.errors import EpisodeOverError, InvalidOptionError
from agentgym_budget.integrations.session import EpisodeSession, episode_outcome
from agentgym_budget.integrations.session_config import SessionConfig, episode_fields

__all__ = [
    "BudgetToolEnv",
    "check_trainer_args",
    "dataset_rows",
    "environment_factory",
    "expert_conversations",
    "grpo_trainer",
    "play_free_text",
]


class BudgetToolEnv:
    """One TRL rollout environment (see the module docstring for the mapping).

    Args:
        config: What to play.
        ignore_columns: Dataset columns that are not episode fields (``prompt`` always is ignored).
    """

    def __init__(self, config: SessionConfig, *, ignore_columns: Iterable[str] = ()) -> None:
        self._session = EpisodeSession(config)
        self._ignore = frozenset({"prompt", *ignore_columns})

    def reset(self, **row: Any) -> str:
        """Start the episode the dataset row describes; return the text for the model."""
        return self._session.reset(**episode_fields(row, ignore=self._ignore)).text

    def act(self, command: str) -> str:
        """Send one command to the environment. Every call is one turn of the limited budget.

        Args:
            command: The command to play, for example "go north" or "take coin".

        Returns:
            The environment's answer; it says when the episode is over.
        """
        last = self._session.last
        if last is None:
            raise EpisodeOverError("BudgetToolEnv.act: reset() was not called; TRL calls it before each rollout.")
        if last.done:
            return f"The episode is over ({episode_outcome(last)}); do not call act again."
        reply = command if isinstance(command, str) else json.dumps(command)
        return self._session.step(reply).text

    def get_reward(self) -> float:
        """The episode's return so far (0.0 before the first reset)."""
        return self._session.total_reward if self._session.last is not None else 0.0

    @property
    def session(self) -> EpisodeSession:
        """The underlying :class:`EpisodeSession`."""
        return self._session

    @property
    def record(self) -> dict[str, Any]:
        """A summary of the current episode (see :meth:`EpisodeSession.record`)."""
        return self._session.record()


def environment_factory(config: SessionConfig, *, ignore_columns: Iterable[str] = ()) -> Callable[[], BudgetToolEnv]:
    """The no-argument factory to pass as ``GRPOTrainer(environment_factory=...)``."""
    return functools.partial(BudgetToolEnv, config, ignore_columns=tuple(ignore_columns))


def dataset_rows(
    config: SessionConfig,
    *,
    episodes: int,
    seed: int = 0,
    tasks: Sequence[str | int] | None = None,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
) -> list[dict[str, Any]]:
    """Rows of a training dataset: a chat ``prompt`` plus episode fields.

    Row ``i`` has ``seed = seed + i`` (which picks the task and, with ``budgets``, the budget) and,
    when ``tasks`` is given, ``task = tasks[i % len(tasks)]``.

    Example:
        >>> rows = dataset_rows(SessionConfig("WebShop-1k-v0"), episodes=2, seed=5, tasks=[0])
        >>> [(row["seed"], row["task"]) for row in rows], rows[0]["prompt"][-1]
        ([(5, 0), (6, 0)], {'role': 'user', 'content': ''})
    """
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise InvalidOptionError(f"dataset_rows: episodes must be a positive integer, got {episodes!r}.")
    prompt = [{"role": "system", "content": system_prompt}, {"role": "user", "content": ""}]
    rows = []
    for i in range(episodes):
        row: dict[str, Any] = {"prompt": [dict(m) for m in prompt], "seed": seed + i}
        if tasks:
            row["task"] = tasks[i % len(tasks)]
        rows.append(row)
    return rows


def expert_conversations(
    config: SessionConfig,
    seeds: Iterable[int],
    *,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    max_turns: int = 100,
) -> list[list[dict[str, Any]]]:
    """The expert's episodes as TRL tool-calling conversations (for supervised warm starts and tests).

    Each conversation is the row prompt (``system_prompt`` and the first observation), then one
    assistant message per expert command calling ``act``, each followed by the tool's answer, until
    the task is won.

    Example:
        >>> [conversation] = expert_conversations(SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=1"), [0])
        >>> [m["role"] for m in conversation], conversation[2]["tool_calls"][0]["function"]["arguments"]
        (['system', 'user', 'assistant', 'tool'], {'command': 'take coin'})
        >>> conversation[-1]["content"].splitlines()[-1]
        '[Episode over: task completed in 1 turn.]'
    """
    planning = dataclasses.replace(config, info_keys=tuple({*config.info_keys, "expert_plan"}))
    env = BudgetToolEnv(planning)
    conversations = []
    try:
        for seed in seeds:
            messages = [
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": env.reset(seed=seed, max_turns=max_turns)},
            ]
            for command in env.session.last.info["expert_plan"]:
                messages.append({"role": "assistant", "content": "", "tool_calls": [tool_call("act", command=command)]})
                messages.append({"role": "tool", "name": "act", "content": env.act(command)})
            conversations.append(messages)
    finally:
        env.session.close()
    return conversations


def _largest_budget(config: SessionConfig) -> int:
    return max(config.budgets) if config.budgets else config.max_turns


def check_trainer_args(args: Any, config: SessionConfig, rows: Iterable[dict[str, Any]] = ()) -> None:
    """Refuse GRPO settings that would cut episodes short of their budget.

    Raises:
        InvalidOptionError: ``max_tool_calling_iterations`` is below the largest budget of ``config``
            or of the rows' ``max_turns`` (TRL would stop the rollout before the budget does).
    """
    largest = max([_largest_budget(config), *(int(r["max_turns"]) for r in rows if r.get("max_turns"))])
    iterations = getattr(args, "max_tool_calling_iterations", None)
    if iterations is not None and iterations < largest:
        raise InvalidOptionError(
            f"max_tool_calling_iterations={iterations} is below the largest turn budget ({largest}): TRL would end "
            f"rollouts before the budget does. Set GRPOConfig(max_tool_calling_iterations={largest}) or more."
        )


def play_free_text(tokenizer: Any, tool: str = "act") -> Any:
    """A copy of ``tokenizer`` whose ``parse_response`` reads a reply as the ``hf:PATH`` agent plays it (module docstring).

    TRL reads every reply with ``tokenizer.parse_response(ids, prefix=...)`` (``prefix``: the
    conversation before the reply). Wrapped here, while the episode runs (no ``[Episode over: ...]``
    answer in ``prefix``), a reply's calls are its valid ``tool`` calls
    (:func:`~agentgym_budget.chat.tool.act_commands`), or, when it has none, one call with its
    text as the command (``""`` for an empty reply); the episode then answers as for any command.
    The caller's tokenizer is left untouched: the result is a shallow copy (same vocabulary and
    backend, still a tokenizer for ``isinstance``) with the wrapped method. A tokenizer that already
    plays free text is returned as is.

    Example:
        >>> class Parser:
        ...     eos_token = "<eos>"
        ...     def parse_response(self, ids, prefix=None):
        ...         return {"role": "assistant", "content": "go east<eos>"}
        ...     def decode(self, ids, skip_special_tokens=False):
        ...         return "[Episode over: out of turns (2 of 2).]" if ids else ""
        >>> original = Parser()
        >>> tokenizer = play_free_text(original)
        >>> tokenizer.parse_response([7], prefix=[])["tool_calls"][0]["function"]
        {'name': 'act', 'arguments': {'command': 'go east'}}
        >>> "tool_calls" in tokenizer.parse_response([7], prefix=[1])  # after the end: the rollout ends
        False
        >>> "tool_calls" in original.parse_response([7]), play_free_text(tokenizer) is tokenizer
        (False, True)
    """
    parse = tokenizer.parse_response
    if getattr(parse, "plays_free_text", False):
        return tokenizer
    wrapped = copy.copy(tokenizer)

    def parse_response(ids: Any, *args: Any, prefix: Any = None, **kwargs: Any) -> Any:
        if prefix is not None:
            kwargs["prefix"] = prefix
        try:
            message = parse(ids, *args, **kwargs)
        except (ValueError, TypeError):  # TRL's own fallback for a malformed reply: its text
            message = None
        if not isinstance(message, dict):
            message = {"role": "assistant", "content": tokenizer.decode(list(ids), skip_special_tokens=True)}
        if prefix is not None and EPISODE_OVER in tokenizer.decode(list(prefix), skip_special_tokens=True):
            return message
        commands, text = act_commands(message, tool)
        if not commands:
            commands = [text.removesuffix(tokenizer.eos_token or "\0")]
        return {**message, "tool_calls": [tool_call(tool, command=command) for command in commands]}

    parse_response.plays_free_text = True  # type: ignore[attr-defined]
    wrapped.parse_response = parse_response
    return wrapped


def grpo_trainer(
    model: Any,
    processing_class: Any,
    config: SessionConfig,
    args: Any,
    train_dataset: Any,
    *,
    reward_funcs: Any = None,
    ignore_columns: Iterable[str] = (),
    free_text_turns: bool = True,
    **kwargs: Any,
) -> Any:
    """A ``trl.GRPOTrainer`` whose rollouts play ``config`` through :class:`BudgetToolEnv`.

    Checks the arguments with :func:`check_trainer_args`; ``get_reward`` is the environment's reward
    source (``reward_funcs`` may add more). With ``free_text_turns`` a reply without an ``act`` call
    is one turn, as in evaluation (:func:`play_free_text`); without it, it ends the rollout (TRL's
    behaviour). Other keyword arguments go to ``GRPOTrainer``.

    Raises:
        MissingDependencyError: ``trl`` is not installed (extra ``trl``).
        InvalidOptionError: See :func:`check_trainer_args`.
    """
    trl = require("trl", extra="trl", feature="GRPO training through TRL", min_python=(3, 11))
    check_trainer_args(args, config, train_dataset if isinstance(train_dataset, list) else ())
    trainer = trl.GRPOTrainer(
        model=model,
        processing_class=processing_class,
        args=args,
        train_dataset=train_dataset,
        reward_funcs=reward_funcs if reward_funcs is not None else [],
        environment_factory=environment_factory(config, ignore_columns=ignore_columns),
        **kwargs,
    )
    if free_text_turns:  # TRL parses replies with trainer._tokenizer: give it a wrapped copy, not the caller's
        trainer._tokenizer = play_free_text(trainer._tokenizer)
    return trainer
