"""Argument helpers shared by the subcommands.

Example:
    >>> int_list("1,2,4,8")
    (1, 2, 4, 8)
    >>> int_list("3, x")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected comma-separated positive integers like 1,2,4,8, got '3, x'
    >>> count_list("0,1,2")
    (0, 1, 2)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__: list[str] = []


def resample_count(text: str) -> int:
    """Parse a number of bootstrap resamples, at least :data:`~agentgym_budget.eval.estimator.MIN_BOOTSTRAP`."""
    from agentgym_budget.eval.estimator import MIN_BOOTSTRAP

    return _int_at_least(text, MIN_BOOTSTRAP, f"at least {MIN_BOOTSTRAP} resamples (interval bounds are quantiles)")


def _int_at_least(text: str, minimum: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def tiny_size(text: str) -> tuple[int, int]:
    """Parse ``"4x256"`` into ``(layers, width)`` (for ``type=``).

    Example:
        >>> tiny_size("4x256")
        (4, 256)
    """
    layers, _, width = text.lower().partition("x")
    if not (layers.strip().isdigit() and width.strip().isdigit() and int(layers) > 0 and int(width) > 0):
        raise argparse.ArgumentTypeError(f"expected LAYERSxWIDTH like 4x256, got {text!r}")
    return int(layers), int(width)


def int_list(text: str) -> tuple[int, ...]:
    """Parse ``"1,2,4"`` into positive integers (for ``type=``)."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        values = ()
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers like 1,2,4,8, got {text!r}")
    return values


BUDGETS_FLAGS = ("--budgets", "--t")
"""One vocabulary: every command that takes a list of turn budgets takes it as ``--budgets`` or ``--t``."""


def add_budgets_argument(
    parser: argparse.ArgumentParser, help: str, *, default: tuple[int, ...] | None = None, metavar: str = "T,..."
) -> None:
    """``--budgets T,...`` (also ``--t``): a list of turn budgets, under the same flag on every command.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_budgets_argument(parser, "turn budgets T")
        >>> parser.parse_args(["--t", "10,20"]).budgets == parser.parse_args(["--budgets", "10,20"]).budgets == (10, 20)
        True
    """
    parser.add_argument(*BUDGETS_FLAGS, dest="budgets", type=int_list, default=default, metavar=metavar, help=help)


def positive_int(text: str) -> int:
    """Parse a positive integer (for ``type=``)."""
    return _int_at_least(text, 1, "a positive integer")


def plot_formats(text: str) -> tuple[str, ...]:
    """Parse ``"png,pdf,svg"`` into plot formats (for ``type=``).

    Example:
        >>> plot_formats("png,pdf")
        ('png', 'pdf')
        >>> plot_formats("gif")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: Unknown plot format 'gif'. Expected one or more of png, pdf, svg separated by commas, e.g. png,pdf.
    """
    from agentgym_budget.errors import InvalidOptionError
    from agentgym_budget.runner.outputs import parse_plot_formats

    try:
        return parse_plot_formats(text)
    except InvalidOptionError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_plot_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--plot-format png,pdf,svg``: the file formats of the plots (default png)."""
    parser.add_argument(
        "--plot-format",
        type=plot_formats,
        default=("png",),
        metavar="FMT,...",
        help="plot file formats, any of png,pdf,svg (default png)",
    )


def add_run_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The flags every run command shares: workers, backend, seed, output directory, intervals, plots, progress.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_run_arguments(parser, "probe")
        >>> args = parser.parse_args(["--workers", "4"])
        >>> args.workers, args.backend, args.ray_address, args.seed, args.out, args.no_plots, args.plot_format
        (4, 'local', None, 0, None, False, ('png',))
    """
    from agentgym_budget.eval.estimator import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE
    from agentgym_budget.runner.pool import BACKENDS

    parser.add_argument(
        "--workers", type=positive_int, default=2, help="worker processes, or Ray actors with --backend ray (default 2)"
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="where jobs run: local processes, or Ray actors (default local; ray needs agentgym-budget[ray])",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDR",
        default=None,
        help="with --backend ray: connect to this cluster (auto, HOST:6379, ray://HOST:10001) "
        "instead of starting a local one",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the run (default 0)")
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default runs/{command}-<time>)")
    parser.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE, help="interval level (default 0.95)")
    parser.add_argument(
        "--bootstrap", type=resample_count, default=DEFAULT_BOOTSTRAP, help="bootstrap resamples (at least 100)"
    )
    parser.add_argument("--no-plots", action="store_true", help="do not write plots")
    add_plot_format_argument(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run_backend(args: argparse.Namespace) -> Any:
    """The executor of :func:`add_run_arguments`' ``--backend`` / ``--ray-address`` (``None``: local processes).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_run_arguments(parser, "passkt")
        >>> run_backend(parser.parse_args([])) is None
        True
        >>> run_backend(parser.parse_args(["--backend", "ray", "--ray-address", "auto"])).describe()
        "Ray actors on the cluster at 'auto'"
        >>> run_backend(parser.parse_args(["--ray-address", "auto"]))
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: A Ray address ('auto') was given for the local backend; add --backend ray (backend='ray') to run on that cluster, or drop the address.
    """
    from agentgym_budget.runner.pool import make_backend

    return make_backend(args.backend, ray_address=args.ray_address)


def run_options(args: argparse.Namespace, backend: Any) -> dict[str, Any]:
    """The keyword arguments every ``run_*`` runner takes from :func:`add_run_arguments`' flags.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_run_arguments(parser, "passkt")
        >>> run_options(parser.parse_args(["--no-plots"]), None)
        {'progress': True, 'plots': False, 'plot_formats': ('png',), 'backend': None}
    """
    if backend is None:
        note_busy_cores(args.workers)
    return {
        "progress": not args.no_progress,
        "plots": not args.no_plots,
        "plot_formats": args.plot_format,
        "backend": backend,
    }


def available_cores() -> int:
    """The CPUs this process may run on (its affinity mask; ``os.cpu_count()`` where there is none)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def note_busy_cores(workers: int, threads: int = 1, *, flag: str = "--workers") -> None:
    """Say on stderr when ``workers`` processes of ``threads`` threads each outnumber the cores (nothing is changed).

    Worker processes beyond the cores share them (useful only for agents that wait on a server); see
    :func:`fit_threads` for torch threads, which are capped instead.
    """
    cores = available_cores()
    if workers * threads > cores:
        print(
            f"note: {flag} {workers} on {cores} cores: the workers share the cores, so CPU-bound work runs no "
            f"faster than with {flag} {max(1, cores // threads)} (more helps only work that waits, e.g. agents on a "
            "server).",
            file=sys.stderr,
        )


def fit_threads(threads: int, *, workers: int = 1) -> int:
    """``threads`` lowered so that ``workers`` x ``threads`` fits the cores; a note on stderr when lowered.

    Torch threads beyond the free cores spin instead of working: an oversubscribed GRPO stage spends
    several times the CPU for the same steps. The result is at least 1.

    Example:
        >>> fit_threads(1, workers=1)
        1
    """
    fitting = max(1, available_cores() // workers)
    if threads <= fitting:
        return threads
    print(
        f"note: --threads {threads} x {workers} worker(s) would oversubscribe the {available_cores()} cores "
        f"(torch threads beyond the free cores spin instead of working); using --threads {fitting}.",
        file=sys.stderr,
    )
    return fitting


def describe_workers(workers: int, backend: Any) -> str:
    """``"2 worker(s)"``, followed by where they run when it is not this machine's processes.

    Example:
        >>> describe_workers(2, None)
        '2 worker(s)'
        >>> from agentgym_budget.runner.ray_executor import RayBackend
        >>> describe_workers(4, RayBackend())
        '4 worker(s) (Ray actors on a local cluster)'
    """
    return f"{workers} worker(s)" + (f" ({backend.describe()})" if backend is not None else "")


def add_reference_arguments(parser: argparse.ArgumentParser) -> None:
    """Where probe states come from: ``--per-trajectory``, ``--reference``, ``--reference-agent``."""
    parser.add_argument(
        "--per-trajectory", type=positive_int, default=1, help="random depths per trajectory (default 1)"
    )
    parser.add_argument(
        "--reference", default="expert", metavar="expert|PATH", help="expert trajectories, or an episodes.jsonl log"
    )
    parser.add_argument("--reference-agent", default=None, metavar="NAME", help="only this agent's logged episodes")


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


def count_list(text: str) -> tuple[int, ...]:
    """Parse ``"0,1,2"`` into non-negative integers (for ``type=``)."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        values = ()
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated non-negative integers like 0,1,2, got {text!r}")
    return values


def add_envs_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """Repeatable ``--env`` / ``--env-args`` (paired in order) and ``--split``, for commands over several envs."""
    parser.add_argument(
        "--env",
        action="append",
        metavar="ID",
        default=None,
        help=f"registered environment id, repeatable (default {default})",
    )
    parser.add_argument(
        "--env-args",
        action="append",
        metavar="K=V,...",
        default=None,
        help="constructor arguments of the matching --env (repeat once per --env, in order), e.g. difficulty=1",
    )
    parser.add_argument("--split", default=None, help="task split (default: the environment's default)")


def env_refs(args: argparse.Namespace, default_env: str, default_args: str | None) -> tuple[Any, ...]:
    """The :class:`~agentgym_budget.runner.env_ref.EnvRef` s of :func:`add_envs_arguments`.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_envs_arguments(parser, "TextWorld-CoinCollector-v0")
        >>> refs = env_refs(parser.parse_args([]), "TextWorld-CoinCollector-v0", "level=110")
        >>> [ref.label for ref in refs]
        ['TextWorld-CoinCollector-v0(level=110)']
        >>> args = parser.parse_args(["--env", "TextWorld-Cooking-v0", "--env-args", "difficulty=1", "--env", "WebShop-1k-v0"])
        >>> [ref.label for ref in env_refs(args, "x", None)]
        ['TextWorld-Cooking-v0(difficulty=1)', 'WebShop-1k-v0']
    """
    from agentgym_budget.errors import InvalidOptionError
    from agentgym_budget.runner.env_ref import EnvRef

    if not args.env:
        extra = args.env_args or []
        if len(extra) > 1:
            raise InvalidOptionError("--env-args was given more than once without --env; give one per --env.")
        return (EnvRef.parse(default_env, extra[0] if extra else default_args, args.split),)
    given = list(args.env_args or [])
    if len(given) > len(args.env):
        raise InvalidOptionError(
            f"{len(given)} --env-args for {len(args.env)} --env; give at most one per --env, in order."
        )
    given += [None] * (len(args.env) - len(given))
    return tuple(EnvRef.parse(env, extra, args.split) for env, extra in zip(args.env, given, strict=True))


def run_resumable(config: Any, out: Path, play: Callable[..., Any], options: dict[str, Any]) -> tuple[Any, float]:
    """Say where the run writes (and how to resume it), run ``play(config, out, **options)``; its result and seconds."""
    print(f"output: {out}  (if interrupted, rerun with --out {out} to resume)", flush=True)
    began = time.perf_counter()
    result = play(config, out, **options)
    print()
    return result, time.perf_counter() - began


PASSKT_FIRST_LOOKS = (
    ("difference.png", "where the first agent's advantage lives in the (K, T) plane"),
    ("success_vs_T.png", "success against the turn budget, one panel per K"),
    ("summary.csv", "every (agent, K, T) cell with its interval"),
)
"""The files of a Pass@(K,T) run worth opening first, in that order, with what each shows."""


def next_look(written: Sequence[Path], first_looks: Sequence[tuple[str, str]] = PASSKT_FIRST_LOOKS) -> str | None:
    """The "Next, open ..." line naming the first of ``first_looks`` that was ``written`` (None if none was).

    Example:
        >>> next_look([Path("run/summary.csv"), Path("run/difference.png")])
        "Next, open run/difference.png: where the first agent's advantage lives in the (K, T) plane."
    """
    by_name = {path.name: path for path in written}
    for name, shows in first_looks:
        if name in by_name:
            return f"Next, open {by_name[name]}: {shows}."
    return None
