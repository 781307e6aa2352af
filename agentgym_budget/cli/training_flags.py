"""The flags ``train`` and ``study`` share: the training env, what SFT imitates, the tiny model's size and the GRPO
settings, with the functions that apply them to a :class:`~agentgym_budget.train.config.TrainConfig`.
"""

from __future__ import annotations

import argparse

from agentgym_budget.cli.common import positive_int, tiny_size

__all__: list[str] = []  # flags of the command line: used by cmd_train and cmd_study, not an API

DEFAULT_TRAIN_ENV = "TextWorld-CoinCollector-v0"
DEFAULT_TRAIN_ENV_ARGS = "level=3"


def add_demonstrations_argument(parser: argparse.ArgumentParser) -> None:
    """``--demonstrations``: what SFT imitates (train and study; the names of ``trajectories.DEMONSTRATIONS``)."""
    parser.add_argument(
        "--demonstrations",
        choices=("masked", "clean", "noisy"),
        default=None,
        help="SFT data: the noisy expert's wins with its errors masked from the loss (masked, default), the "
        "expert's wins (clean; the default of ids whose expert cannot recover from an error, e.g. the TWX ids), "
        "or the noisy expert's wins errors included (noisy)",
    )


GRPO_FLAGS = {
    "learning_rate": (float, "LR", "learning rate"),
    "episodes_per_step": (positive_int, "N", "rollouts per optimiser step"),
    "num_generations": (positive_int, "N", "rollouts of one task and budget compared by GRPO (a group)"),
    "beta": (float, "B", "KL coefficient to the starting policy"),
    "temperature": (float, "T", "sampling temperature of the rollouts"),
    "micro_batch": (positive_int, "N", "rollouts per forward / backward pass (bounds memory; the step accumulates)"),
    "tokens_per_turn": (positive_int, "N", "completion tokens allowed per turn (tool answers count)"),
}
"""The ``--rl-*`` flags: :class:`~agentgym_budget.train.grpo.GRPOSettings` field -> (type, metavar, help)."""

ROLLOUT_FLAGS = ("rollouts", "dynamic_sampling", "resample_rounds", "generation")
"""Flags named as their :class:`~agentgym_budget.train.grpo.GRPOSettings` field (how rollouts are played)."""


def add_grpo_arguments(parser: argparse.ArgumentParser) -> None:
    """``--rl-learning-rate``, ``--rl-episodes-per-step``, ... over the preset's or the default GRPO settings.

    Example:
        >>> parser = argparse.ArgumentParser(); add_grpo_arguments(parser)
        >>> vars(parser.parse_args(["--rl-learning-rate", "5e-4", "--rl-num-generations", "8"]))["rl_learning_rate"]
        0.0005
    """
    from agentgym_budget.train.grpo import GRPOSettings

    defaults = GRPOSettings()
    group = parser.add_argument_group("GRPO settings (default: the --preset's, else the value shown)")
    for field, (kind, metavar, text) in GRPO_FLAGS.items():
        flag = "--rl-" + field.replace("_", "-")
        group.add_argument(
            flag, type=kind, default=None, metavar=metavar, help=f"{text} (default {getattr(defaults, field)})"
        )
    group.add_argument(
        "--rollouts",
        choices=("chain", "tree"),
        default=None,
        help="GRPO groups: G episodes of a task from its start (chain, default), or G continuations of one "
        "state of a first episode, forked exactly (tree)",
    )
    group.add_argument(
        "--dynamic-sampling",
        action="store_true",
        default=None,
        help="play groups whose rollouts all agree again on other tasks; skip optimiser steps with no signal",
    )
    group.add_argument(
        "--resample-rounds", type=positive_int, default=None, metavar="N", help="most replays of a group (default 2)"
    )
    group.add_argument(
        "--generation",
        choices=("trl", "cached"),
        default=None,
        help="who plays the rollouts: TRL's multi-turn loop (trl, default for chain) or the package's batched, "
        "key/value-cached rollouts (cached; what tree and --dynamic-sampling use)",
    )


def with_grpo_arguments(grpo, args: argparse.Namespace):
    """``grpo`` (a :class:`~agentgym_budget.train.grpo.GRPOSettings`) with the ``--rl-*`` flags given.

    Raises:
        InvalidOptionError: A value ``GRPOSettings`` refuses (e.g. episodes per step not a multiple of the group);
            the message ends with the flags given.

    Example:
        >>> from agentgym_budget.train.grpo import GRPOSettings
        >>> parser = argparse.ArgumentParser(); add_grpo_arguments(parser)
        >>> args = parser.parse_args(["--rl-episodes-per-step", "32", "--rl-num-generations", "8"])
        >>> settings = with_grpo_arguments(GRPOSettings(), args)
        >>> settings.episodes_per_step, settings.num_generations, settings.learning_rate
        (32, 8, 0.0002)
    """
    from dataclasses import replace

    from agentgym_budget.errors import InvalidOptionError

    given = {"rl_" + field: getattr(args, "rl_" + field, None) for field in GRPO_FLAGS}
    given |= {field: getattr(args, field, None) for field in ROLLOUT_FLAGS}
    given = {name: value for name, value in given.items() if value is not None}
    try:
        return replace(grpo, **{name.removeprefix("rl_"): value for name, value in given.items()})
    except InvalidOptionError as err:
        flags = ", ".join(f"--{name.replace('_', '-')} {value}" for name, value in given.items())
        raise InvalidOptionError(f"{err} Given: {flags}.") from None


def add_tiny_size_argument(parser: argparse.ArgumentParser) -> None:
    """``--tiny-size LAYERSxWIDTH``: the size of the built-in tiny model (train and study)."""
    parser.add_argument(
        "--tiny-size",
        type=tiny_size,
        default=None,
        metavar="LxW",
        help="layers x width of the built-in tiny model (default 2x128, 460k parameters; 4x256: 2.9M); "
        "not with --model",
    )


def with_tiny_size(config, args: argparse.Namespace):
    """``config`` (a :class:`~agentgym_budget.train.config.TrainConfig`) with ``--tiny-size``, if given.

    Raises:
        InvalidOptionError: ``--tiny-size`` with a base model of its own (``--model``, ``--init`` or a preset's).

    Example:
        >>> from agentgym_budget.cli.cmd_train import add_arguments, build_config
        >>> parser = argparse.ArgumentParser(); add_arguments(parser)
        >>> config = build_config(parser.parse_args(["--recipe", "sft", "--out", "x", "--tiny-size", "4x256"]))
        >>> config.tiny.layers, config.tiny.hidden_size
        (4, 256)
        >>> build_config(parser.parse_args(["--recipe", "sft", "--out", "x", "--tiny-size", "4x256", "--model", "m"]))
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: --tiny-size 4x256 sizes the built-in tiny model, but the base policy is m; drop one of them.
    """
    from dataclasses import replace

    from agentgym_budget.errors import InvalidOptionError

    if getattr(args, "tiny_size", None) is None:
        return config
    layers, width = args.tiny_size
    start = config.model or getattr(config, "init", None)
    if start is not None:
        raise InvalidOptionError(
            f"--tiny-size {layers}x{width} sizes the built-in tiny model, but the base policy is {start}; "
            "drop one of them."
        )
    return replace(config, tiny=replace(config.tiny, layers=layers, hidden_size=width))


def add_training_env_arguments(parser: argparse.ArgumentParser, default_args: str = DEFAULT_TRAIN_ENV_ARGS) -> None:
    """``--env`` and ``--env-args``, whose default arguments belong to the default env only (train and study);
    ``default_args``: how the help names them (a study's preset brings its own)."""
    parser.add_argument(
        "--env", default=DEFAULT_TRAIN_ENV, metavar="ID", help=f"environment (default {DEFAULT_TRAIN_ENV})"
    )
    parser.add_argument(
        "--env-args",
        default=None,
        metavar="K=V,...",
        help=f"its arguments (default {default_args} for {DEFAULT_TRAIN_ENV}, none for other envs)",
    )


def env_args_of(args: argparse.Namespace) -> str:
    """``--env-args``, or the default env's default arguments when ``--env`` is left at its default."""
    if args.env_args is not None:
        return args.env_args
    return DEFAULT_TRAIN_ENV_ARGS if args.env == DEFAULT_TRAIN_ENV else ""


def _boolean(text: str) -> bool:
    """``true`` / ``false`` (also yes / no, 1 / 0) as a bool.

    Example:
        >>> _boolean("no"), _boolean("True")
        (False, True)
    """
    lowered = text.strip().lower()
    if lowered not in ("true", "false", "yes", "no", "1", "0"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return lowered in ("true", "yes", "1")


SCORE_FLAGS = {
    "train_blocks": (int, "N", "the top N decoder blocks and the final norm train (0: every weight)"),
    "lora_rank": (int, "R", "train LoRA adapters of rank R on those blocks instead of their weights (extra peft)"),
    "ppo_epochs": (positive_int, "N", "PPO epochs (optimiser steps) per batch of rollouts"),
    "clip": (float, "C", "PPO's ratio clip"),
    "epsilon": (float, "E", "exploration: share of the policy spread uniformly over the candidates"),
    "normalise": (str, "word|mean|sum", "a candidate's score: its log-likelihood per word, per token or summed"),
    "history": (_boolean, "true|false", "show the episode's past turns (false: the goal and the current state only)"),
}
"""The flags of ``--policy score``: :class:`~agentgym_budget.train.scoring.settings.ScoreSettings` field (``epochs``
for ``ppo_epochs``) -> (type, metavar, help)."""


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    """``--policy`` and the scoring policy's flags (train and study).

    Example:
        >>> parser = argparse.ArgumentParser(); add_score_arguments(parser)
        >>> args = parser.parse_args(["--policy", "score", "--train-blocks", "4", "--epsilon", "0.05"])
        >>> args.policy, args.train_blocks, args.epsilon, args.lora_rank
        ('score', 4, 0.05, None)
    """
    from agentgym_budget.train.scoring.settings import POLICIES, ScoreSettings

    parser.add_argument(
        "--policy",
        choices=POLICIES,
        default="generate",
        help="how the trained model plays: it generates its command (generate, default; agent hf:OUT/final) or "
        "scores the admissible commands (score; agent score:OUT/final, TWOSOME-style, ~30x cheaper on CPU)",
    )
    defaults = ScoreSettings()
    group = parser.add_argument_group("scoring policy (--policy score; default: the value shown)")
    for field, (kind, metavar, text) in SCORE_FLAGS.items():
        default = getattr(defaults, "epochs" if field == "ppo_epochs" else field)
        group.add_argument("--" + field.replace("_", "-"), type=kind, default=None, metavar=metavar,
                           help=f"{text} (default {default})")  # fmt: skip


def with_score_arguments(config, args: argparse.Namespace):
    """``config`` (a :class:`~agentgym_budget.train.config.TrainConfig`) with ``--policy`` and the scoring flags.

    A scoring run starts from its own defaults (:data:`~agentgym_budget.train.scoring.settings.SCORE_RL_DEFAULTS`,
    :data:`~agentgym_budget.train.scoring.settings.SCORE_SFT_DEFAULTS`) where the flags give no value.

    Raises:
        InvalidOptionError: A scoring flag without ``--policy score``, or a value out of range.
    """
    from dataclasses import replace

    from agentgym_budget.errors import InvalidOptionError

    given = {f: getattr(args, f, None) for f in SCORE_FLAGS if getattr(args, f, None) is not None}
    if getattr(args, "policy", "generate") != "score":
        if given:
            names = ", ".join("--" + f.replace("_", "-") for f in given)
            raise InvalidOptionError(f"{names} set the scoring policy's training: add --policy score.")
        return config
    values = {("epochs" if f == "ppo_epochs" else f): v for f, v in given.items()}
    return replace(config, policy="score", score=replace(config.score, **values))
