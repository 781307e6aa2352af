"""Train a policy on an environment: SFT base policy, then multi-turn GRPO at one budget or a budget mix (CPU).

Recipes: sft (supervised fine-tuning on the won episodes of a scripted noisy expert, with TRL's
SFTTrainer), fixed (SFT, then GRPO with every episode at --budget) and budgetmix (SFT, then GRPO with
each episode's budget drawn from --budgets by BudgetMix). GRPO plays the episodes through the suite's
TRL integration (one `act` tool call is one turn). --init DIR starts the RL phase from a checkpoint
(e.g. an sft run's OUT/final) instead of running SFT first. Without --model the base policy is a tiny
Qwen2 causal LM built locally with a tokenizer trained on the demonstrations (nothing is downloaded).

--policy score trains a scoring policy instead (the model scores the admissible commands; SFT as
cross-entropy over them, then group-relative PPO on their distribution, the top --train-blocks blocks trained;
evaluate it as score:OUT/final). Writes OUT/final (model, tokenizer and agentgym_chat.json: evaluate it as the
agent hf:OUT/final),
per phase OUT/sft/ and OUT/rl/ (checkpoints/, metrics.jsonl, episodes.jsonl), summary.json and
training.png. Rerunning the same command with the same --out resumes a killed run from its last
checkpoint. Needs the trl extra (pip install "agentgym-budget[trl]").
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from agentgym_budget.cli.common import add_budgets_argument, fit_threads, positive_int
from agentgym_budget.cli.training_flags import (
    add_demonstrations_argument,
    add_grpo_arguments,
    add_score_arguments,
    add_tiny_size_argument,
    add_training_env_arguments,
    env_args_of,
    with_grpo_arguments,
    with_score_arguments,
    with_tiny_size,
)

__all__: list[str] = []

NAME = "train"
HELP = "train a policy: SFT base, then GRPO at a fixed budget or a BudgetMix (CPU, tiny local model by default)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``train``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["--recipe", "budgetmix", "--budgets", "4,6", "--out", "runs/bm", "--steps", "5"])
        >>> args.env, env_args_of(args), args.budgets, args.steps, args.seed
        ('TextWorld-CoinCollector-v0', 'level=3', (4, 6), 5, 0)
        >>> env_args_of(parser.parse_args(["--recipe", "sft", "--out", "x", "--env", "TextWorld-Cooking-v0"]))
        ''
    """
    add_training_env_arguments(parser)
    parser.add_argument("--recipe", required=True, metavar="sft|fixed|budgetmix|curriculum", help="the training recipe")
    parser.add_argument("--budget", type=positive_int, default=None, help="fixed: the budget of every RL episode")
    add_budgets_argument(parser, "budgetmix: budgets drawn per episode; curriculum: budgets in growing stages")
    parser.add_argument("--show-budget", action="store_true", help="show [Turns left: k of T] in every observation")
    parser.add_argument("--process-reward", action="store_true", help="RL on the ProcessReward-shaped return")
    parser.add_argument(
        "--credit", default="episode", help="GRPO credit: episode (default), turn or gigpo (per-turn advantages)"
    )
    parser.add_argument("--gamma", type=float, default=1.0, help="discount of per-turn returns (turn, gigpo)")
    parser.add_argument(
        "--model",
        default=None,
        metavar="PATH",
        help="base policy: a local Hugging Face causal LM directory, a .gguf file or smollm2-135m (extra smollm2)",
    )
    add_tiny_size_argument(parser)
    parser.add_argument("--init", default=None, metavar="DIR", help="start RL from this checkpoint (skips SFT)")
    parser.add_argument("--steps", type=positive_int, default=None, help="GRPO steps (default 60; with sft: SFT steps)")
    parser.add_argument("--sft-steps", type=positive_int, default=None, help="SFT steps (default 350)")
    parser.add_argument(
        "--sft-batch-size", type=positive_int, default=None, help="SFT conversations a step (default 8; smollm2-135m 4)"
    )
    parser.add_argument(
        "--sft-max-length",
        type=positive_int,
        default=None,
        help="SFT: longest conversation in tokens (default 2048; smollm2-135m 1536)",
    )
    parser.add_argument(
        "--train-tasks", type=positive_int, default=None, help="tasks of the train split used (default 100)"
    )
    add_demonstrations_argument(parser)
    add_grpo_arguments(parser)
    add_score_arguments(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed of data, weights and sampling (default 0)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="run directory (rerun to resume)")
    _add_where_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--no-plots", action="store_true", help="no training.png")


def _add_where_arguments(parser: argparse.ArgumentParser) -> None:
    """Where and how training runs: threads, loggers, device, precision, vLLM, a named preset."""
    parser.add_argument(
        "--threads", type=positive_int, default=1, help="torch threads of training (default 1: tiny models run fastest)"
    )
    parser.add_argument(
        "--report-to",
        default="",
        metavar="NAME,...",
        help="also log to these transformers loggers, e.g. tensorboard (events in OUT/sft/checkpoints/runs, OUT/rl/checkpoints/runs)",
    )
    parser.add_argument(
        "--device", default=None, help="where training runs: cpu (default), cuda (one GPU) or auto (cuda if visible)"
    )
    parser.add_argument("--bf16", action="store_true", help="bf16 mixed precision (needs a CUDA GPU)")
    parser.add_argument(
        "--vllm", default=None, metavar="MODE", help="generate GRPO rollouts with vLLM: colocate (same GPU; needs vllm)"
    )
    parser.add_argument(
        "--preset",
        default=None,
        metavar="gpu-qwen2.5|smollm2",
        help="named settings: gpu-qwen2.5 (one CUDA GPU, bf16, vLLM colocate; a local Qwen2.5 instruct --model), "
        "smollm2 (SmolLM2-135M on CPU: batch, learning rates and lengths that fit 24 GB, peaks of 12-17 GB; extra smollm2)",
    )


def build_config(args: argparse.Namespace):
    """The :class:`~agentgym_budget.train.config.TrainConfig` of parsed arguments.

    Example:
        >>> parser = argparse.ArgumentParser(); add_arguments(parser)
        >>> config = build_config(parser.parse_args(["--recipe", "fixed", "--budget", "6", "--out", "x", "--steps", "3"]))
        >>> config.recipe, config.budget, config.grpo.steps, config.sft.steps
        ('fixed', 6, 3, 350)
    """
    from dataclasses import replace

    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.trajectories import DEMONSTRATIONS, default_demonstrations

    policy = getattr(args, "policy", "generate")
    base = TrainConfig(
        args.env, env_args_of(args), recipe=args.recipe, budget=args.budget, budgets=args.budgets, policy=policy
    )
    demonstrations = args.demonstrations or default_demonstrations(base.env_id)
    base = _with_preset(base, args)
    if policy == "score":
        base = _with_score_defaults(base)
    sft_steps = args.sft_steps or (args.steps if args.recipe == "sft" else None)
    grpo = with_grpo_arguments(replace(base.grpo, credit=args.credit, gamma=args.gamma), args)
    config = replace(
        base,
        show_budget=args.show_budget,
        process_reward=args.process_reward,
        model=args.model or (base.model if args.init is None else None),
        init=args.init,
        train_tasks=args.train_tasks or base.train_tasks,
        sft_agent=DEMONSTRATIONS[demonstrations][0],
        sft_mask_errors=DEMONSTRATIONS[demonstrations][1],
        seed=args.seed,
        report_to=tuple(name.strip() for name in args.report_to.split(",") if name.strip()),
        sft=_with_sft_sizes(replace(base.sft, steps=sft_steps) if sft_steps else base.sft, args),
        grpo=replace(grpo, steps=args.steps) if args.steps and args.recipe != "sft" else grpo,
    )
    return with_score_arguments(with_tiny_size(config, args), args)


def _with_score_defaults(base):
    """``base`` with a scoring run's own SFT and RL defaults (over the model's generation defaults).

    Example:
        >>> parser = argparse.ArgumentParser(); add_arguments(parser)
        >>> argv = ["--recipe", "fixed", "--budget", "4", "--out", "x", "--model", "smollm2-135m", "--policy", "score"]
        >>> config = build_config(parser.parse_args([*argv, "--rl-learning-rate", "3e-5", "--train-blocks", "4"]))
        >>> config.policy, config.grpo.learning_rate, config.grpo.num_generations, config.sft.steps, config.score.train_blocks
        ('score', 3e-05, 8, 20, 4)
    """
    from dataclasses import replace

    from agentgym_budget.train.scoring.settings import SCORE_RL_DEFAULTS, SCORE_SFT_DEFAULTS

    return replace(base, sft=replace(base.sft, **SCORE_SFT_DEFAULTS), grpo=replace(base.grpo, **SCORE_RL_DEFAULTS))


def _with_sft_sizes(sft, args: argparse.Namespace):
    """``sft`` with ``--sft-batch-size`` and ``--sft-max-length``, when given."""
    from dataclasses import replace

    sizes = {"batch_size": getattr(args, "sft_batch_size", None), "max_length": getattr(args, "sft_max_length", None)}
    return replace(sft, **{field: value for field, value in sizes.items() if value is not None})


def _with_model_defaults(base, model: str | None):
    """``base`` with the sizes and learning rates the named base ``model`` brings (no ``--preset``).

    Example:
        >>> parser = argparse.ArgumentParser(); add_arguments(parser)
        >>> config = build_config(parser.parse_args(["--recipe", "sft", "--out", "x", "--model", "smollm2-135m"]))
        >>> config.sft.batch_size, config.sft.max_length, config.grpo.learning_rate
        (4, 1536, 1e-06)
    """
    from dataclasses import replace

    from agentgym_budget.train.train_presets import model_defaults

    sft, grpo = model_defaults(model)
    return replace(base, sft=replace(base.sft, **sft), grpo=replace(base.grpo, **grpo))


def _with_preset(base, args: argparse.Namespace):
    """``base`` with ``--preset``'s settings, then ``--device`` / ``--bf16`` / ``--vllm`` over them.

    Example:
        >>> parser = argparse.ArgumentParser(); add_arguments(parser)
        >>> argv = ["--recipe", "fixed", "--budget", "6", "--out", "x", "--preset", "gpu-qwen2.5"]
        >>> build_config(parser.parse_args(argv))
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: --preset gpu-qwen2.5 trains a model from a local directory: give --model PATH (e.g. a Qwen2.5-0.5B-Instruct download).
        >>> config = build_config(parser.parse_args([*argv, "--model", "models/qwen", "--steps", "50"]))
        >>> config.device.device, config.device.bf16, config.device.vllm, config.grpo.steps, config.grpo.learning_rate
        ('cuda', True, 'colocate', 50, 1e-06)
    """
    from dataclasses import replace

    from agentgym_budget.errors import InvalidOptionError
    from agentgym_budget.train.train_presets import train_preset

    device = base.device
    if args.preset is None and args.init is None:
        base = _with_model_defaults(base, args.model)
    if args.preset is not None:
        preset = train_preset(args.preset)
        if preset.needs_model and args.model is None:
            raise InvalidOptionError(
                f"--preset {args.preset} trains a model from a local directory: give --model PATH "
                "(e.g. a Qwen2.5-0.5B-Instruct download)."
            )
        device = preset.device
        base = replace(
            base,
            model=preset.model,
            train_tasks=preset.train_tasks,
            sft=replace(base.sft, **preset.sft),
            grpo=replace(base.grpo, **preset.grpo),
        )
    device = replace(
        device,
        device=args.device or device.device,
        bf16=args.bf16 or device.bf16,
        vllm=args.vllm or device.vllm,
    )
    return replace(base, device=device)


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the training and print its summary."""
    from agentgym_budget.dependencies import require
    from agentgym_budget.train.memory import available_bytes, check_memory
    from agentgym_budget.train.recipe import run_training

    config = build_config(args)
    estimates = (
        check_memory(config) if config.policy == "generate" else {}
    )  # sizes of generated rollouts  # refuse, before loading anything, a run the machine's memory cannot hold
    if estimates and max(estimates.values()) > available_bytes():
        need = ", ".join(f"{phase} {need / 2**30:.1f} GB" for phase, need in estimates.items())
        print(
            f"warning: estimated peak memory ({need}) exceeds what is available now ({available_bytes() / 2**30:.1f} GB)"
        )
    require("torch", extra="trl", feature="Training").set_num_threads(fit_threads(args.threads))
    budgets = (
        f"budgets {','.join(map(str, config.budgets))} "
        + ("(curriculum stages)" if config.recipe == "curriculum" else "(BudgetMix)")
        if config.budgets
        else f"budget {config.largest_budget}"
    )
    start = f"RL from {config.init}" if config.init else f"base {config.model or 'built-in tiny model'}"
    if not config.device.is_default:
        start += f", device {config.device.device}" + (" bf16" if config.device.bf16 else "")
        start += f", vLLM {config.device.vllm}" if config.device.vllm else ""
    print(
        f"Training recipe {config.recipe} on {config.session_config().ref.label}: {budgets}, {start}, seed={config.seed}"
    )
    print(f"output: {args.out}  (if interrupted, rerun the same command to resume)", flush=True)
    began = time.perf_counter()
    summary = run_training(config, args.out, progress=not args.no_progress, plots=not args.no_plots)
    print(json.dumps(summary, indent=2, sort_keys=True))
    kind = "score" if config.policy == "score" else "hf"
    print(f"model: {args.out / 'final'}  (agent {kind}:{args.out / 'final'});  {time.perf_counter() - began:.0f} s")
    return 0
