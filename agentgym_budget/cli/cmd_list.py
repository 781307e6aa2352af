"""List the registered environment ids (family, splits, description) and the agent names.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> run(parser.parse_args(["--family", "textworld"]))  # doctest: +ELLIPSIS
    Environments (--env ID):
      ID ...
      agentgym_budget/TextWorld-CoinCollector-v0 ...
    0
    >>> run(parser.parse_args(["--family", "textworl"]))
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: Unknown family 'textworl'. Did you mean 'textworld'? Families: alfworld, babyai, textworld, twx, webshop.
"""

from __future__ import annotations

import argparse
import sys

from agentgym_budget._internal.install_hint import install_command
from agentgym_budget.agents import agent_kinds
from agentgym_budget.errors import InvalidOptionError, did_you_mean
from agentgym_budget.registration import env_info, missing_modules, missing_programs, registered_ids

__all__: list[str] = []

NAME = "list"
HELP = "list environment ids and agent names"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``list``."""
    parser.add_argument("--family", default=None, help="only this task family")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--envs", action="store_true", help="only environments")
    what.add_argument("--agents", action="store_true", help="only agents")


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1] for row in rows]


def _check_family(family: str | None) -> None:
    families = sorted({env_info(env_id).family for env_id in registered_ids()})
    if family is not None and family not in families:
        raise InvalidOptionError(
            f"Unknown family {family!r}.{did_you_mean(family, families)} Families: {', '.join(families)}."
        )


def run(args: argparse.Namespace) -> int:
    """Print the listings.

    Raises:
        InvalidOptionError: ``--family`` names no registered family.
    """
    _check_family(args.family)
    if not args.agents:
        rows = [("ID", "FAMILY", "SPLITS", "USABLE", "DESCRIPTION")]
        fixes, needs_program = {}, set()
        for env_id in registered_ids(args.family):
            info = env_info(env_id)
            missing, programs = missing_modules(env_id), missing_programs(env_id)
            too_old = info.min_python is not None and sys.version_info[:2] < info.min_python
            if missing and not too_old:
                fixes[info.extra] = missing
            if programs:
                needs_program.update(programs)
            usable = (
                f"no: needs Python >= {'.'.join(map(str, info.min_python))}"
                if too_old
                else f"no: needs [{info.extra}]"
                if missing
                else f"no: needs {', '.join(programs)}"
                if programs
                else "yes"
            )
            rows.append((env_id, info.family, ",".join(info.splits), usable, info.description))
        print("Environments (--env ID):")
        print("\n".join(_table(rows)))
        for extra, missing in fixes.items():
            print(f"Not installed: {', '.join(missing)} (the '{extra}' extra): {install_command(extra)}")
        if "java" in needs_program:
            print("Not found: java (the TWX ids run TextWorldExpress in a JVM): apt-get install default-jre-headless")
    if not args.envs:
        if not args.agents:
            print()
        rows = [("NAME", "DESCRIPTION")]
        for kind in agent_kinds().values():
            name = kind.name + (f":{kind.argument.upper()}" if kind.argument else "")
            if kind.params:
                name += "[:key=value,...]"
            rows.append((name, kind.description))
        print("Agents (--agent NAME):")
        print("\n".join(_table(rows)))
        print("\nAgent parameters (default):")
        for kind in agent_kinds().values():
            for param in kind.params:
                print(f"  {kind.name}: {param.name}={param.default!r}  {param.help}")
    return 0
