"""Training recipes: ``sft`` (base policy), ``fixed`` (GRPO at one budget), ``budgetmix`` (GRPO, budget drawn per
episode), ``curriculum`` (GRPO, budgets growing in stages).

:func:`run_training` runs a :class:`TrainConfig` into a directory, phase by phase:

1. **SFT** (every recipe, unless ``init`` names a checkpoint to start RL from): the demonstrations
   (:func:`~agentgym_budget.train.trajectories.agent_conversations` of ``sft_agent`` on the first
   ``train_tasks`` tasks of the train split, won episodes only), then the base model (the built-in
   tiny Qwen2 with a tokenizer trained on those conversations, or ``model``: any local Hugging Face
   causal LM), fine-tuned with TRL's ``SFTTrainer``.
2. **RL** (``fixed``, ``budgetmix``): multi-turn GRPO (:func:`~agentgym_budget.train.grpo.run_grpo`)
   from the SFT result (or ``init``) on the same training tasks; ``fixed`` plays every episode at
   ``budget``, ``budgetmix`` draws each episode's budget from ``budgets`` with
   :class:`~agentgym_budget.wrappers.BudgetMix`, ``curriculum`` plays the budgets in increasing
   stages of equal length (the first ``1/len(budgets)`` of the steps at the smallest, and so on, as
   AgentGym-RL's ScalingInter-RL grows the interaction horizon); ``show_budget`` shows ``[Turns left: k of T]``,
   ``process_reward`` trains on the ProcessReward-shaped return.

Layout of ``out``::

    run.json                  the TrainConfig (a rerun must match it: it resumes); ``init`` relative to ``out``
    provenance.json           what produced the run (versions, the base model's SHA-256, ...: runner.provenance)
    sft/demonstrations.jsonl  one record per demonstration episode played (won, turns, commands, ...)
    sft/base/                 the untrained base model and its tokenizer
    sft/checkpoints/          TRL checkpoints (checkpoint-N); sft/metrics.jsonl: loss by step
    sft/final/                the fine-tuned model (save_pretrained + agentgym_chat.json)
    rl/checkpoints/           GRPO checkpoints; rl/metrics.jsonl (reward, loss, ...), rl/episodes.jsonl
    rl/final/                 the RL model
    final/                    the recipe's result (a copy of the last phase's final/): load it as hf:OUT/final
                              (and, with ``policy="score"``, as score:OUT/final)
    summary.json, training.png  (the plot is redrawn at every checkpoint)

A killed run rerun with the same arguments and ``out`` resumes: finished phases are skipped (their
``final/`` exists), an unfinished one continues from its last checkpoint.

A scoring policy (``policy="score"``) runs the same phases through :mod:`agentgym_budget.train.scoring`.

Example::

    config = TrainConfig("TextWorld-CoinCollector-v0", env_kwargs="level=3", recipe="budgetmix", budgets=(4, 6, 8))
    summary = run_training(config, "runs/train-bm")
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentgym_budget.agents.hf_model import load_causal_lm
from agentgym_budget.agents.registry import parse_agent
from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.errors import DataError, InvalidOptionError, RunConfigError
from agentgym_budget.runner.provenance import run_inputs, write_provenance
from agentgym_budget.runner.quiet import quiet_progress
from agentgym_budget.runner.store import same_path
from agentgym_budget.storage.safe_json import read_json_file
from agentgym_budget.train.base_model import build_base_model, save_model
from agentgym_budget.train.config import RECIPES as RECIPES  # also importable from here, as before
from agentgym_budget.train.config import TrainConfig
from agentgym_budget.train.device import check_device
from agentgym_budget.train.grpo import run_grpo
from agentgym_budget.train.metrics import JsonlLog
from agentgym_budget.train.sft import run_sft
from agentgym_budget.train.trajectories import Trajectories, agent_conversations

__all__ = ["run_training"]


def _check_run(config: TrainConfig, out: Path) -> None:
    """Pin ``config`` in ``out/run.json``, or check that a run there was started with the same settings.

    ``init`` is stored relative to ``out`` (a study's RL runs: ``../sft/final``), so a run directory moved
    together with its starting checkpoint resumes; one stored as given (runs before this) still matches
    when it names the same directory, and is rewritten in the relative form.
    """
    path = out / "run.json"
    wanted = config.to_json()
    if config.init is not None:
        wanted["init"] = os.path.relpath(Path(config.init).resolve(), out.resolve())
    if path.exists():
        found = read_json_file(path, what="training run", expected=dict)
        if found != wanted and {**found, "init": wanted["init"]} == wanted and same_path(found["init"], config.init):
            path.write_text(json.dumps(wanted, indent=2, sort_keys=True) + "\n")
            return
        if found != wanted:
            changed = sorted(k for k in set(found) | set(wanted) if found.get(k) != wanted.get(k))
            raise RunConfigError(
                f"{out} holds a training run with other settings ({', '.join(changed)} differ); rerun with the same "
                "arguments to resume it, or give another --out."
            )
        return
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(wanted, indent=2, sort_keys=True) + "\n")


def _demonstrations(config: TrainConfig, directory: Path, progress: bool) -> Trajectories:
    path = directory / "demonstrations.json"
    if path.exists():
        stored = read_json_file(path, what="training demonstrations", expected=dict)
        if not isinstance(stored.get("conversations"), list) or not isinstance(stored.get("records"), list):
            raise DataError(f"training demonstrations: {path} lacks the lists 'conversations' and 'records'.")
        return Trajectories(stored["conversations"], stored["records"])
    data = agent_conversations(
        replace(config.session_config(), budgets=None),
        config.sft_agent,
        tasks=range(config.train_tasks),
        episodes_per_task=config.sft_episodes_per_task,
        budget=config.largest_budget,
        seed=config.seed,
        progress=progress,
    )
    directory.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"conversations": data.conversations, "records": data.records}))
    temporary.replace(path)
    log = JsonlLog(directory / "demonstrations.jsonl")
    for record in data.records:
        log.append({"step": 0, **{k: v for k, v in record.items() if k != "stats"}})
    return data


def _base(config: TrainConfig, data: Trajectories, directory: Path) -> tuple[Any, Any]:
    base = directory / "base"
    if (base / "config.json").is_file():
        return load_causal_lm(base)
    if config.model is not None:
        from agentgym_budget.agents.pretrained import resolve_model

        model, tokenizer = load_causal_lm(resolve_model(config.model))
    else:
        model, tokenizer = build_base_model(
            data.conversations, config.tiny, chat_format=config.chat_format(), seed=config.seed
        )
    save_model(model, tokenizer, base, config.chat_format())
    # Train what a resumed run (and evaluation) loads: a tokenizer built in memory and the same one
    # reloaded from disk split some texts differently (" 1" into 1 or 2 tokens), so resuming diverged.
    return load_causal_lm(base)


def _plot_on_save(out: Path, plots: bool) -> list[Any]:
    """A callback redrawing ``out/training.png`` at every checkpoint, so a long run can be watched."""
    if not plots:
        return []
    from transformers import TrainerCallback

    from agentgym_budget.train.report import training_plot

    class PlotOnSave(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            training_plot(out, out / "training.png")

    return [PlotOnSave()]


def _sft_phase(config: TrainConfig, out: Path, progress: bool, plots: bool) -> Path:
    directory = out / "sft"
    final = directory / "final"
    if (final / "config.json").is_file():
        return final
    data = _demonstrations(config, directory, progress)
    if not data.conversations:
        raise InvalidOptionError(
            f"None of the {len(data.records)} demonstration episodes of {config.sft_agent} on "
            f"{config.train_tasks} train tasks was won within budget {config.largest_budget}, so SFT has nothing "
            "to imitate: give a larger budget or more train tasks (--budget, --train-tasks), or the expert's own "
            "wins (--demonstrations clean)."
        )
    model, tokenizer = _base(config, data, directory)
    model.train()
    run_sft(
        model,
        tokenizer,
        data.conversations,
        config.sft,
        out=directory,
        seed=config.seed,
        progress=progress,
        callbacks=_plot_on_save(out, plots),
        report_to=config.report_to,
        device=config.device,
        masked_turns=data.off_expert_turns if config.sft_mask_errors else None,
    )
    _save_final(model, tokenizer, final, config.chat_format())
    return final


def _rl_phase(config: TrainConfig, start: Path, out: Path, progress: bool, plots: bool) -> Path:
    directory = out / "rl"
    final = directory / "final"
    if (final / "config.json").is_file():
        return final
    model, tokenizer = load_causal_lm(start)
    model.train()
    run_grpo(
        model,
        tokenizer,
        config.session_config(),
        config.grpo,
        tasks=range(config.train_tasks),
        out=directory,
        seed=config.seed,
        progress=progress,
        callbacks=_plot_on_save(out, plots),
        budget_stages=config.budget_stages,
        report_to=config.report_to,
        device=config.device,
    )
    _save_final(model, tokenizer, final, config.chat_format())
    return final


def _save_final(model: Any, tokenizer: Any, final: Path, chat_format: ChatFormat) -> None:
    temporary = final.with_name(final.name + ".tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    save_model(model, tokenizer, temporary, chat_format)
    shutil.rmtree(final, ignore_errors=True)
    temporary.rename(final)


def _copy_final(source: Path, final: Path) -> None:
    temporary = final.with_name(final.name + ".tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    shutil.copytree(source, temporary)
    shutil.rmtree(final, ignore_errors=True)
    temporary.rename(final)


def training_provenance(config: TrainConfig) -> dict[str, Any]:
    """What a training run records in ``provenance.json``: its env, demonstration agent, base model and libraries."""
    from agentgym_budget.agents.pretrained import PRETRAINED, packaged_gguf

    models = {}
    if config.model is not None:
        models["model"] = packaged_gguf(config.model) if config.model in PRETRAINED else config.model
    if config.init is not None:
        models["init"] = config.init
    inputs = run_inputs([config.session_config().ref], [parse_agent(config.sft_agent)])
    return {**inputs, "models": models, "libraries": ("torch", "transformers", "trl", "peft", "accelerate")}


def run_training(config: TrainConfig, out: str | Path, *, progress: bool = True, plots: bool = True) -> dict[str, Any]:
    """Run (or resume) ``config`` into ``out``; returns the summary written to ``out/summary.json``.

    Raises:
        RunConfigError: ``out`` holds a run with other settings.
        InvalidOptionError: ``init`` is not a model directory, or ``device`` asks for a GPU this machine lacks.
        MissingDependencyError: The ``trl`` extra is missing, or ``vllm`` for vLLM generation.
    """
    from agentgym_budget.train.report import summarize_training, training_plot

    check_device(config.device)
    out = Path(out)
    _check_run(config, out)
    write_provenance(out, **training_provenance(config))
    began = time.perf_counter()
    if config.init is not None and not (Path(config.init) / "config.json").is_file():
        raise InvalidOptionError(f"--init {config.init!r} is not a model directory (no config.json).")
    with quiet_progress(not progress):
        if config.policy == "score":
            from agentgym_budget.train.scoring.run import score_phases

            last = score_phases(config, out, progress=progress)
        else:
            start = Path(config.init) if config.init is not None else _sft_phase(config, out, progress, plots)
            last = start if config.recipe == "sft" else _rl_phase(config, start, out, progress, plots)
        _copy_final(last, out / "final")
    summary = summarize_training(out)
    summary["wall_s_last_invocation"] = round(time.perf_counter() - began, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    if plots:
        training_plot(out, out / "training.png")
    return summary
