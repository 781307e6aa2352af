"""TRL multi-turn GRPO rollouts with the tiny local model: turns per second, and where the time goes.

Builds the tiny Qwen2 model and tokenizer locally (no download), warm-starts it on expert
tool-calling conversations so it plays turns, then runs ``--steps`` GRPO steps through
``BudgetToolEnv`` (one ``act`` call = one turn). Reports turns played per second of training,
the share of wall time spent inside the environment (``act`` and ``reset``), and the turns and
outcomes per rollout by budget.

Usage::

    python benchmarks/trl_rollout.py [--env TextWorld-CoinCollector-v0] [--env-args level=5]
        [--budgets 2,6] [--steps 3] [--batch 8] [--threads 1] [--completion-tokens 1024]
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import time
from typing import Any

import _harness

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch
from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.trl import (
    BudgetToolEnv,
    check_trainer_args,
    dataset_rows,
)
from agentgym_budget.train.tiny_lm import warm_tiny_lm

ENV_SECONDS = [0.0]
RECORDS: list[dict] = []


class TimedToolEnv(BudgetToolEnv):
    """``BudgetToolEnv`` that adds the time spent in the environment to ``ENV_SECONDS``."""

    def reset(self, **row):
        start = time.perf_counter()
        try:
            return super().reset(**row)
        finally:
            ENV_SECONDS[0] += time.perf_counter() - start

    def act(self, command: str) -> str:
        start = time.perf_counter()
        try:
            return super().act(command)
        finally:
            ENV_SECONDS[0] += time.perf_counter() - start

    act.__doc__ = BudgetToolEnv.act.__doc__


def record_episodes(environments, **kwargs):
    """A zero reward that records every finished rollout's episode (TRL passes the environments)."""
    RECORDS.extend(env.record for env in environments)
    return [0.0] * len(environments)


def parse_args() -> argparse.Namespace:
    """The command line's arguments, with the smoke run's sizes applied under ``--smoke``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--env", default="TextWorld-CoinCollector-v0")
    parser.add_argument("--env-args", default="level=5")
    parser.add_argument("--budgets", default="2,6")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--completion-tokens", type=int, default=1024, help="max_completion_length (tool output counts)"
    )
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.budgets, args.steps, args.batch, args.generations = "2", 1, 4, 2
    return args


def make_trainer(args: argparse.Namespace, config: SessionConfig, model: Any, tokenizer: Any) -> GRPOTrainer:
    """The GRPO trainer on ``TimedToolEnv``, its dataset's games generated before any timing."""
    rows = dataset_rows(config, episodes=args.steps * args.batch // args.generations, seed=1000)
    warmer = BudgetToolEnv(config)
    for row in rows:  # games generated before timing: the figure is steady-state rollouts
        warmer.reset(**row)
    trainer_args = GRPOConfig(
        output_dir=str(_harness.results_dir(args.smoke) / "trl-rollout-run"),
        max_steps=args.steps,
        per_device_train_batch_size=args.batch,
        num_generations=args.generations,
        max_completion_length=args.completion_tokens,
        max_tool_calling_iterations=max(config.budgets),
        temperature=0.7,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        use_cpu=True,
        seed=0,
    )
    check_trainer_args(trainer_args, config)
    return GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=trainer_args,
        train_dataset=Dataset.from_list(rows),
        reward_funcs=[record_episodes],
        environment_factory=functools.partial(TimedToolEnv, config),
    )


def print_summary(
    args: argparse.Namespace, config: SessionConfig, parameters: int, warm: float, wall: float, turns: int
) -> None:
    """Print turns per second, the environment's share of the time and the rollouts by budget."""
    by_budget: dict[int, list[dict]] = collections.defaultdict(list)
    for record in RECORDS:
        by_budget[record["budget"]].append(record)
    print(f"{config.label}: tiny Qwen2 ({parameters:,} parameters), warm start {warm:.1f} s, {args.threads} thread(s)")
    print(
        f"  {args.steps} GRPO steps, {len(RECORDS)} rollouts, {turns} turns in {wall:.1f} s: {turns / wall:.2f} turns/s"
    )
    print(
        f"  time in the environment (reset + act): {ENV_SECONDS[0]:.2f} s ({100 * ENV_SECONDS[0] / wall:.1f}% of training)"
    )
    for budget, records in sorted(by_budget.items()):
        mean_turns = sum(r["turns"] for r in records) / len(records)
        won = sum(r["won"] for r in records)
        truncated = sum(r["truncated"] for r in records)
        print(
            f"  budget {budget}: {len(records)} rollouts, mean turns {mean_turns:.2f}, won {won}, truncated {truncated}"
        )


def main() -> None:
    args = parse_args()
    recording = _harness.start("trl_rollout", args.smoke)
    torch.set_num_threads(args.threads)
    budgets = tuple(int(b) for b in args.budgets.split(","))
    config = SessionConfig(args.env, env_kwargs=args.env_args, budgets=budgets)

    began = time.perf_counter()
    model, tokenizer, _ = warm_tiny_lm(config, seeds=range(4), steps=120)
    warm = time.perf_counter() - began
    parameters = sum(p.numel() for p in model.parameters())

    trainer = make_trainer(args, config, model, tokenizer)
    ENV_SECONDS[0] = 0.0
    start = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - start

    turns = sum(r["turns"] for r in RECORDS)
    print_summary(args, config, parameters, warm, wall, turns)
    recording.finish(
        {
            "env": config.label,
            "parameters": parameters,
            "steps": args.steps,
            "rollouts": len(RECORDS),
            "turns": turns,
            "wall_s": wall,
            "turns_per_s": turns / wall,
            "env_seconds": ENV_SECONDS[0],
            "records": RECORDS,
        }
    )


if __name__ == "__main__":
    main()
