"""Single-step decision probes: how good is each agent's next action from shared states?

States are sampled from reference trajectories (the expert's, or --reference DIR/episodes.jsonl),
snapshotted once; at each, every agent is primed with the earlier turns and asked for --m actions.
Each action is judged by expert agreement (the expert's own action, an immediate win, or one after
which the expert's plan is at least one step shorter: step_accuracy), by the share of continuations
(--continuation, default the expert; "self" lets the agent play on) that win within the remaining
budget (step_value), and by the progress change. Without arguments it probes the recovering and the
non-recovering noisy expert on 20 states of the passkt main job's games (TextWorld Coin Collector,
level 110), 4 actions each, 2 workers. Rerunning with the same --out resumes an interrupted run.

Writes DIR/probes.jsonl, run.json, summary.json (per agent step_accuracy, step_value, by depth and
family, paired comparisons, process-signal analysis), summary.csv and accuracy_by_depth.png.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agentgym_budget.cli.cmd_passkt import DEFAULT_AGENTS, DEFAULT_ENV, DEFAULT_ENV_ARGS
from agentgym_budget.cli.common import (
    add_envs_arguments,
    add_reference_arguments,
    add_run_arguments,
    count_list,
    describe_workers,
    env_refs,
    positive_int,
    run_backend,
    run_options,
)
from agentgym_budget.eval.probes.plan import ProbeConfig, run_probe
from agentgym_budget.eval.probes.summary import format_probe_summary
from agentgym_budget.eval.process_signal import format_signal

__all__: list[str] = []

NAME = "probe"
HELP = "single-step decision probes from shared states (accuracy, value, progress change)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``probe``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["--agent", "random", "--states", "5", "--m", "2", "--continuation", "self"])
        >>> args.agent, args.states, args.m, args.continuation, args.slack, args.workers
        (['random'], 5, 2, 'self', 1, 2)
    """
    add_envs_arguments(parser, f"{DEFAULT_ENV} with {DEFAULT_ENV_ARGS}")
    parser.add_argument(
        "--agent",
        action="append",
        metavar="NAME",
        help="agent name, repeatable (default: noisy-expert-recover and noisy-expert-norecover)",
    )
    parser.add_argument("--states", type=positive_int, default=20, help="probe states per env (default 20)")
    parser.add_argument("--m", type=positive_int, default=4, help="actions asked of each agent per state (default 4)")
    parser.add_argument(
        "--depths", type=count_list, default=None, metavar="D,...", help="depths to probe (default random)"
    )
    add_reference_arguments(parser)
    parser.add_argument("--budget", type=positive_int, default=None, help="episode budget of every state")
    parser.add_argument(
        "--slack", type=int, default=1, help="without --budget: turns beyond the expert's solution length (default 1)"
    )
    parser.add_argument(
        "--continuation",
        default="expert",
        metavar="NAME|self",
        help="continuation policy for the value (default expert)",
    )
    parser.add_argument("--rollouts", type=positive_int, default=1, help="continuations per action (default 1)")
    parser.add_argument("--show-budget", action="store_true", help="agents see their remaining budget")
    add_run_arguments(parser, "probe")


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the probes, print the results and write the outputs."""
    config = ProbeConfig(
        envs=env_refs(args, DEFAULT_ENV, DEFAULT_ENV_ARGS),
        agents=tuple(args.agent or DEFAULT_AGENTS),
        states=args.states,
        samples=args.m,
        depths=args.depths,
        per_trajectory=args.per_trajectory,
        reference=args.reference,
        reference_agent=args.reference_agent,
        budget=args.budget,
        slack=args.slack,
        continuation=args.continuation,
        rollouts=args.rollouts,
        show_budget=args.show_budget,
        seed=args.seed,
        workers=args.workers,
        confidence=args.confidence,
        resamples=args.bootstrap,
    )
    backend = run_backend(args)
    out = args.out or Path("runs") / time.strftime("probe-%Y%m%d-%H%M%S")
    budget = f"budget {config.budget}" if config.budget else f"budget = expert length + {config.slack}"
    print(f"Single-step probes of {', '.join(spec.name for spec in config.specs)}")
    print(
        f"on {', '.join(env.label for env in config.envs)}: {config.states} states from {config.reference} "
        f"trajectories, m={config.samples}, {budget}, continuation {config.continuation} x{config.rollouts}, "
        f"seed={config.seed}, {describe_workers(config.workers, backend)}"
    )
    print(f"output: {out}  (if interrupted, rerun with --out {out} to resume)", flush=True)
    began = time.perf_counter()
    result = run_probe(config, out, **run_options(args, backend))
    print()
    print(format_probe_summary(result.summary))
    print()
    print(format_signal(result.summary.process_signal))
    print()
    print(f"{result.probed} actions probed, {result.reused} reused from the log, {time.perf_counter() - began:.1f} s.")
    print("Wrote:", ", ".join(str(p) for p in [out / "probes.jsonl", *result.files]))
    return 0
