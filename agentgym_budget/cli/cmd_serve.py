"""Serve an environment over OpenEnv (WebSocket sessions, one episode stack per session).

Each client session gets its own environment stack (TurnBudget, BudgetMix with --budgets,
ProcessReward with --reward process). Reset arguments: task, seed, max_turns, show_budget. Actions:
{"command": "<the model's reply>"}, parsed into exactly one command (one turn). Needs the openenv
extra. The server prints "listening on http://HOST:PORT" once ready (--port 0 picks a free port).
Limits held on every route: --max-sessions (WebSocket and HTTP alike), --max-message-bytes (an
HTTP body or WebSocket frame above it is refused before it is parsed), --read-timeout (an HTTP body
not complete that long after its headers is answered 408) and --idle-timeout (a WebSocket session
that sends no whole message that long is closed). Per episode: --max-budget (the largest max_turns a
reset may ask for) and --max-history-bytes (the bytes of commands one episode may hold; a command
past it is refused, spending no turn).
"""

from __future__ import annotations

import argparse
import math

from agentgym_budget.cli.common import add_budgets_argument, add_env_arguments, positive_int

__all__: list[str] = []

NAME = "serve"
HELP = "serve an environment over OpenEnv (openenv extra)"


def _key_values(text: str) -> dict[str, float | str]:
    values: dict[str, float | str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected key=value pairs like coefficient=1,gamma=0.99, got {part!r}")
        try:
            values[name.strip()] = float(value)
        except ValueError:
            values[name.strip()] = value.strip()
    return values


_MIN_BYTES = 1024
_MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # the WebSocket frame size the server reads at all
_MAX_HISTORY_BYTES = 1024 * 1024 * 1024


def _bytes_between(text: str, highest: int, unit: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not _MIN_BYTES <= value <= highest:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of bytes from {_MIN_BYTES} to {highest} ({unit}), got {text!r}"
        )
    return value


def _message_bytes(text: str) -> int:
    """Parse ``--max-message-bytes``: a whole number of bytes from 1,024 to 16 MiB.

    Example:
        >>> _message_bytes("1048576")
        1048576
        >>> _message_bytes("1k")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: expected a whole number of bytes from 1024 to 16777216 (16 MiB), got '1k'
    """
    return _bytes_between(text, _MAX_MESSAGE_BYTES, "16 MiB")


def _history_bytes(text: str) -> int:
    """Parse ``--max-history-bytes``: a whole number of bytes from 1,024 to 1 GiB.

    Example:
        >>> _history_bytes("65536")
        65536
        >>> _history_bytes("0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: expected a whole number of bytes from 1024 to 1073741824 (1 GiB), got '0'
    """
    return _bytes_between(text, _MAX_HISTORY_BYTES, "1 GiB")


def _seconds(text: str) -> float:
    """Parse ``--idle-timeout`` and ``--read-timeout``: a positive, finite number of seconds.

    Example:
        >>> _seconds("0.5")
        0.5
        >>> _seconds("-3")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: expected a positive number of seconds like 600 or 0.5, got '-3'
    """
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds like 600 or 0.5, got {text!r}")
    return value


def _names(text: str) -> tuple[str, ...]:
    return tuple(filter(None, (p.strip() for p in text.split(","))))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``serve``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["WebShop-1k-v0", "--port", "0", "--budgets", "5,10", "--show-budget"])
        >>> args.id, args.port, args.budgets, args.show_budget, args.max_sessions
        ('WebShop-1k-v0', 0, (5, 10), True, 8)
        >>> args.max_message_bytes, args.idle_timeout, args.read_timeout, args.max_budget, args.max_history_bytes
        (1048576, 600.0, 10.0, None, 1048576)
    """
    from agentgym_budget.integrations.server_limits import DEFAULTS as defaults

    parser.add_argument("id", metavar="ID", help="registered environment id (see `agentgym-budget list`)")
    add_env_arguments(parser, env_required=True)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--max-sessions", type=positive_int, default=8, help="concurrent sessions (default 8)")
    parser.add_argument(
        "--max-message-bytes",
        type=_message_bytes,
        default=defaults["max_message_bytes"],
        metavar="N",
        help=f"largest HTTP body or WebSocket frame, refused before parsing "
        f"(default {defaults['max_message_bytes']}, 1 MiB)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=defaults["idle_timeout"],
        metavar="S",
        help=f"close a WebSocket session that sends no whole message for S seconds "
        f"(default {defaults['idle_timeout']:g})",
    )
    parser.add_argument(
        "--read-timeout",
        type=_seconds,
        default=defaults["read_timeout"],
        metavar="S",
        help=f"answer 408 to an HTTP request whose body is not complete S seconds after its headers "
        f"(default {defaults['read_timeout']:g})",
    )
    parser.add_argument("--budget", type=positive_int, default=30, help="turn budget of an episode (default 30)")
    parser.add_argument(
        "--max-budget",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"largest max_turns a reset may ask for "
        f"(default {defaults['max_budget']}, or the largest --budget(s) if more)",
    )
    parser.add_argument(
        "--max-history-bytes",
        type=_history_bytes,
        default=defaults["max_history_bytes"],
        metavar="N",
        help=f"bytes of commands one episode may hold; a command past it is refused, spending no turn "
        f"(default {defaults['max_history_bytes']}, 1 MiB)",
    )
    add_budgets_argument(parser, "draw each episode's budget from these (BudgetMix)")
    parser.add_argument("--budget-weights", default=None, help="weights of --budgets, e.g. 2,1,1")
    parser.add_argument("--show-budget", action="store_true", help="show the remaining turns in observations")
    parser.add_argument("--hide-actions", action="store_true", help="do not list admissible actions in the text")
    parser.add_argument("--reward", choices=("env", "process"), default="env", help="env reward or ProcessReward")
    parser.add_argument(
        "--process-reward", type=_key_values, default=None, metavar="K=V,...", help="ProcessReward parameters"
    )
    parser.add_argument("--info-keys", type=_names, default=(), metavar="KEY,...", help="opt-in info keys to serve")
    parser.add_argument("--log-level", default="warning", help="uvicorn log level (default warning)")


def session_config(args: argparse.Namespace) -> object:
    """The :class:`~agentgym_budget.integrations.session_config.SessionConfig` the arguments describe."""
    from agentgym_budget.errors import InvalidOptionError
    from agentgym_budget.integrations.session_config import SessionConfig

    weights = None
    if args.budget_weights:
        try:
            weights = tuple(float(w) for w in args.budget_weights.split(","))
        except ValueError as err:
            raise InvalidOptionError(
                f"--budget-weights takes numbers like 2,1,1, got {args.budget_weights!r}."
            ) from err
    return SessionConfig(
        args.id,
        env_kwargs=args.env_args,
        split=args.split,
        max_turns=args.budget,
        budgets=args.budgets,
        budget_weights=weights,
        show_budget=args.show_budget,
        show_actions=not args.hide_actions,
        reward=args.reward,
        process_reward=args.process_reward or (),
        info_keys=args.info_keys,
    )


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from agentgym_budget.integrations.openenv import serve

    serve(
        session_config(args),
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        log_level=args.log_level,
        max_message_bytes=args.max_message_bytes,
        idle_timeout=args.idle_timeout,
        read_timeout=args.read_timeout,
        max_budget=args.max_budget,
        max_history_bytes=args.max_history_bytes,
    )
    return 0
