"""Single-step decision probes: how good is each agent's next action from shared states?

States are sampled from reference trajectories (the expert's, or --reference DIR/episodes.jsonl),
snapshotted once; at each, every agent is primed with the earlier turns and asked for --m actions.
Each action is judged by expert agreement (the expert's own action, an immediate win, or one after
which the expert's plan is at least one step shorter: step_accuracy), by the share of continuations
(--continuation, default the expert; "self" lets the agent play on) that win within the remaining
budget (step_value), and by the progress change. Without arguments it probes the recovering and the
non-recovering noisy expert on 20 states of the passkt main job's games (TextWorld Coin Collector,
level 110), 4 actions each, 2 workers. Rerunning with the same --out resumes an interrupted run.

Writes DIR/probes.jsonl, run.json, provenance.json, summary.json (per agent step_accuracy, step_value, by depth and
family, paired comparisons, process-signal analysis), summary.csv and accuracy_by_depth.png.
"""

from __future__ import annotations

import argparse

from agentgym_budget.cli import state_probes
from agentgym_budget.cli.common import add_run_arguments, positive_int
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
    state_probes.add_state_arguments(parser, what="probe states", depths=("D,...", "depths to probe (default random)"))
    parser.add_argument("--m", type=positive_int, default=4, help="actions asked of each agent per state (default 4)")
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
    state_probes.add_show_budget_argument(parser)
    add_run_arguments(parser, "probe")


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the probes, print the results and write the outputs."""
    config = ProbeConfig(
        **state_probes.state_config_fields(args),
        samples=args.m,
        budget=args.budget,
        slack=args.slack,
        continuation=args.continuation,
        rollouts=args.rollouts,
    )
    budget = f"budget {config.budget}" if config.budget else f"budget = expert length + {config.slack}"
    details = f"m={config.samples}, {budget}, continuation {config.continuation} x{config.rollouts}"
    result, out, seconds = state_probes.run_states(args, NAME, config, "Single-step probes", details, run_probe)
    print(format_probe_summary(result.summary))
    print()
    print(format_signal(result.summary.process_signal))
    print()
    print(f"{result.probed} actions probed, {result.reused} reused from the log, {seconds:.1f} s.")
    print("Wrote:", ", ".join(str(p) for p in [out / "probes.jsonl", *result.files]))
    return 0
