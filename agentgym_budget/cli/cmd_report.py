"""Print Pass@(K,T) tables and write summaries and plots from the logs of one or more runs.

With one directory the outputs are written into it (its episodes.jsonl is only read); with
several, pass --out. Agents from several runs are compared on their common tasks. K and T default
to those of the runs (run.json), else to what the logs hold.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentgym_budget.cli.common import int_list, positive_int
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.eval.estimator import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE
from agentgym_budget.eval.report import report
from agentgym_budget.eval.tables import format_summary

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "report"
HELP = "tables and plots from run directories"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``report``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["runs/a", "runs/b", "--out", "runs/ab", "--t", "10,20"])
        >>> [str(d) for d in args.dirs], str(args.out), args.t, args.k
        (['runs/a', 'runs/b'], 'runs/ab', (10, 20), None)
    """
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="output directories of passkt runs")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: the single DIR)")
    parser.add_argument("--k", type=int_list, default=None, metavar="K,...", help="breadths K")
    parser.add_argument("--t", type=int_list, default=None, metavar="T,...", help="turn budgets T")
    parser.add_argument("--n", type=positive_int, default=None, help="use only the first N samples")
    parser.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE, help="interval level (default 0.95)")
    parser.add_argument("--bootstrap", type=positive_int, default=DEFAULT_BOOTSTRAP, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--no-plots", action="store_true", help="do not write plots")


def run(args: argparse.Namespace) -> int:
    """Summarise, print and write."""
    if args.out is None and len(args.dirs) > 1:
        raise InvalidOptionError("report with several directories needs --out DIR for the combined outputs.")
    out = args.out or args.dirs[0]
    summary = report(
        args.dirs,
        out,
        ks=args.k,
        budgets=args.t,
        samples=args.n,
        confidence=args.confidence,
        resamples=args.bootstrap,
        seed=args.seed,
        plots=not args.no_plots,
    )
    print(format_summary(summary))
    print(f"\nWrote summary.json, summary.csv{', difference.csv' if summary.differences else ''}", end="")
    print(f"{'' if args.no_plots else ' and plots'} into {out}")
    return 0
