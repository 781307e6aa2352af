"""Multi-turn GRPO of a policy on the suite's environments, through TRL's ``GRPOTrainer(environment_factory=...)``.

Each rollout plays one episode in a :class:`~agentgym_budget.integrations.trl.BudgetToolEnv`
(one ``act`` call is one turn of the :class:`~agentgym_budget.wrappers.TurnBudget`). The dataset
rows carry the episode fields: row ``i`` is ``task = tasks[i % len(tasks)]``, ``seed = seed + i``;
its budget is the config's ``max_turns`` (recipe ``fixed``) or drawn from ``budgets`` by
:class:`~agentgym_budget.wrappers.BudgetMix` from the row's seed (recipe ``budgetmix``). TRL repeats
each row ``num_generations`` times, so every GRPO group plays one task under one budget and the
advantage compares like with like.

A reply with no ``act`` call is one turn (its text is the command), as the ``hf:PATH`` agent plays
it in evaluation (:func:`~agentgym_budget.integrations.trl.play_free_text`); TRL alone would end the
rollout there, and 66% of the training episodes of the first default study ended so, silently lost.

The reward is the episode's return (the family's reward, or the ProcessReward-shaped one).
Every trainer log goes to ``metrics.jsonl`` and every episode to ``episodes.jsonl``
(:mod:`agentgym_budget.train.metrics`); checkpoints go to ``checkpoints/checkpoint-N`` and a rerun
resumes from the last one (TRL's ``resume_from_checkpoint``), dropping the log lines of later steps.

Example::

    config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", budgets=(4, 8))
    run_grpo(model, tokenizer, config, GRPOSettings(steps=60), tasks=range(40), out="runs/rl", seed=0)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.chat.tool import DEFAULT_SYSTEM_PROMPT
from agentgym_budget.dependencies import require
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.trl import dataset_rows, grpo_trainer
from agentgym_budget.runner.quiet import quiet_progress
from agentgym_budget.train.credit import check_credit
from agentgym_budget.train.device import DeviceSettings, grpo_generation_arguments, trainer_arguments
from agentgym_budget.train.metrics import EpisodeRecorder, JsonlLog, metrics_callback
from agentgym_budget.train.quiet import bar_only, quiet_trainer
from agentgym_budget.train.rollout_trainer import RolloutOptions, RolloutSource, rollout_trainer
from agentgym_budget.train.rollouts import ROLLOUT_MODES
from agentgym_budget.train.sft import checkpoint_step, last_checkpoint

__all__ = ["GRPOSettings", "run_grpo"]

GENERATIONS = ("trl", "cached")
"""Who plays GRPO's rollouts: TRL's multi-turn loop, or the package's cached rollouts."""


@dataclass(frozen=True)
class GRPOSettings:
    """Hyper-parameters of multi-turn GRPO.

    Attributes:
        steps: Optimiser steps.
        episodes_per_step: Rollouts per step (``num_generations`` per group, so
            ``episodes_per_step / num_generations`` tasks a step).
        num_generations: Rollouts of the same task and budget compared by GRPO.
        learning_rate: Learning rate (constant after a short warm-up). On the default study's tiny model
            (Coin Collector level 3, beta 0.04), 1e-4 left the training success flat over 60 steps, 3e-4
            and 1e-3 broke the tool-call format within 20 steps (entropy and KL exploded), 2e-4 was stable.
        temperature: Sampling temperature of the rollouts.
        beta: KL coefficient to the reference model (the starting policy). Without it (0, TRL's default)
            the tiny model learned within 10 to 20 steps to stop calling the tool at all (Coin Collector
            level 3, learning rates 2e-4 and 5e-4, either loss averaging).
        tokens_per_turn: Completion tokens allowed per turn; ``max_completion_length`` is this times the
            largest budget plus one (tool answers count toward it).
        save_steps: Steps between checkpoints.
        loss_type: TRL's loss aggregation. ``"grpo"`` (default) averages each rollout's token losses
            first, so a failed episode's many turns do not outweigh a won episode's few.
        credit: ``"episode"`` (TRL's GRPO: one advantage per rollout), ``"turn"`` or ``"gigpo"``
            (per-turn advantages, :mod:`agentgym_budget.train.credit`); only the per-turn modes let a
            process reward change what is learnt.
        gamma: Discount of the per-turn returns (``turn``, ``gigpo``), in ``(0, 1]``.
        step_weight: Weight of GiGPO's step advantage beside the episode advantage.
        rollouts: ``"chain"`` (``G`` episodes of a task from its start) or ``"tree"`` (``G`` continuations of
            one state of a first episode, forked exactly: :mod:`agentgym_budget.train.rollouts`).
        generation: ``"trl"`` (TRL's multi-turn loop; chain rollouts only) or ``"cached"`` (the package's
            batched, key/value-cached rollouts). Tree rollouts and dynamic sampling need ``"cached"``, which
            they select when ``generation`` is left at its default.
        dynamic_sampling: Play groups whose rollouts all agree again on other tasks and skip steps
            without reward signal (:mod:`agentgym_budget.train.rollout_trainer`).
        resample_rounds: Most times a group is played again under ``dynamic_sampling``.
        micro_batch: Rollouts whose loss is computed in one forward / backward pass (default: the whole step).
            The step's gradient is accumulated over ``episodes_per_step / micro_batch`` passes, so the update is
            the same up to rounding; peak memory falls with it (SmolLM2-135M, 8 rollouts of budget 6 in one
            pass: 17.8 GB resident, killed on a 24 GB machine beside other jobs).

    Raises:
        InvalidOptionError: A value out of range, or ``episodes_per_step`` not a multiple of ``num_generations``.

    Example:
        >>> GRPOSettings(episodes_per_step=6, num_generations=4)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: GRPOSettings: episodes_per_step=6 must be a multiple of num_generations=4.
    """

    steps: int = 60
    episodes_per_step: int = 8
    num_generations: int = 4
    learning_rate: float = 2e-4
    temperature: float = 1.0
    beta: float = 0.04
    tokens_per_turn: int = 160
    save_steps: int = 10
    loss_type: str = "grpo"
    credit: str = "episode"
    gamma: float = 1.0
    step_weight: float = 1.0
    rollouts: str = "chain"
    generation: str | None = None
    dynamic_sampling: bool = False
    resample_rounds: int = 2
    micro_batch: int | None = None

    def __post_init__(self) -> None:
        check_credit(self.credit, self.gamma, self.step_weight)
        self._check_rollouts()
        for name in ("steps", "episodes_per_step", "num_generations", "tokens_per_turn", "save_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidOptionError(f"GRPOSettings: {name} must be a positive integer, got {value!r}.")
        if self.num_generations < 2:
            raise InvalidOptionError("GRPOSettings: num_generations must be >= 2 (GRPO compares rollouts of a group).")
        if self.micro_batch is not None and (
            isinstance(self.micro_batch, bool) or self.micro_batch < 1 or self.episodes_per_step % self.micro_batch
        ):
            raise InvalidOptionError(
                f"GRPOSettings: micro_batch={self.micro_batch!r} must be a positive divisor of "
                f"episodes_per_step={self.episodes_per_step}."
            )
        if self.episodes_per_step % self.num_generations:
            raise InvalidOptionError(
                f"GRPOSettings: episodes_per_step={self.episodes_per_step} must be a multiple of "
                f"num_generations={self.num_generations}."
            )
        if not 0 < self.learning_rate < 1 or not 0 < self.temperature <= 5 or self.beta < 0:
            raise InvalidOptionError(
                f"GRPOSettings: learning_rate in (0, 1), temperature in (0, 5], beta >= 0 expected; got "
                f"{self.learning_rate}, {self.temperature}, {self.beta}."
            )

    def _check_rollouts(self) -> None:
        if self.rollouts not in ROLLOUT_MODES:
            raise InvalidOptionError(f"GRPOSettings: rollouts must be one of {ROLLOUT_MODES}, got {self.rollouts!r}.")
        if self.generation not in (None, *GENERATIONS):
            raise InvalidOptionError(f"GRPOSettings: generation must be one of {GENERATIONS}, got {self.generation!r}.")
        if self.uses_cached_rollouts and self.generation == "trl":
            raise InvalidOptionError(
                "GRPOSettings: tree rollouts and dynamic sampling need generation='cached' (TRL's own loop plays "
                "chains of whole episodes only)."
            )
        RolloutOptions(self.rollouts, self.dynamic_sampling, self.resample_rounds)

    def check_trl_credit(self) -> None:
        """Refuse per-turn credit with the package's cached rollouts when a generating policy trains (TRL's loop
        alone records turns for it; a scoring policy's rollouts support every credit with every rollout mode).

        Raises:
            InvalidOptionError: ``credit`` is not ``episode`` and the rollouts are cached, tree or dynamic.
        """
        if self.uses_cached_rollouts and self.credit != "episode":
            raise InvalidOptionError(
                f"GRPOSettings: credit={self.credit!r} needs TRL's rollouts (generation='trl', chain rollouts, no "
                "dynamic sampling); the cached rollouts train with episode credit within each group."
            )

    @property
    def uses_cached_rollouts(self) -> bool:
        """Whether the package plays the rollouts (:mod:`agentgym_budget.train.rollouts`) rather than TRL's loop."""
        return self.generation == "cached" or self.rollouts == "tree" or self.dynamic_sampling

    def rollout_options(self) -> RolloutOptions:
        """The options of the package's rollouts."""
        return RolloutOptions(
            self.rollouts, self.dynamic_sampling, self.resample_rounds, self.tokens_per_turn, self.temperature
        )

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


def largest_budget(config: SessionConfig) -> int:
    """The largest budget an episode of ``config`` can have.

    Example:
        >>> largest_budget(SessionConfig("WebShop-1k-v0", budgets=(4, 12, 8)))
        12
    """
    return max(config.budgets) if config.budgets else config.max_turns


def staged_budgets(budgets: Sequence[int], settings: GRPOSettings) -> list[int]:
    """The budget of every GRPO group of a curriculum: ``budgets`` in stages of equal length, in order.

    Stage ``k`` covers steps ``[k * steps / n, (k + 1) * steps / n)`` (``n`` stages); every group of a
    step has that step's budget.

    Example:
        >>> staged_budgets([2, 4, 8], GRPOSettings(steps=6, episodes_per_step=4, num_generations=2))
        [2, 2, 2, 2, 4, 4, 4, 4, 8, 8, 8, 8]
    """
    stages = sorted(budgets)
    per_step = settings.episodes_per_step // settings.num_generations
    return [stages[step * len(stages) // settings.steps] for step in range(settings.steps) for _ in range(per_step)]


def _pin_reference(model: Any, tokenizer: Any, directory: Path) -> None:
    """Save the starting policy once (a resumed run must keep the first one) and make TRL load it as the reference.

    TRL builds the KL reference model from ``model.config.name_or_path``: empty for a model built in
    memory, and the wrong weights for a model reloaded from a later checkpoint.
    """
    if not (directory / "config.json").is_file():
        temporary = directory.with_name(directory.name + ".tmp")
        model.save_pretrained(temporary)
        tokenizer.save_pretrained(temporary)
        temporary.rename(directory)
    model.config._name_or_path = str(directory)


def _grpo_arguments(
    trl: Any,
    config: SessionConfig,
    settings: GRPOSettings,
    out: Path,
    *,
    seed: int,
    progress: bool,
    report_to: Sequence[str],
    device: DeviceSettings | None = None,
) -> Any:
    """TRL's ``GRPOConfig`` for ``settings``: room for one more tool call than the largest budget; placement and
    rollout generation (vLLM colocate) from ``device`` (default: the CPU, transformers' generation)."""
    device = device or DeviceSettings()
    turns = largest_budget(config) + 1  # one more call lets the model learn to stop after the end
    return trl.GRPOConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=settings.steps,
        per_device_train_batch_size=settings.micro_batch or settings.episodes_per_step,
        gradient_accumulation_steps=settings.episodes_per_step // (settings.micro_batch or settings.episodes_per_step),
        num_generations=settings.num_generations,
        learning_rate=settings.learning_rate,
        lr_scheduler_type="constant_with_warmup",
        warmup_steps=min(5, settings.steps // 10),
        temperature=settings.temperature,
        beta=settings.beta,
        loss_type=settings.loss_type,
        max_completion_length=settings.tokens_per_turn * turns,
        max_tool_calling_iterations=turns,
        logging_steps=1,
        **trainer_arguments(device, save_steps=settings.save_steps, seed=seed, progress=progress, report_to=report_to),
        **grpo_generation_arguments(device),
        shuffle_dataset=False,
    )


def _train(trainer: Any, checkpoints: Path, *, resume: bool, logs: Sequence[JsonlLog]) -> Any:
    """Run ``trainer`` (from the last checkpoint when resuming), then close its envs.

    ``logs`` are cut back to the step training starts from: the checkpoint's, or 0 when there is none (a run
    stopped before its first checkpoint starts over, and the stopped attempt's lines must not count twice).
    """
    checkpoint = last_checkpoint(checkpoints) if resume else None
    for log in logs:
        log.truncate_after(checkpoint_step(checkpoint) if checkpoint else 0)
    try:
        result = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    finally:
        # TRL never closes its environments; a game engine left to the garbage collector may crash it.
        for environment in getattr(trainer, "environments", None) or ():
            environment.session.close()
    return result


def _build_trainer(
    model: Any,
    tokenizer: Any,
    config: SessionConfig,
    args: Any,
    dataset: Any,
    settings: GRPOSettings,
    **trainer_arguments: Any,
) -> Any:
    """The GRPO trainer of ``settings.credit``: TRL's episode-level one, or the turn-level credit trainer."""
    build, credit = grpo_trainer, {}
    if settings.credit != "episode":
        from agentgym_budget.train.turn_grpo import turn_credit_trainer

        build = turn_credit_trainer
        credit = {"credit": settings.credit, "gamma": settings.gamma, "step_weight": settings.step_weight}
    return build(model, tokenizer, config, args, dataset, **trainer_arguments, **credit)


def _trainer(
    model: Any,
    tokenizer: Any,
    config: SessionConfig,
    args: Any,
    rows: list[dict[str, Any]],
    settings: GRPOSettings,
    *,
    tasks: Sequence[str | int],
    episodes: JsonlLog,
    callbacks: Sequence[Any],
    system_prompt: str,
    seed: int,
) -> tuple[Any, RolloutSource | None]:
    """The trainer of ``settings``: with the package's rollouts (and their source), or with TRL's own loop."""
    datasets = require("datasets", extra="trl", feature="GRPO training")
    dataset = datasets.Dataset.from_list(rows)
    if settings.uses_cached_rollouts:
        chat_format = ChatFormat(system_prompt, config.show_actions, config.show_budget, env=config.ref.label)
        source = RolloutSource(
            config, settings.rollout_options(), tasks=tasks, chat_format=chat_format, episodes=episodes, seed=seed
        )
        return rollout_trainer(model, tokenizer, args, dataset, source, callbacks=list(callbacks)), source
    recorder = EpisodeRecorder(episodes)
    trainer = _build_trainer(
        model, tokenizer, config, args, dataset, settings, reward_funcs=[recorder], callbacks=list(callbacks)
    )
    recorder.trainer = trainer
    return trainer, None


def run_grpo(
    model: Any,
    tokenizer: Any,
    config: SessionConfig,
    settings: GRPOSettings,
    *,
    tasks: Sequence[str | int],
    out: str | Path,
    seed: int = 0,
    resume: bool = True,
    progress: bool = True,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    callbacks: Sequence[Any] = (),
    report_to: Sequence[str] = (),
    budget_stages: Sequence[int] | None = None,
    device: DeviceSettings | None = None,
) -> Any:
    """Train ``model`` with GRPO on ``tasks`` of ``config``; returns TRL's ``TrainOutput``.

    Writes ``out/checkpoints/checkpoint-N``, ``out/metrics.jsonl``, ``out/episodes.jsonl`` and, with a KL
    term, ``out/reference`` (the starting policy). With
    ``resume`` (the default) a run that finds a checkpoint in ``out`` continues from it; ``callbacks`` are extra
    ``transformers.TrainerCallback`` s. ``budget_stages`` (a curriculum) splits the steps into that many
    stages of equal length played at those budgets in order (:func:`staged_budgets`). ``device`` places the
    training and picks the rollout generator (default: the CPU; :mod:`agentgym_budget.train.device`).

    Raises:
        InvalidOptionError: No task.
        MissingDependencyError: The ``trl`` extra is missing.
    """
    trl = require("trl", extra="trl", feature="GRPO training", min_python=(3, 11))
    settings.check_trl_credit()
    if not tasks:
        raise InvalidOptionError("run_grpo needs at least one training task.")
    out = Path(out)
    groups = settings.steps * settings.episodes_per_step // settings.num_generations
    rows = dataset_rows(config, episodes=groups, seed=seed, tasks=list(tasks), system_prompt=system_prompt)
    if budget_stages:
        for row, budget in zip(rows, staged_budgets(budget_stages, settings), strict=True):
            row["max_turns"] = budget
    args = _grpo_arguments(trl, config, settings, out, seed=seed, progress=progress, report_to=report_to, device=device)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    episodes = JsonlLog(out / "episodes.jsonl")
    metrics = JsonlLog(out / "metrics.jsonl")
    with quiet_progress(not progress):
        if settings.beta > 0:
            _pin_reference(model, tokenizer, out / "reference")
        trainer, source = _trainer(
            model,
            tokenizer,
            config,
            args,
            rows,
            settings,
            tasks=tasks,
            episodes=episodes,
            callbacks=[metrics_callback(metrics, "rl"), *callbacks],
            system_prompt=system_prompt,
            seed=seed,
        )
        quiet_trainer(trainer) if not progress else bar_only(trainer)
        try:
            result = _train(trainer, out / "checkpoints", resume=resume, logs=(metrics, episodes))
        finally:
            if source is not None:
                source.close()
    trainer.model.eval()
    return result
