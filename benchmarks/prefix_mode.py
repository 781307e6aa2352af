"""Prefix mode vs independent mode on the main job: what prefix mode saves, measured side by side.

The main job (``agentgym-budget passkt`` defaults: TextWorld Coin Collector level 110,
``noisy-expert-recover`` vs ``noisy-expert-norecover``, T in {10,15,20,30,40}, n = 8, 2 workers)
is run in ``independent`` mode (n episodes per (task, T), each with its own budget) and in
``prefix`` mode (n episodes per task at T_max, every T read from them), into fresh directories.

Reported: episodes and env steps (the turns played) of each mode, their ratio, and the wall time
ratio. Prefix mode plays ``|T|`` times fewer episodes, but not ``|T|`` times fewer steps: an episode
that fails runs to T_max in prefix mode while the independent episodes at smaller T stop at T. The
two runs are checked to give the same Pass@(K,T) grid (same seeds: each independent episode at T
is the prefix of the episode at T_max).

Games are generated before timing. Results go to ``benchmarks/results/prefix_mode.json``.

Usage::

    python benchmarks/prefix_mode.py [--tasks 20] [--n 8] [--workers 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import _harness

from agentgym_budget.cli.cmd_passkt import DEFAULT_AGENTS, DEFAULT_ENV, DEFAULT_ENV_ARGS
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import run_passkt
from agentgym_budget.prepare import prepare_tasks, select_tasks
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.runner.store import read_jsonl

RESULTS = Path(__file__).parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.n, args.workers = 1, 8, 1  # n >= 8: the grid has K = 8
    recording = _harness.start("prefix_mode", args.smoke)
    ref = EnvRef.parse(DEFAULT_ENV, DEFAULT_ENV_ARGS)
    prepare_tasks(ref, select_tasks(ref, args.tasks), workers=args.workers)
    rows, grids = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for mode in ("independent", "prefix"):
            config = PassKTConfig(
                ref, DEFAULT_AGENTS, samples=args.n, tasks=args.tasks, mode=mode, workers=args.workers
            )
            began = time.perf_counter()
            result = run_passkt(config, Path(scratch) / mode, progress=False, plots=False)
            seconds = time.perf_counter() - began
            records = read_jsonl(Path(scratch) / mode / "episodes.jsonl")
            rows[mode] = {
                "episodes": len(records),
                "steps": sum(r["turns"] for r in records),
                "seconds": round(seconds, 2),
            }
            grids[mode] = [
                (grid.agent, cell["k"], cell["t"], cell["pass"])
                for grid in result.summary.grids
                for cell in grid.cells()
            ]
            print(f"{mode:>11}: {rows[mode]['episodes']} episodes, {rows[mode]['steps']} steps, {seconds:.1f} s")
    steps = rows["independent"]["steps"] / rows["prefix"]["steps"]
    wall = rows["independent"]["seconds"] / rows["prefix"]["seconds"]
    episodes = rows["independent"]["episodes"] / rows["prefix"]["episodes"]
    same = grids["independent"] == grids["prefix"]
    print(f"\nindependent / prefix: episodes {episodes:.2f}x, env steps {steps:.2f}x, wall time {wall:.2f}x")
    print(f"same Pass@(K,T) grid in both modes: {'yes' if same else 'NO'}")
    summary = {
        "env": ref.label,
        "agents": list(DEFAULT_AGENTS),
        "tasks": args.tasks,
        "samples": args.n,
        "workers": args.workers,
        "modes": rows,
        "ratios": {"episodes": round(episodes, 3), "steps": round(steps, 3), "wall": round(wall, 3)},
        "same_grid": same,
    }
    recording.finish(summary)


if __name__ == "__main__":
    main()
