"""Entry point of the ``agentgym-budget`` command: subcommand discovery, parsing and error reporting.

Errors of the package (:class:`~agentgym_budget.errors.AgentGymBudgetError`) are printed as one
``error: ...`` line on stderr with exit status 2; Ctrl-C exits with 130.

Example:
    >>> {"list", "passkt", "play", "probe", "recovery", "report"} <= set(subcommands())
    True
    >>> main(["list", "--agents"])  # doctest: +ELLIPSIS
    Agents (--agent NAME):
    ...
    0
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

import agentgym_budget
from agentgym_budget.errors import AgentGymBudgetError

__all__ = ["build_parser", "main", "subcommands"]

_PREFIX = "cmd_"


def subcommands() -> dict[str, ModuleType]:
    """Every subcommand module of :mod:`agentgym_budget.cli`, by command name."""
    package = importlib.import_module("agentgym_budget.cli")
    found = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith(_PREFIX):
            module = importlib.import_module(f"agentgym_budget.cli.{info.name}")
            found[module.NAME] = module
    return found


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="agentgym-budget",
        description="Evaluate agents on multi-turn text tasks under turn budgets.",
    )
    parser.add_argument("--version", action="version", version=f"agentgym-budget {agentgym_budget.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in subcommands().items():
        sub = commands.add_parser(
            name,
            help=module.HELP,
            description=module.__doc__.strip() if module.__doc__ else module.HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(sub)
        sub.set_defaults(handler=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except AgentGymBudgetError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
