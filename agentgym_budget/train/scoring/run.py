"""A scoring run's phases: SFT over the candidates, then RL with group-relative PPO; checkpoints, logs, resume.

:func:`score_phases` runs the phases of a :class:`~agentgym_budget.train.config.TrainConfig` whose
``policy`` is ``"score"`` into the run directory that :func:`~agentgym_budget.train.recipe.run_training`
manages (same layout as the generation path: ``sft/``, ``rl/``, ``final/``):

1. **SFT** (unless ``init``): :mod:`~agentgym_budget.train.scoring.sft` on ``sft_agent``'s won episodes of the
   first ``train_tasks`` training tasks; the base is ``model`` (or the built-in tiny model).
2. **RL** (every recipe but ``sft``): each step plays ``episodes_per_step / num_generations`` groups of the
   recipe's budget (``fixed``), a BudgetMix draw (``budgetmix``) or the curriculum stage's
   (``curriculum``), in lockstep (:mod:`~agentgym_budget.train.scoring.episodes`); the advantages are the
   generation path's (:func:`~agentgym_budget.train.credit.turn_advantages`: ``episode``, ``turn`` or
   ``gigpo`` credit, the process reward with ``process_reward``); with ``dynamic_sampling`` groups whose
   returns all agree are played again on other tasks and a step without signal skips the update; then
   ``epochs`` PPO steps (:mod:`~agentgym_budget.train.scoring.update`).

Both phases write ``metrics.jsonl`` (per step; RL: ``reward``, ``success``, ``frac_reward_zero_std``,
``loss``, ``kl``, ``clip_fraction``, ``entropy``, and the rollout's and update's wall and CPU seconds) and
checkpoints every ``save_steps`` (:mod:`~agentgym_budget.train.scoring.weights`); RL also writes
``episodes.jsonl``. A rerun resumes from the last checkpoint to the same weights and logs. ``final/`` holds the
whole model (LoRA merged), its tokenizer, ``agentgym_scoring.json`` and ``agentgym_chat.json``: it plays as
``score:OUT/final`` and as ``hf:OUT/final``.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentgym_budget.agents.hf_model import load_causal_lm, local_model
from agentgym_budget.agents.scoring.agent import ScoringModel
from agentgym_budget.agents.scoring.prompt import PromptCodec, ScoringFormat
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.session import EpisodeSession
from agentgym_budget.storage.safe_json import read_json_file
from agentgym_budget.train.credit import RolloutTurns, turn_advantages
from agentgym_budget.train.grpo import staged_budgets
from agentgym_budget.train.metrics import JsonlLog, episode_summary
from agentgym_budget.train.rollouts import GroupSpec, rollout_seed
from agentgym_budget.train.scoring.episodes import PlayOptions, ScoringRollout, play_groups
from agentgym_budget.train.scoring.sft import demonstrations, prepare, sft_step
from agentgym_budget.train.scoring.update import TrainedEpisode, ppo_update
from agentgym_budget.train.scoring.weights import (
    TrainedPolicy,
    last_checkpoint,
    load_checkpoint,
    prepare_policy,
    save_checkpoint,
)

__all__: list[str] = []


class _Clock:
    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self) -> tuple[float, float]:
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return round(wall, 3), round(cpu, 3)


def _scoring(model: Any, tokenizer: Any, config: Any, path: Path) -> tuple[ScoringModel, Any]:
    """The model as the ``score:`` agent reads it (its tokenizer prepared the same way, the run's ``history``) and its
    tokenizer."""
    local = local_model(model, tokenizer, config.chat_format(), path)
    codec = PromptCodec(local.tokenizer, replace(ScoringFormat.load(path), history=config.score.history))
    return ScoringModel(local.model, codec, local.pad_id, local.context), local.tokenizer


def _save_final(policy: TrainedPolicy, tokenizer: Any, final: Path, config: Any, scoring_format: ScoringFormat) -> None:
    from agentgym_budget.train.base_model import save_model

    temporary = final.with_name(final.name + ".tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    save_model(policy.merged(), tokenizer, temporary, config.chat_format())
    replace(scoring_format, env=config.session_config().ref.label).save(temporary)
    shutil.rmtree(final, ignore_errors=True)
    temporary.rename(final)


def _optimizer(policy: TrainedPolicy, learning_rate: float) -> Any:
    import torch

    return torch.optim.AdamW(list(policy.parameters.values()), lr=learning_rate, weight_decay=0.0)


def _resume(policy: TrainedPolicy, optimizer: Any, directory: Path, logs: tuple[JsonlLog, ...]) -> int:
    checkpoint = last_checkpoint(directory / "checkpoints")
    step = load_checkpoint(policy, optimizer, checkpoint) if checkpoint is not None else 0
    for log in logs:
        log.truncate_after(step)
    return step


def _base(config: Any, episodes: list[dict[str, Any]], directory: Path) -> Path:
    """``sft/base``: the base model saved once (reloaded from disk, so a resumed run trains the same one)."""
    from agentgym_budget.train.base_model import save_model

    base = directory / "base"
    if (base / "config.json").is_file():
        return base
    if config.model is not None:
        from agentgym_budget.agents.pretrained import resolve_model

        model, tokenizer = load_causal_lm(resolve_model(config.model))
    else:
        from agentgym_budget.train.tiny_lm import build_tiny_lm

        texts = [t["observation"] for e in episodes for t in e["turns"]] + [e["goal"] for e in episodes]
        texts += [" | ".join(t["admissible"]) for e in episodes for t in e["turns"]]
        tiny = config.tiny
        model, tokenizer = build_tiny_lm(texts, seed=config.seed, vocab_size=tiny.vocab_size,
                                         hidden_size=tiny.hidden_size, layers=tiny.layers, heads=tiny.heads,
                                         max_positions=tiny.max_positions)  # fmt: skip
    temporary = base.with_name("base.tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    save_model(model, tokenizer, temporary, config.chat_format())
    ScoringFormat(history=config.score.history, env=config.session_config().ref.label).save(temporary)
    temporary.rename(base)
    return base


def _steps_bar(progress: bool, phase: str, steps: int, done: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=steps, initial=done, desc=phase, unit="step", disable=not progress)


def _sft_phase(config: Any, out: Path, progress: bool) -> Path:
    directory = out / "sft"
    final = directory / "final"
    if (final / "config.json").is_file():
        return final
    stored = directory / "demonstrations.json"
    if stored.is_file():
        episodes = read_json_file(stored, what="scoring demonstrations", expected=list)
    else:
        episodes = demonstrations(config.session_config(), config.sft_agent, tasks=range(config.train_tasks),
                                  episodes_per_task=config.sft_episodes_per_task, budget=config.largest_budget,
                                  seed=config.seed, progress=progress)  # fmt: skip
        directory.mkdir(parents=True, exist_ok=True)
        stored.write_text(json.dumps(episodes))
    if not any(e["won"] for e in episodes):
        raise InvalidOptionError(
            f"None of the {len(episodes)} demonstration episodes of {config.sft_agent} was won within budget "
            f"{config.largest_budget}: SFT has nothing to imitate (give a larger budget or more --train-tasks)."
        )
    base = _base(config, episodes, directory)
    model, tokenizer = load_causal_lm(base)
    scoring, tokenizer = _scoring(model, tokenizer, config, base)
    policy = prepare_policy(scoring.model, config.score)
    settings, sft = config.score, config.sft
    optimizer = _optimizer(policy, sft.learning_rate)
    log = JsonlLog(directory / "metrics.jsonl")
    step = _resume(policy, optimizer, directory, (log,))
    clock, began = _Clock(), time.perf_counter()
    prepared = prepare(scoring, episodes, capture=policy.capture, batch_size=settings.batch_size,
                       mask_errors=config.sft_mask_errors, progress=progress)  # fmt: skip
    prepare_wall, prepare_cpu = clock.lap()
    bar = _steps_bar(progress, "SFT", sft.steps, step)
    while step < sft.steps:
        metrics = sft_step(policy, optimizer, prepared, step=step, steps=sft.steps, peak=sft.learning_rate,
                           batch_size=sft.batch_size, seed=config.seed, normalise=settings.normalise,
                           pad_id=scoring.pad_id, rows=settings.update_rows)  # fmt: skip
        step += 1
        wall, cpu = clock.lap()
        log.append({"step": step, **metrics, "wall_s": wall, "cpu_s": cpu, "prepare_s": prepare_wall,
                    "prepare_cpu_s": prepare_cpu, "elapsed_s": round(time.perf_counter() - began, 1)})  # fmt: skip
        prepare_wall = prepare_cpu = 0.0
        bar.update(1)
        bar.set_postfix(loss=f"{metrics['loss']:.3f}", accuracy=f"{metrics['accuracy']:.2f}")
        if step % sft.save_steps == 0 or step == sft.steps:
            save_checkpoint(policy, optimizer, directory / "checkpoints", step)
    bar.close()
    _save_final(policy, tokenizer, final, config, scoring.codec.format)
    return final


def _group_rows(config: Any, tasks: list[Any]) -> list[dict[str, Any]]:
    """Every group's episode fields, in order (``task``, ``seed``; ``max_turns`` in a curriculum)."""
    grpo = config.grpo
    groups = grpo.steps * grpo.episodes_per_step // grpo.num_generations
    rows = [{"task": tasks[i % len(tasks)], "seed": config.seed + i} for i in range(groups)]
    if config.budget_stages:
        for row, budget in zip(rows, staged_budgets(config.budget_stages, grpo), strict=True):
            row["max_turns"] = budget
    return rows


def _has_signal(group: list[ScoringRollout]) -> bool:
    return len({round(r.record["return"], 9) for r in group}) > 1


def _replacement(spec: GroupSpec, tasks: list[Any], seed: int, step: int, group: int, attempt: int) -> GroupSpec:
    draw = random.Random(rollout_seed(seed, "resample", step, group, attempt))
    fields = {k: v for k, v in spec.fields.items() if k != "task"} | {"task": draw.choice(tasks)}
    fields["seed"] = draw.randrange(2**31)
    return replace(spec, fields=fields, seed=rollout_seed(spec.seed, "resample", attempt))


def _play_step(config: Any, scoring: ScoringModel, sessions: list[EpisodeSession], specs: list[GroupSpec],
               options: PlayOptions, step: int, tasks: list[Any]) -> tuple[list[list[ScoringRollout]], list[int]]:  # fmt: skip
    """The step's groups, replayed on other tasks while they carry no signal (dynamic sampling)."""
    grpo = config.grpo
    groups = play_groups(scoring, sessions, specs, options, mode=grpo.rollouts)
    rounds = [0] * len(groups)
    for attempt in range(1, grpo.resample_rounds + 1 if grpo.dynamic_sampling else 1):
        flat = [g for g, group in enumerate(groups) if not _has_signal(group)]
        if not flat:
            break
        again = [_replacement(specs[g], tasks, config.seed, step, g, attempt) for g in flat]
        for g, spec in zip(flat, again, strict=True):
            specs[g] = spec
        for g, group in zip(flat, play_groups(scoring, sessions, again, options, mode=grpo.rollouts), strict=True):
            for rollout in group:
                rollout.group = g
            groups[g], rounds[g] = group, attempt
    return groups, rounds


def _advantages(config: Any, groups: list[list[ScoringRollout]]) -> list[TrainedEpisode]:
    grpo, episodes = config.grpo, []
    for group in groups:
        turns = [RolloutTurns(tuple(t.reward for t in r.trained_turns),
                              tuple(t.state for t in r.trained_turns) if grpo.credit == "gigpo" else ())
                 for r in group]  # fmt: skip
        advantages = turn_advantages(turns, grpo.credit, gamma=grpo.gamma, step_weight=grpo.step_weight)
        for rollout, values in zip(group, advantages, strict=True):
            episodes.append(TrainedEpisode(rollout.tokens.all_segments(), rollout.trained_turns, values))
    return episodes


def _rl_step_metrics(groups: list[list[ScoringRollout]], rounds: list[int]) -> dict[str, float]:
    rollouts = [r for group in groups for r in group]
    signal = sum(map(_has_signal, groups)) / len(groups)
    return {
        "reward": sum(r.record["return"] for r in rollouts) / len(rollouts),
        "success": sum(bool(r.record["won"]) for r in rollouts) / len(rollouts),
        "frac_reward_zero_std": 1 - signal,
        "signal_groups": signal,
        "groups_resampled": float(sum(1 for r in rounds if r)),
        "turns": sum(len(r.trained_turns) for r in rollouts) / len(rollouts),
    }


def _rl_phase(config: Any, start: Path, out: Path, progress: bool) -> Path:
    directory = out / "rl"
    final = directory / "final"
    if (final / "config.json").is_file():
        return final
    grpo, settings = config.grpo, config.score
    model, tokenizer = load_causal_lm(start)
    scoring, tokenizer = _scoring(model, tokenizer, config, start)
    policy = prepare_policy(scoring.model, settings, reference=grpo.beta > 0)
    optimizer = _optimizer(policy, grpo.learning_rate)
    metrics_log, episodes_log = JsonlLog(directory / "metrics.jsonl"), JsonlLog(directory / "episodes.jsonl")
    step = _resume(policy, optimizer, directory, (metrics_log, episodes_log))
    tasks = list(range(config.train_tasks))
    rows = _group_rows(config, tasks)
    per_step = grpo.episodes_per_step // grpo.num_generations
    options = PlayOptions(grpo.temperature, settings.epsilon, settings.normalise, settings.batch_size,
                          policy.capture, grpo.credit == "gigpo")  # fmt: skip
    session_config = config.session_config()
    if grpo.credit == "gigpo":
        session_config = replace(session_config, info_keys=(*session_config.info_keys, "state_digest"))
    sessions = [EpisodeSession(session_config) for _ in range(grpo.episodes_per_step)]
    clock, began = _Clock(), time.perf_counter()
    bar = _steps_bar(progress, f"RL ({config.recipe})", grpo.steps, step)
    try:
        while step < grpo.steps:
            step += 1
            specs = [GroupSpec(rows[(step - 1) * per_step + g], grpo.num_generations, rollout_seed(config.seed, step, g))
                     for g in range(per_step)]  # fmt: skip
            groups, rounds = _play_step(config, scoring, sessions, specs, options, step, tasks)
            rollout_wall, rollout_cpu = clock.lap()
            record = {"step": step, **_rl_step_metrics(groups, rounds)}
            skip = grpo.dynamic_sampling and record["signal_groups"] == 0
            if not skip:
                record |= ppo_update(policy, optimizer, _advantages(config, groups), settings=settings,
                                     temperature=grpo.temperature, beta=grpo.beta, pad_id=scoring.pad_id)  # fmt: skip
            update_wall, update_cpu = clock.lap()
            record |= {"step_skipped": float(skip), "rollout_s": rollout_wall, "rollout_cpu_s": rollout_cpu,
                       "update_s": update_wall, "update_cpu_s": update_cpu,
                       "elapsed_s": round(time.perf_counter() - began, 1)}  # fmt: skip
            for g, group in enumerate(groups):
                for rollout in group:
                    episodes_log.append(episode_summary(rollout.record, step) | {"group_id": g,
                                        "start_turn": rollout.start_turn, "resample_round": rounds[g]})  # fmt: skip
            metrics_log.append(record)
            bar.update(1)
            bar.set_postfix(success=f"{record['success']:.2f}")
            if step % grpo.save_steps == 0 or step == grpo.steps:
                save_checkpoint(policy, optimizer, directory / "checkpoints", step)
    finally:
        bar.close()
        for session in sessions:
            session.close()
    _save_final(policy, tokenizer, final, config, scoring.codec.format)
    return final


def score_phases(config: Any, out: Path, *, progress: bool = False) -> Path:
    """Run (or resume) the phases of a scoring ``config`` in ``out``; returns the last phase's ``final``.

    ``progress`` draws a bar per stretch of work: demonstrations played, demonstrations read through the frozen
    blocks, SFT steps (loss, accuracy), RL steps (the step's training success).
    """
    start = Path(config.init) if config.init is not None else _sft_phase(config, out, progress)
    return start if config.recipe == "sft" else _rl_phase(config, start, out, progress)
