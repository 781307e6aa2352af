"""GRPO with turn-level credit through TRL: ``--credit turn|gigpo`` (see :mod:`agentgym_budget.train.credit`).

TRL stays the engine: rollouts, tool calls, the loss and the optimiser are ``trl.GRPOTrainer``'s.
The subclass made by :func:`turn_credit_trainer` only replaces the per-rollout advantage TRL computes
(shape ``(B,)``) by a per-token one (shape ``(B, T)``, which TRL's loss accepts):

* each rollout plays a :class:`TurnToolEnv`, which records every turn's reward (shaped under
  ``--process-reward``) and, for ``gigpo``, the state the turn acted from: the env's own
  ``info["state_digest"]`` (:mod:`agentgym_budget.core.state_digest`: equal engine states, whatever
  path led there) with the turns left (under a budget the same engine state with fewer turns left is
  another decision);
* the completion's model-written spans (``completion_mask * tool_mask`` runs, one per reply) are
  matched with the turns: reply ``k`` is turn ``k``; replies after the last turn (the one that stops,
  calls after the end) take the last turn's advantage. When the number of tool answers differs
  from the number of ``act`` calls (a reply with several calls) the rollout keeps TRL's episode
  advantage and the step's ``credit/misaligned`` metric counts it. One answer fewer than calls is
  aligned when the completion ends with a reply: TRL plays the last call and then drops its answer
  when it would overflow ``max_completion_length`` (an earlier reply with two calls followed by a
  final reply without any would look the same: the one case mis-assigned);
* every step logs ``credit/useful_groups``: the fraction of GRPO groups with a non-zero advantage
  somewhere (zero-variance groups train nothing), and for ``gigpo`` ``credit/shared_state_turns``:
  the fraction of turns whose state another turn of their group shares.

Example::

    trainer = turn_credit_trainer(model, tokenizer, config, args, dataset, credit="gigpo", gamma=0.95)
    trainer.train()
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Sequence
from typing import Any

from agentgym_budget.dependencies import require
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.trl import BudgetToolEnv, check_trainer_args, play_free_text
from agentgym_budget.train.credit import RolloutTurns, check_credit, state_groups, turn_advantages, useful_fraction

__all__ = ["TurnToolEnv"]


class TurnToolEnv(BudgetToolEnv):
    """A :class:`~agentgym_budget.integrations.trl.BudgetToolEnv` that records each turn for credit assignment.

    Args:
        config: What to play.
        record_states: Record the state each turn acts from (``gigpo``): its ``info["state_digest"]`` and
            the turns left, as ``"<digest>/<turns left>"``.
        ignore_columns: Dataset columns that are not episode fields.
    """

    def __init__(self, config: SessionConfig, *, record_states: bool = False, ignore_columns: Iterable[str] = ()):
        if record_states:
            config = dataclasses.replace(config, info_keys=(*config.info_keys, "state_digest"))
        super().__init__(config, ignore_columns=ignore_columns)
        self._record_states = record_states
        self._rewards: list[float] = []
        self._states: list[str] = []
        self._calls = 0

    def reset(self, **row: Any) -> str:
        """Start the episode the dataset row describes; return the text for the model."""
        self._rewards, self._states, self._calls = [], [], 0
        return super().reset(**row)

    def act(self, command: str) -> str:
        """Send one command to the environment. Every call is one turn of the limited budget.

        Args:
            command: The command to play, for example "go north" or "take coin".

        Returns:
            The environment's answer; it says when the episode is over.
        """
        self._calls += 1
        session = self.session
        playing = session.last is not None and not session.last.done
        if playing and self._record_states:
            self._states.append(f"{session.last.info['state_digest']}/{session.last.turns_left}")
        answer = super().act(command)
        if playing:
            self._rewards.append(session.last.reward)
        return answer

    @property
    def turns(self) -> RolloutTurns:
        """The rewards (and state digests) of the turns played so far."""
        return RolloutTurns(tuple(self._rewards), tuple(self._states))

    @property
    def calls(self) -> int:
        """``act`` calls answered this episode (turns plus calls after the end)."""
        return self._calls


def model_spans(completion_mask: Sequence[int], tool_mask: Sequence[int]) -> list[tuple[int, int]]:
    """``[start, end)`` of each run of model-written tokens (both masks 1): one per reply.

    Example:
        >>> model_spans([1, 1, 1, 1, 1, 1, 0], [1, 1, 0, 0, 1, 1, 1])
        [(0, 2), (4, 6)]
    """
    spans, start = [], None
    for i, (c, t) in enumerate(zip(completion_mask, tool_mask, strict=True)):
        if c and t:
            start = i if start is None else start
        elif start is not None:
            spans.append((start, i))
            start = None
    if start is not None:
        spans.append((start, len(completion_mask)))
    return spans


def token_advantages(
    spans: Sequence[tuple[int, int]], advantages: Sequence[float], length: int, fallback: float
) -> list[float]:
    """Per-token advantages of one rollout: reply ``k`` gets turn ``k``'s (the last turn's after it).

    Example:
        >>> token_advantages([(0, 2), (3, 4), (5, 6)], [0.5, -1.0], 6, fallback=0.1)
        [0.5, 0.5, 0.0, -1.0, 0.0, -1.0]
        >>> token_advantages([(0, 2)], [], 3, fallback=0.1)
        [0.1, 0.1, 0.0]
    """
    values = [0.0] * length
    for k, (start, end) in enumerate(spans):
        value = advantages[min(k, len(advantages) - 1)] if advantages else fallback
        values[start:end] = [value] * (end - start)
    return values


def _tool_answers(spans: Sequence[tuple[int, int]], completion_mask: Sequence[int]) -> int:
    """Tool answers between replies: gaps between spans (a trailing gap counts when the completion goes on)."""
    last = max((i for i, c in enumerate(completion_mask) if c), default=-1) + 1
    return max(0, len(spans) - 1) + int(bool(spans) and spans[-1][1] < last)


def _ends_with_reply(spans: Sequence[tuple[int, int]], completion_mask: Sequence[int]) -> bool:
    return bool(spans) and spans[-1][1] == sum(1 for c in completion_mask if c)


@functools.cache
def _trainer_class() -> type:
    trl = require("trl", extra="trl", feature="GRPO training through TRL", min_python=(3, 11))
    import torch

    class TurnCreditGRPOTrainer(trl.GRPOTrainer):
        """``trl.GRPOTrainer`` with per-token advantages from turn-level credit (see the module docstring)."""

        def __init__(self, *args: Any, credit: str, gamma: float, step_weight: float, **kwargs: Any) -> None:
            check_credit(credit, gamma, step_weight)
            self.credit, self.gamma, self.step_weight = credit, gamma, step_weight
            super().__init__(*args, **kwargs)

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            output = super()._generate_and_score_completions(inputs)
            if self.accelerator.num_processes != 1:
                raise NotImplementedError("Turn-level credit runs in one process (no sharded generation batch).")
            output["advantages"] = self._turn_advantages(output)
            return output

        def _turn_advantages(self, output: dict[str, Any]) -> Any:
            completion = output["completion_mask"].tolist()
            tools = output["tool_mask"].tolist() if "tool_mask" in output else [[1] * len(r) for r in completion]
            episode = output["advantages"].tolist()
            size = self.num_generations
            rollouts = [environment.turns for environment in self.environments]
            groups = [rollouts[i : i + size] for i in range(0, len(rollouts), size)]
            per_turn = [
                a
                for g in groups
                for a in turn_advantages(g, self.credit, gamma=self.gamma, step_weight=self.step_weight)
            ]
            rows, misaligned = [], 0
            for i, (mask, tool) in enumerate(zip(completion, tools, strict=True)):
                spans = model_spans(mask, tool)
                answers, calls = _tool_answers(spans, mask), self.environments[i].calls
                # TRL drops the last answer (after playing the call) when it would overflow the completion.
                aligned = answers == calls or (answers == calls - 1 and _ends_with_reply(spans, mask))
                misaligned += not aligned
                advantages = per_turn[i] if aligned else []
                rows.append(token_advantages(spans, advantages, len(mask), fallback=episode[i]))
            mode = "train" if self.model.training else "eval"
            grouped = [per_turn[i : i + size] for i in range(0, len(per_turn), size)]
            self._metrics[mode]["credit/useful_groups"].append(useful_fraction(grouped))
            self._metrics[mode]["credit/misaligned"].append(misaligned / max(1, len(rows)))
            if self.credit == "gigpo":
                shared = [len(m) for g in groups for m in state_groups(g).values()]
                turns = sum(shared)
                self._metrics[mode]["credit/shared_state_turns"].append(
                    sum(n for n in shared if n > 1) / turns if turns else 0.0
                )
            return torch.tensor(rows, dtype=output["advantages"].dtype, device=output["advantages"].device)

    return TurnCreditGRPOTrainer


def turn_credit_trainer(
    model: Any,
    processing_class: Any,
    config: SessionConfig,
    args: Any,
    train_dataset: Any,
    *,
    credit: str,
    gamma: float = 1.0,
    step_weight: float = 1.0,
    reward_funcs: Any = None,
    **kwargs: Any,
) -> Any:
    """A GRPO trainer with turn-level credit whose rollouts play ``config`` (one ``act`` call is one turn).

    Like :func:`~agentgym_budget.integrations.trl.grpo_trainer` (free-text replies are turns, the
    arguments are checked), with :class:`TurnToolEnv` environments and the advantages of ``credit``.

    Raises:
        MissingDependencyError: ``trl`` is not installed (extra ``trl``).
        InvalidOptionError: Unknown ``credit``, ``gamma`` outside ``(0, 1]``, or see
            :func:`~agentgym_budget.integrations.trl.check_trainer_args`.
    """
    check_credit(credit, gamma, step_weight)
    check_trainer_args(args, config, train_dataset if isinstance(train_dataset, list) else ())
    trainer = _trainer_class()(
        model=model,
        processing_class=processing_class,
        args=args,
        train_dataset=train_dataset,
        reward_funcs=reward_funcs if reward_funcs is not None else [],
        environment_factory=functools.partial(TurnToolEnv, config, record_states=credit == "gigpo"),
        credit=credit,
        gamma=gamma,
        step_weight=step_weight,
        **kwargs,
    )
    # TRL parses replies with trainer._tokenizer: the wrapped copy must replace it (play_free_text returns a copy).
    trainer._tokenizer = play_free_text(trainer._tokenizer)
    return trainer
