"""Serve an environment over OpenEnv (WebSocket sessions, one episode stack per session).

Each client session gets its own environment stack (TurnBudget, BudgetMix with --budgets,
ProcessReward with --reward process). Reset arguments: task, seed, max_turns, show_budget. Actions:
{"command": "<the model's reply>"}, parsed into exactly one command (one turn). Needs the openenv
extra. The server prints "listening on http://HOST:PORT" once ready (--port 0 picks a free port).
"""

from __future__ import annotations

import argparse

from agentgym_budget.cli.common import add_env_arguments, int_list, positive_int

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
    """
    parser.add_argument("id", metavar="ID", help="registered environment id (see `agentgym-budget list`)")
    add_env_arguments(parser, env_required=True)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--max-sessions", type=positive_int, default=8, help="concurrent sessions (default 8)")
    parser.add_argument("--budget", type=positive_int, default=30, help="turn budget of an episode (default 30)")
    parser.add_argument(
        "--budgets", type=int_list, default=None, help="draw each episode's budget from these (BudgetMix)"
    )
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
    )
    return 0
