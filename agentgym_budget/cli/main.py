"""Entry point of the ``agentgym-budget`` command: subcommand discovery, parsing and error reporting.

Errors of the package (:class:`~agentgym_budget.errors.AgentGymBudgetError`) are printed as one
``error: ...`` line on stderr with exit status 2; Ctrl-C exits with 130 and ``SIGTERM`` (``kill``) with 143,
both after the command's cleanup ran (``finally`` blocks: logs flushed, a stage's time recorded). A flag a subcommand does
not know is reported with that subcommand's usage and the closest flags it has (argparse alone
would show the top-level usage).

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
import signal
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

import agentgym_budget
from agentgym_budget.errors import AgentGymBudgetError, did_you_mean

__all__ = ["main"]

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
        sub.set_defaults(handler=module.run, command_parser=sub)
    return parser


def synopsis(width: int = 116) -> str:
    """Every subcommand's usage, as ``docs/cli.md`` shows it (generated from the parsers; a test compares).

    Example:
        >>> synopsis().splitlines()[0].startswith("agentgym-budget export-dataset ")
        True
    """
    parser = build_parser()
    [commands] = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    usages = []
    for sub in commands.choices.values():
        formatter = argparse.HelpFormatter(prog=sub.prog, width=width)
        formatter.add_usage(sub.usage, sub._actions, sub._mutually_exclusive_groups, prefix="")
        usages.append(formatter.format_help().strip("\n"))
    return "\n".join(usages)


def _unknown_flags(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    known = [option for action in parser._actions for option in action.option_strings]
    hints = []
    for extra in extras:
        flag = extra.split("=", 1)[0]
        hint = did_you_mean(flag, known) if flag.startswith("-") else ""
        if hint:
            hints.append(f"{flag}:{hint.replace(' Did you', ' did you')}")
    return f"unrecognized arguments: {' '.join(extras)}" + (f" ({'; '.join(hints)})" if hints else "")


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse ``argv``; an unknown flag exits with the subcommand's usage and a did-you-mean (status 2).

    Example:
        >>> import contextlib, io
        >>> stderr = io.StringIO()
        >>> with contextlib.redirect_stderr(stderr), contextlib.suppress(SystemExit):
        ...     parse_arguments(["passkt", "--workerz", "3"])
        >>> print(stderr.getvalue().splitlines()[-1])
        agentgym-budget passkt: error: unrecognized arguments: --workerz 3 (--workerz: did you mean '--workers'?)
    """
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        args.command_parser.error(_unknown_flags(args.command_parser, extras))
    return args


class _Terminated(KeyboardInterrupt):
    """``SIGTERM``, raised where the command is, so that its cleanup runs as it does for Ctrl-C."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    args = parse_arguments(argv)
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        return int(args.handler(args) or 0)
    except AgentGymBudgetError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except _Terminated:
        print("terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
