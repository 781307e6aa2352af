"""Print Pass@(K,T) tables and write summaries and plots from the logs of one or more runs.

The logs are only read. The outputs go to --out (default runs/report-<time>), never into a run's
own directory unless --force is given; a report's files always describe the same summary (files of
an earlier report there that this one does not produce are removed). Agents from several runs are
compared on their common tasks. K and T default to the grid every agent supports (the budgets all
runs hold, K up to the fewest samples; what is left out is said); a K or T the logs cannot support
is an error that says what they hold. Runs whose provenance.json differ in an engine, library or
model (version or SHA-256) are combined with a one-line warning on stderr per difference, naming both
values; summary.json keeps every run's provenance.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from agentgym_budget.cli.common import (
    add_budgets_argument,
    add_plot_format_argument,
    int_list,
    positive_int,
    resample_count,
)
from agentgym_budget.eval.estimator import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE
from agentgym_budget.eval.passkt.report import report
from agentgym_budget.eval.passkt.tables import format_summary
from agentgym_budget.runner.provenance import ProvenanceWarning

__all__: list[str] = []

NAME = "report"
HELP = "tables and plots from run directories"


def default_out() -> Path:
    """``runs/report-<YYYYmmdd-HHMMSS>`` under the current directory.

    Example:
        >>> default_out().name.startswith("report-")
        True
    """
    return Path("runs") / time.strftime("report-%Y%m%d-%H%M%S")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``report``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["runs/a", "runs/b", "--out", "runs/ab", "--t", "10,20"])
        >>> [str(d) for d in args.dirs], str(args.out), args.budgets, args.k, args.force, args.plot_format
        (['runs/a', 'runs/b'], 'runs/ab', (10, 20), None, False, ('png',))
    """
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="output directories of passkt runs")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default runs/report-<time>)")
    parser.add_argument(
        "--force", action="store_true", help="allow --out to be a run directory (replaces its summary and plots)"
    )
    parser.add_argument("--k", type=int_list, default=None, metavar="K,...", help="breadths K")
    add_budgets_argument(parser, "turn budgets T (default: the runs' own)")
    parser.add_argument("--n", type=positive_int, default=None, help="use only the first N samples")
    parser.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE, help="interval level (default 0.95)")
    parser.add_argument(
        "--bootstrap", type=resample_count, default=DEFAULT_BOOTSTRAP, help="bootstrap resamples (at least 100)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--no-plots", action="store_true", help="do not write plots")
    add_plot_format_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Summarise, print and write."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ProvenanceWarning)  # printed below, one line each
        result = _report(args)
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}")
    print(format_summary(result.summary))
    print(f"\nWrote {', '.join(path.name for path in result.files)} into {result.out}")
    return 0


def _report(args: argparse.Namespace) -> Any:
    return report(
        args.dirs,
        args.out or default_out(),
        ks=args.k,
        budgets=args.budgets,
        samples=args.n,
        confidence=args.confidence,
        resamples=args.bootstrap,
        seed=args.seed,
        plots=not args.no_plots,
        plot_formats=args.plot_format,
        force=args.force,
    )
