"""Measure Pass@(K,T) of one or more agents on an environment, print the grid and write plots.

Pass@(K,T) is the probability that at least one of K independent episodes, each with a budget of
T turns, wins the task (unbiased estimate from n >= K samples per task and T, averaged over tasks,
bootstrap intervals over tasks). Without arguments it runs the built-in main job: the recovering
and the non-recovering noisy expert (error rate 0.3) on 20 TextWorld Coin Collector games of
level 110 (10 rooms to the coin plus distractor rooms), K in 1,2,4,8, T in 10,15,20,30,40,
8 samples, 2 workers. Rerunning with the same --out resumes an interrupted run.

Agents are paired by common random numbers: sample s of a task uses the same seed for every agent, so
their difference is measured with less variance (and two scripted agents that differ in one behaviour
play identical episodes wherever it does not matter). --streams independent gives each agent its own
seeds, to see the unpaired variance.

Writes DIR/episodes.jsonl, run.json, provenance.json (what produced the run), summary.json, summary.csv, difference.csv (two or more
agents), heatmap.png, success_vs_T.png, passk_vs_K.png and difference.png.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agentgym_budget.cli.common import (
    add_budgets_argument,
    add_env_arguments,
    add_run_arguments,
    describe_workers,
    int_list,
    next_look,
    positive_int,
    run_backend,
    run_options,
    run_resumable,
)
from agentgym_budget.eval.passkt.config import DEFAULT_BUDGETS, DEFAULT_KS, MODES, STREAMS, PassKTConfig
from agentgym_budget.eval.passkt.plan import run_passkt
from agentgym_budget.eval.passkt.tables import format_summary
from agentgym_budget.runner.env_ref import EnvRef

__all__: list[str] = []

NAME = "passkt"
HELP = "measure Pass@(K,T) (run, resume, summarise, plot)"

DEFAULT_ENV = "TextWorld-CoinCollector-v0"
"""Environment of the main job."""

DEFAULT_ENV_ARGS = "level=110"
"""Its arguments (used only when ``--env`` is not given): 10 rooms to the coin, with distractor rooms."""

DEFAULT_AGENTS = ("noisy-expert-recover", "noisy-expert-norecover")
"""Agents of the main job."""


def default_out() -> Path:
    """``runs/passkt-<YYYYmmdd-HHMMSS>`` under the current directory.

    Example:
        >>> default_out().parent
        PosixPath('runs')
    """
    return Path("runs") / time.strftime("passkt-%Y%m%d-%H%M%S")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``passkt``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["--agent", "random", "--k", "1,2", "--mode", "prefix"])
        >>> args.agent, args.k, args.budgets, args.n, args.mode
        (['random'], (1, 2), (10, 15, 20, 30, 40), 8, 'prefix')
    """
    add_env_arguments(parser, env_required=False)
    parser.add_argument(
        "--agent",
        action="append",
        metavar="NAME",
        help="agent name, repeatable (default: noisy-expert-recover and noisy-expert-norecover); "
        "see `agentgym-budget list --agents`",
    )
    parser.add_argument(
        "--k",
        type=int_list,
        default=None,
        metavar="K,...",
        help="breadths K (default those of 1,2,4,8 that are <= --n)",
    )
    add_budgets_argument(parser, "turn budgets T (default 10,15,20,30,40)", default=DEFAULT_BUDGETS)
    parser.add_argument("--n", type=positive_int, default=8, help="samples per task and budget (default 8)")
    parser.add_argument("--tasks", type=positive_int, default=20, help="first N tasks of the split (default 20)")
    parser.add_argument("--task-ids", default=None, metavar="ID,...", help="explicit task ids instead of --tasks")
    parser.add_argument("--mode", choices=MODES, default="independent", help="run mode (default independent)")
    parser.add_argument("--show-budget", action="store_true", help="show the agent its remaining budget")
    parser.add_argument(
        "--streams",
        choices=STREAMS,
        default="common",
        help="common (every agent plays sample s of a task with the same seed: paired; default) or independent "
        "(each agent its own seeds, to see the unpaired variance)",
    )
    add_run_arguments(parser, "passkt")
    parser.add_argument(
        "--concurrency", type=positive_int, default=None, help="episodes at once per worker for async (LLM) agents"
    )


def breadths(args: argparse.Namespace) -> tuple[int, ...]:
    """``--k``, or the default breadths that ``--n`` samples allow (K <= n).

    Example:
        >>> parser = argparse.ArgumentParser(); add_arguments(parser)
        >>> breadths(parser.parse_args([])), breadths(parser.parse_args(["--n", "4"]))
        ((1, 2, 4, 8), (1, 2, 4))
    """
    return args.k or tuple(k for k in DEFAULT_KS if k <= args.n)


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the grid, print it and write the outputs."""
    env_id = args.env or DEFAULT_ENV
    env_args = args.env_args if (args.env or args.env_args is not None) else DEFAULT_ENV_ARGS
    tasks = tuple(t.strip() for t in args.task_ids.split(",") if t.strip()) if args.task_ids else args.tasks
    config = PassKTConfig(
        env=EnvRef.parse(env_id, env_args, args.split),
        agents=tuple(args.agent or DEFAULT_AGENTS),
        ks=breadths(args),
        budgets=args.budgets,
        samples=args.n,
        tasks=tasks,
        mode=args.mode,
        show_budget=args.show_budget,
        streams=args.streams,
        seed=args.seed,
        workers=args.workers,
        episode_concurrency=args.concurrency,
        confidence=args.confidence,
        resamples=args.bootstrap,
    )
    backend = run_backend(args)
    out = args.out or default_out()
    agents = ", ".join(spec.name for spec in config.specs)
    size = len(config.specs) * config.samples * (len(config.budgets) if config.mode == "independent" else 1)
    task_ids = config.resolve_tasks()
    if isinstance(tasks, int) and len(task_ids) < tasks:
        print(f"note: {config.env.label} has only {len(task_ids)} tasks; using all of them.")
    print(f"Pass@(K,T) of {agents}")
    print(
        f"on {config.env.label}, {len(task_ids)} tasks, {config.mode} mode, "
        f"budget {'shown' if config.show_budget else 'hidden'}, K={list(config.ks)}, T={list(config.budgets)}, "
        f"n={config.samples}, seed={config.seed}, {config.streams} streams, {describe_workers(config.workers, backend)}; {size} episodes per task"
    )
    result, seconds = run_resumable(config, out, run_passkt, run_options(args, backend))
    print(format_summary(result.summary))
    print()
    print(f"{result.played} episodes played, {result.reused} reused from the log, {seconds:.1f} s.")
    print("Wrote:", ", ".join(str(p) for p in [out / "episodes.jsonl", *result.files]))
    if hint := next_look(result.files):
        print(hint)
    return 0
