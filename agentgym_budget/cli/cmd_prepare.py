"""Prepare a split's tasks before using them: generate and store their games in the cache, in parallel.

``agentgym-budget prepare ID [--env-args K=V,...] [--split S] [--tasks N | --all] [--workers N]``
generates (TextWorld) or generates and parses into the stored form (ALFWorld) the first ``N`` tasks
of the split, or all of them, with a progress bar. Tasks already prepared are skipped, so an
interrupted run is resumed by running it again; it is safe while other processes use the same cache.
"""

from __future__ import annotations

import argparse
import os

from agentgym_budget.cli.common import add_env_arguments, note_busy_cores, positive_int
from agentgym_budget.prepare import prepare_tasks, select_tasks
from agentgym_budget.runner.env_ref import EnvRef

__all__: list[str] = []

NAME = "prepare"
HELP = "generate a split's tasks into the cache ahead of use (parallel, resumable)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``prepare``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["TextWorld-CoinCollector-v0", "--env-args", "level=110", "--tasks", "500"])
        >>> args.id, args.env_args, args.tasks, args.all, args.workers >= 1
        ('TextWorld-CoinCollector-v0', 'level=110', 500, False, True)
    """
    parser.add_argument("id", metavar="ID", help="registered environment id (see `agentgym-budget list`)")
    add_env_arguments(parser, env_required=True)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--tasks", type=positive_int, default=None, help="first N tasks of the split (default 20)")
    which.add_argument("--all", action="store_true", help="every task of the split")
    parser.add_argument(
        "--workers", type=positive_int, default=os.cpu_count() or 1, help="worker processes (default: one per CPU)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Prepare the tasks and say what was done."""
    ref = EnvRef.parse(args.id, args.env_args, args.split)
    tasks = select_tasks(ref, None if args.all else (args.tasks or 20))
    note_busy_cores(args.workers)
    print(f"{ref.label}, {ref.split} split: preparing {len(tasks)} tasks with {args.workers} worker(s)", flush=True)
    result = prepare_tasks(ref, tasks, workers=args.workers, progress=not args.no_progress)
    print(
        f"{result.prepared} tasks generated or loaded ({result.built} new cache entries), {result.skipped} skipped "
        f"(already in the cache), {result.seconds:.1f} s. Cache: {cache_location()}"
    )
    return 0


def cache_location() -> str:
    """The cache directory in use."""
    from agentgym_budget.storage.cache import cache_root

    return str(cache_root())
