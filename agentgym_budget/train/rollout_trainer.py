"""GRPO through TRL with the package's own rollouts (:mod:`agentgym_budget.train.rollouts`) and dynamic sampling.

TRL stays the engine of the update: its ``GRPOTrainer`` computes the group advantages, the loss over
the model's own tokens (``env_mask``), the KL term to the reference model and the optimiser step. The
rollouts come from its ``rollout_func`` hook: :class:`RolloutSource` plays each step's groups
(chain or tree, :func:`~agentgym_budget.train.rollouts.play_groups`) with the weights being trained.

**Dynamic sampling** (``dynamic_sampling``, DAPO-style): a group whose rollouts all have the same return
(all won or all lost) has zero advantage and trains nothing. Such groups are played again on other
training tasks (drawn from a seeded stream), up to ``resample_rounds`` times; a step where no group
carries signal after that skips the optimiser step, so Adam's moment estimates do not move the weights
on a step without reward signal. ``metrics.jsonl`` records per step ``signal_groups_first`` (share of
groups with disagreeing returns as first played), ``signal_groups`` (after resampling),
``groups_resampled`` and ``step_skipped``, and the rollouts' wall time and generated tokens per second
(``rollout_s``, ``generated_tokens``, ``rollout_tokens_per_s``: every token generated, replayed groups'
included); ``episodes.jsonl`` records every rollout with its
``group_id``, ``start_turn`` and ``resample_round``.

Example::

    trainer = rollout_trainer(model, tokenizer, config, args, dataset, options=RolloutOptions("tree"), ...)
    trainer.train()
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentgym_budget.agents.hf_generation import Sampling
from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.dependencies import require
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.session import EpisodeSession
from agentgym_budget.integrations.session_config import SessionConfig, episode_fields
from agentgym_budget.train.metrics import JsonlLog, episode_summary
from agentgym_budget.train.rollouts import ROLLOUT_MODES, GroupSpec, Rollout, play_groups, rollout_seed

__all__ = ["RolloutOptions", "RolloutSource", "rollout_trainer"]


@dataclass(frozen=True)
class RolloutOptions:
    """How :class:`RolloutSource` plays a step.

    Attributes:
        mode: ``"chain"`` or ``"tree"`` (:mod:`agentgym_budget.train.rollouts`).
        dynamic_sampling: Play all-agree groups again on other tasks; skip steps with no signal.
        resample_rounds: Most times a group is played again.
        tokens_per_turn: Longest reply in tokens.
        temperature: Sampling temperature.
        batch_size: Most replies generated in one forward batch (``None``: every running rollout of the step).

    Raises:
        InvalidOptionError: A value out of range.
    """

    mode: str = "chain"
    dynamic_sampling: bool = False
    resample_rounds: int = 2
    tokens_per_turn: int = 160
    temperature: float = 1.0
    batch_size: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in ROLLOUT_MODES:
            raise InvalidOptionError(f"Unknown rollouts {self.mode!r}; expected one of {ROLLOUT_MODES}.")
        if (
            isinstance(self.resample_rounds, bool)
            or not isinstance(self.resample_rounds, int)
            or self.resample_rounds < 0
        ):
            raise InvalidOptionError(f"resample_rounds must be an integer >= 0, got {self.resample_rounds!r}.")


def _has_signal(group: Sequence[Rollout]) -> bool:
    return len({round(r.record["return"], 9) for r in group}) > 1


class RolloutSource:
    """TRL's ``rollout_func``: plays each step's groups with the trainer's current weights (module docstring).

    Args:
        config: What the rollouts play.
        options: How.
        tasks: The training tasks (dynamic sampling draws replacements among them).
        chat_format: How episodes are shown to the model.
        episodes: Where every rollout's episode is logged.
        seed: The run's seed.
    """

    def __init__(
        self,
        config: SessionConfig,
        options: RolloutOptions,
        *,
        tasks: Sequence[str | int],
        chat_format: ChatFormat,
        episodes: JsonlLog,
        seed: int = 0,
    ) -> None:
        self.config, self.options, self.tasks = config, options, list(tasks)
        self.chat_format, self.episodes, self.seed = chat_format, episodes, seed
        self.sampling = Sampling(temperature=options.temperature, max_new_tokens=options.tokens_per_turn)
        self.rows: list[Mapping[str, Any]] = []
        self.skip_step = False
        self._sessions: list[EpisodeSession] = []
        self._local: Any = None

    def _local_model(self, trainer: Any) -> Any:
        from agentgym_budget.agents.hf_model import local_model

        model = trainer.accelerator.unwrap_model(trainer.model)
        if self._local is None or self._local.model is not model:
            self._local = local_model(model, trainer.processing_class, self.chat_format)
        return self._local

    def _session_pool(self, size: int) -> list[EpisodeSession]:
        while len(self._sessions) < size:
            self._sessions.append(EpisodeSession(self.config))
        return self._sessions[:size]

    def _replacement(self, spec: GroupSpec, step: int, group: int, attempt: int) -> GroupSpec:
        draw = random.Random(rollout_seed(self.seed, "resample", step, group, attempt))
        fields = {key: value for key, value in spec.fields.items() if key != "task"}
        fields["task"] = draw.choice(self.tasks)
        fields["seed"] = draw.randrange(2**31)
        return replace(spec, fields=fields, seed=rollout_seed(spec.seed, "resample", attempt))

    def play_step(self, local: Any, specs: list[GroupSpec], step: int) -> tuple[list[list[Rollout]], dict[str, float]]:
        """Play ``specs`` (with dynamic sampling if set); returns the groups and the step's sampling metrics."""
        sessions = self._session_pool(sum(spec.size for spec in specs))
        groups = play_groups(
            local, sessions, specs, self.sampling, mode=self.options.mode, batch_size=self.options.batch_size
        )
        rounds = [0] * len(groups)
        first = sum(map(_has_signal, groups)) / len(groups)
        generated = sum(r.generated_tokens for group in groups for r in group)
        resampled = 0
        for attempt in range(1, self.options.resample_rounds + 1 if self.options.dynamic_sampling else 1):
            flat = [g for g, group in enumerate(groups) if not _has_signal(group)]
            if not flat:
                break
            specs = [
                self._replacement(specs[g], step, g, attempt) if g in flat else specs[g] for g in range(len(specs))
            ]
            again = play_groups(local, sessions[: sum(specs[g].size for g in flat)], [specs[g] for g in flat],
                                self.sampling, mode=self.options.mode, batch_size=self.options.batch_size)  # fmt: skip
            generated += sum(r.generated_tokens for group in again for r in group)
            for g, group in zip(flat, again, strict=True):
                for rollout in group:
                    rollout.group = g
                groups[g], rounds[g] = group, attempt
            resampled += len(flat)
        signal = sum(map(_has_signal, groups)) / len(groups)
        self.skip_step = self.options.dynamic_sampling and signal == 0
        self._log(groups, rounds, step)
        metrics = {"signal_groups_first": first, "signal_groups": signal, "groups_resampled": float(resampled)}
        return groups, metrics | {"step_skipped": float(self.skip_step), "generated_tokens": float(generated)}

    def _log(self, groups: list[list[Rollout]], rounds: list[int], step: int) -> None:
        for g, group in enumerate(groups):
            for rollout in group:
                line = episode_summary(rollout.record, step)
                self.episodes.append(
                    line | {"group_id": g, "start_turn": rollout.start_turn, "resample_round": rounds[g]}
                )

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        size = trainer.num_generations
        rows = self.rows[: len(prompts)]
        step = int(trainer.state.global_step) + 1
        specs = [
            GroupSpec(episode_fields(row, ignore={"prompt"}), size, rollout_seed(self.seed, step, g))
            for g, row in enumerate(rows[::size])
        ]
        was_training = trainer.model.training
        local = self._local_model(trainer)
        began = time.perf_counter()
        try:
            groups, metrics = self.play_step(local, specs, step)
        finally:
            local.model.train(was_training)
        rollouts = [r for group in groups for r in group]
        seconds = time.perf_counter() - began
        metrics |= {
            "rollout_s": seconds,
            "rollout_tokens_per_s": metrics["generated_tokens"] / seconds,
        }
        for key, value in metrics.items():
            trainer._metrics["train"][key].append(value)
        return {
            "prompt_ids": [r.prompt_ids for r in rollouts],
            "completion_ids": [r.completion_ids for r in rollouts],
            "logprobs": None,
            "env_mask": [r.model_mask for r in rollouts],
            "episode_return": [r.record["return"] for r in rollouts],
        }

    def close(self) -> None:
        """Close the sessions' env stacks."""
        for session in self._sessions:
            session.close()
        self._sessions = []


def episode_return(prompts: Any = None, completions: Any = None, episode_return: Any = None, **kwargs: Any) -> list:
    """The reward TRL reads: each rollout's episode return (shaped under ``--process-reward``)."""
    return [float(value) for value in episode_return]


def rollout_trainer(
    model: Any,
    processing_class: Any,
    args: Any,
    train_dataset: Any,
    source: RolloutSource,
    **kwargs: Any,
) -> Any:
    """A ``trl.GRPOTrainer`` whose rollouts come from ``source``, skipping the optimiser step when it says so.

    Raises:
        MissingDependencyError: ``trl`` is not installed (extra ``trl``).
    """
    trl = require("trl", extra="trl", feature="GRPO training through TRL", min_python=(3, 11))

    class RolloutGRPOTrainer(trl.GRPOTrainer):
        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            source.rows = inputs
            return super()._generate_and_score_completions(inputs)

        def create_optimizer(self, *args: Any, **kwargs: Any) -> Any:
            optimizer = super().create_optimizer(*args, **kwargs)
            step = optimizer.step

            def step_unless_skipped(*step_args: Any, **step_kwargs: Any) -> Any:
                if source.skip_step:
                    return None
                return step(*step_args, **step_kwargs)

            optimizer.step = step_unless_skipped
            return optimizer

    episode_return.__name__ = "episode_return"
    return RolloutGRPOTrainer(
        model=model,
        processing_class=processing_class,
        args=args,
        train_dataset=train_dataset,
        reward_funcs=[episode_return],
        rollout_func=source,
        **kwargs,
    )
