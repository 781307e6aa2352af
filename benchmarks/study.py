"""The study's targets: wall time of the default study on CPU, and RL's held-out gain over the SFT base.

Runs (or resumes) ``agentgym-budget study`` with the given arguments (default: the README's CPU
study into ``runs/study``), then prints, from ``study.json``:

* the study's wall time (``timing.json``: each stage's time is recorded when it finishes, runs trained side by
  side count once through their block; a resumed study adds the stages run since) against the 150-minute target
  of the default study, as a ratio, with the CPU time;
* Pass@1 at the training budget per agent, with its 95% bootstrap interval;
* the paired differences fixed - sft and budgetmix - sft (and budgetmix - fixed) at every budget:
  RL improves on the SFT base when the interval lies above 0.

Usage::

    python benchmarks/study.py [--out runs/study] [--smoke] [any other agentgym-budget study argument]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import _harness

from agentgym_budget.cli.main import main
from agentgym_budget.study.timing import study_totals

TARGET_MINUTES = 150


def report(out: Path) -> None:
    """Print the targets from ``out/study.json``."""
    study = json.loads((out / "study.json").read_text())
    timing = json.loads((out / "timing.json").read_text())
    budget = study["config"]["train_budget"]
    minutes, cpu = (seconds / 60 for seconds in study_totals(timing))
    print(
        f"\nwall time {minutes:.1f} min (CPU {cpu:.1f} min) over {', '.join(timing)}: "
        f"ratio to the {TARGET_MINUTES}-minute target {minutes / TARGET_MINUTES:.2f} (target <= 1)"
    )
    for row in study["pass@1"]:
        if row["budget"] == budget:
            print(f"Pass@1 at T={budget}: {row['agent']:10s} {row['pass@1']:.3f} [{row['low']:.3f}, {row['high']:.3f}]")
    for row in study["differences"]:
        verdict = "above 0" if row["low"] > 0 else ("below 0" if row["high"] < 0 else "includes 0")
        print(
            f"T={row['budget']:2d} {row['pair']:18s} {row['diff']:+.3f} [{row['low']:+.3f}, {row['high']:+.3f}] "
            f"({verdict})"
        )


SMOKE = [
    "--preset", "smoke", "--train-budget", "3", "--sft-steps", "2", "--rl-steps", "1", "--train-tasks", "4", "--budgets", "3,4", "--eval-budgets", "3",
    "--eval-tasks", "2", "--eval-samples", "4", "--probe-states", "1", "--recovery-states", "1", "--workers", "1",
    "--no-progress",
]  # fmt: skip
"""``--smoke``: every stage on a few tasks and steps (into a temporary directory unless --out is given), from the
smoke preset (one training seed per RL arm, its small GRPO steps) rather than the default preset's sizes."""


if __name__ == "__main__":
    arguments = sys.argv[1:]
    smoke = "--smoke" in arguments
    if smoke:
        arguments = [a for a in arguments if a != "--smoke"] + SMOKE
    if "--out" not in arguments:
        arguments += ["--out", tempfile.mkdtemp(prefix="study-smoke-") if smoke else "runs/study"]
    recording = _harness.start("study", smoke)
    status = main(["study", *arguments])
    if status == 0:
        out = Path(arguments[arguments.index("--out") + 1])
        report(out)
        study = json.loads((out / "study.json").read_text())
        timing = json.loads((out / "timing.json").read_text())
        recording.finish(
            {"timing": timing, **{key: study.get(key) for key in ("config", "pass@1", "differences", "claims")}}
        )
    sys.exit(status)
