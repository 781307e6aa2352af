"""Error-recovery probes: force k wrong actions at shared states, then measure recovery within the budget left.

States at depth t are sampled from reference trajectories (the expert's, or --reference
DIR/episodes.jsonl) and snapshotted once; at each, k wrong actions (admissible, not optimal, the
task still solvable; errors preferred unless --any-wrong) are forced, then each agent, told the
earlier turns, continues with R turns left (restore + fork, no replay). recovery_rate is the share of
continuations with k >= 1 that win within the largest R; k = 0 is the unperturbed control. Agents
also play --natural episodes per task from the start, and any --episodes logs are replayed: the
first natural error, the share of episodes that still succeed and the turns spent recovering are
reported, with the process-signal analysis. Without arguments it runs the recovering and the
non-recovering noisy expert on 20 states of the passkt main job's games (TextWorld Coin Collector,
level 110), k in 0,1,2, R in 5,10,15,20,30, 4 continuations each, 4 natural episodes per task, 2
workers. Rerunning with the same --out resumes an interrupted run.

Writes DIR/episodes.jsonl, run.json, provenance.json, summary.json (per agent recovery_rate, control_success, rates by
budget, k, depth and family, paired comparisons, natural recovery, process signal), summary.csv and
recovery_vs_budget.png.
"""

from __future__ import annotations

import argparse

from agentgym_budget.cli import state_probes
from agentgym_budget.cli.common import add_budgets_argument, add_run_arguments, count_list, positive_int
from agentgym_budget.eval.recovery.config import DEFAULT_RECOVERY_BUDGETS, DEFAULT_RECOVERY_KS, RecoveryConfig
from agentgym_budget.eval.recovery.plan import run_recovery
from agentgym_budget.eval.recovery.summary import format_recovery_summary

__all__: list[str] = []

NAME = "recovery"
HELP = "error-recovery probes: forced wrong actions, then recovery within the remaining budget"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``recovery``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["--k", "1,3", "--budgets", "4,8", "--natural", "0"])
        >>> args.k, args.budgets, args.n, args.natural, args.any_wrong
        ((1, 3), (4, 8), 4, 0, False)
    """
    state_probes.add_state_arguments(parser, what="perturbation states", depths=("T,...", "depths t (default random)"))
    parser.add_argument(
        "--k",
        type=count_list,
        default=DEFAULT_RECOVERY_KS,
        metavar="K,...",
        help="forced wrong actions (default 0,1,2; 0 is the control)",
    )
    add_budgets_argument(
        parser, "turns left after the perturbation (default 5,10,15,20,30)", default=DEFAULT_RECOVERY_BUDGETS
    )
    parser.add_argument("--n", type=positive_int, default=4, help="continuations per state, k and agent (default 4)")
    parser.add_argument("--any-wrong", action="store_true", help="force any wrong action, not preferably errors")
    state_probes.add_show_budget_argument(parser)
    parser.add_argument(
        "--natural", type=int, default=4, help="natural episodes per task and agent (default 4; 0: none)"
    )
    parser.add_argument("--natural-budget", type=positive_int, default=30, help="their budget (default 30)")
    parser.add_argument(
        "--episodes", action="append", default=None, metavar="PATH", help="a logged episodes.jsonl to trace, repeatable"
    )
    add_run_arguments(parser, "recovery")


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the recovery probes, print the results and write the outputs."""
    config = RecoveryConfig(
        **state_probes.state_config_fields(args),
        ks=args.k,
        budgets=args.budgets,
        samples=args.n,
        harmful=not args.any_wrong,
        natural=args.natural,
        natural_budget=args.natural_budget,
        episodes=tuple(args.episodes or ()),
    )
    details = (
        f"k={list(config.ks)}, R={list(config.budgets)}, n={config.samples}, "
        f"{'errors preferred' if config.harmful else 'any wrong action'}, {config.mode} mode, "
        f"{config.natural} natural episodes per task (budget {config.natural_budget})"
    )
    result, out, seconds = state_probes.run_states(args, NAME, config, "Recovery probes", details, run_recovery)
    print(format_recovery_summary(result.summary))
    print()
    print(f"{result.played} episodes played, {result.reused} reused from the log, {seconds:.1f} s.")
    print("Wrote:", ", ".join(str(p) for p in [out / "episodes.jsonl", *result.files]))
    return 0
