"""Argument helpers shared by the subcommands.

Example:
    >>> int_list("1,2,4,8")
    (1, 2, 4, 8)
    >>> int_list("3, x")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected comma-separated positive integers like 1,2,4,8, got '3, x'
"""

from __future__ import annotations

import argparse

__all__ = ["add_env_arguments", "int_list", "positive_int"]


def int_list(text: str) -> tuple[int, ...]:
    """Parse ``"1,2,4"`` into positive integers (for ``type=``)."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        values = ()
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers like 1,2,4,8, got {text!r}")
    return values


def positive_int(text: str) -> int:
    """Parse a positive integer (for ``type=``)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def add_env_arguments(parser: argparse.ArgumentParser, *, env_required: bool) -> None:
    """``--env-args`` and ``--split`` (and ``--env`` unless it is positional)."""
    if not env_required:
        parser.add_argument("--env", metavar="ID", default=None, help="registered environment id")
    parser.add_argument(
        "--env-args",
        metavar="K=V,...",
        default=None,
        help="environment constructor arguments, e.g. level=110 or difficulty=1",
    )
    parser.add_argument("--split", default=None, help="task split (default: the environment's default)")
