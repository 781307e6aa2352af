"""Write a training dataset for an RL library: one row per episode of a split (``--format verl``: parquet).

Row i plays seed --seed + i (which picks the task unless --tasks is given, and seeds a --budgets
draw); its extra_info names the env, the episode and its budget, and its agent_name selects the
agentgym_budget verl agent loop (verl extra; pyarrow writes the file). Size verl's
data.max_response_length for the largest budget: the response holds every reply and observation.
"""

from __future__ import annotations

import argparse

from agentgym_budget.cli.common import add_budgets_argument, add_env_arguments, positive_int

__all__: list[str] = []

NAME = "export-dataset"
HELP = "write a training dataset of episodes (parquet rows for verl)"
FORMATS = ("verl",)


def _tasks(text: str) -> tuple[str | int, ...]:
    parts = tuple(filter(None, (p.strip() for p in text.split(","))))
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else parts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``export-dataset``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["WebShop-1k-v0", "--episodes", "4", "--budgets", "5,10", "-o", "x.parquet"])
        >>> args.id, args.episodes, args.budgets, args.format, args.tasks
        ('WebShop-1k-v0', 4, (5, 10), 'verl', None)
    """
    parser.add_argument("id", metavar="ID", help="registered environment id (see `agentgym-budget list`)")
    add_env_arguments(parser, env_required=True)
    parser.add_argument("--format", choices=FORMATS, default="verl", help="dataset format (default verl)")
    parser.add_argument("--output", "-o", required=True, help="file to write (e.g. data/train.parquet)")
    parser.add_argument("--episodes", type=positive_int, required=True, help="rows (episodes) to write")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first row (default 0)")
    parser.add_argument("--tasks", type=_tasks, default=None, help="task ids or indices, cycled over the rows")
    parser.add_argument("--budget", type=positive_int, default=30, help="turn budget of an episode (default 30)")
    add_budgets_argument(parser, "draw each row's budget from these")
    parser.add_argument("--budget-weights", default=None, help="weights of --budgets, e.g. 2,1,1")
    parser.add_argument("--show-budget", action="store_true", help="show the remaining turns in observations")
    parser.add_argument("--hide-actions", action="store_true", help="do not list admissible actions in the text")
    parser.add_argument("--reward", choices=("env", "process"), default="env", help="env reward or ProcessReward")


def run(args: argparse.Namespace) -> int:
    """Write the dataset and say where."""
    from agentgym_budget.cli.cmd_serve import session_config
    from agentgym_budget.integrations.verl_data import verl_rows, write_parquet

    args.process_reward, args.info_keys = None, ()
    config = session_config(args)
    rows = verl_rows(config, episodes=args.episodes, seed=args.seed, tasks=args.tasks)
    path = write_parquet(rows, args.output)
    print(f"wrote {len(rows)} {args.format} rows ({config.label}) to {path}")
    return 0
