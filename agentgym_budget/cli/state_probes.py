"""What ``probe`` and ``recovery`` share: both sample states from reference trajectories and run agents there.

The arguments that choose the envs, agents and states, the config fields they fill, and the run's frame
(backend, output folder, the resume hint, the timing) are written once here.

Example:
    >>> from agentgym_budget.cli.common import add_run_arguments
    >>> parser = argparse.ArgumentParser()
    >>> add_state_arguments(parser, what="probe states", depths=("D,...", "depths to probe (default random)"))
    >>> add_show_budget_argument(parser)
    >>> add_run_arguments(parser, "probe")
    >>> args = parser.parse_args(["--agent", "random", "--states", "5"])
    >>> fields = state_config_fields(args)
    >>> fields["agents"], fields["states"], fields["reference"], fields["show_budget"]
    (('random',), 5, 'expert', False)
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentgym_budget.cli.cmd_passkt import DEFAULT_AGENTS, DEFAULT_ENV, DEFAULT_ENV_ARGS
from agentgym_budget.cli.common import (
    add_envs_arguments,
    add_reference_arguments,
    count_list,
    describe_workers,
    env_refs,
    positive_int,
    run_backend,
    run_options,
    run_resumable,
)

__all__: list[str] = []


def add_state_arguments(parser: argparse.ArgumentParser, *, what: str, depths: tuple[str, str]) -> None:
    """``--env``/``--env-args``, ``--agent``, ``--states`` (``what`` per env), ``--depths`` and the reference.

    ``depths`` is the ``--depths`` metavar and help.
    """
    add_envs_arguments(parser, f"{DEFAULT_ENV} with {DEFAULT_ENV_ARGS}")
    parser.add_argument(
        "--agent",
        action="append",
        metavar="NAME",
        help="agent name, repeatable (default: noisy-expert-recover and noisy-expert-norecover)",
    )
    parser.add_argument("--states", type=positive_int, default=20, help=f"{what} per env (default 20)")
    parser.add_argument("--depths", type=count_list, default=None, metavar=depths[0], help=depths[1])
    add_reference_arguments(parser)


def add_show_budget_argument(parser: argparse.ArgumentParser) -> None:
    """``--show-budget``."""
    parser.add_argument("--show-budget", action="store_true", help="agents see their remaining budget")


def state_config_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The config fields that :func:`add_state_arguments`, ``--show-budget`` and the run arguments fill."""
    return {
        "envs": env_refs(args, DEFAULT_ENV, DEFAULT_ENV_ARGS),
        "agents": tuple(args.agent or DEFAULT_AGENTS),
        "states": args.states,
        "depths": args.depths,
        "per_trajectory": args.per_trajectory,
        "reference": args.reference,
        "reference_agent": args.reference_agent,
        "show_budget": args.show_budget,
        "seed": args.seed,
        "workers": args.workers,
        "confidence": args.confidence,
        "resamples": args.bootstrap,
    }


def run_states(
    args: argparse.Namespace, command: str, config: Any, title: str, details: str, play: Callable[..., Any]
) -> tuple[Any, Path, float]:
    """Print what runs (``title``, the agents, envs and states, ``details``), run ``play(config, out, **options)``.

    Returns:
        The result, the output folder and the seconds it took.
    """
    backend = run_backend(args)
    out = args.out or Path("runs") / time.strftime(f"{command}-%Y%m%d-%H%M%S")
    print(f"{title} of {', '.join(spec.name for spec in config.specs)}")
    print(
        f"on {', '.join(env.label for env in config.envs)}: {config.states} states from {config.reference} "
        f"trajectories, {details}, seed={config.seed}, {describe_workers(config.workers, backend)}"
    )
    result, seconds = run_resumable(config, out, play, run_options(args, backend))
    return result, out, seconds
