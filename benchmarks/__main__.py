"""Run every benchmark and regenerate the benchmark table of docs/benchmarks.md from their JSON results.

Usage::

    python -m benchmarks                  # full runs (long), then the docs table
    python -m benchmarks --smoke          # seconds-long run of every script (results/smoke/)
    python -m benchmarks --smoke --jobs 2 # the same, two scripts at a time (smoke runs only)
    python -m benchmarks --readme         # only regenerate the docs table from benchmarks/results/
    python -m benchmarks --only textworld_overhead integrity_costs

Each script runs in its own process (``python benchmarks/NAME.py``) so that its CPU time and
memory are its own. The table (docs/benchmarks.md) lies between ``<!-- benchmarks:begin -->`` and
``<!-- benchmarks:end -->`` and is made of the ``readme_rows`` of ``benchmarks/results/*.json``
in the order of :data:`SCRIPTS`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from benchmarks._headlines import headline

HERE = Path(__file__).parent
README = HERE.parent / "docs" / "benchmarks.md"
BEGIN, END = "<!-- benchmarks:begin -->", "<!-- benchmarks:end -->"
HEADER = "| benchmark | result | target |\n|---|---|---|"
DETAILS_INTRO = (
    "Each row in full: what was compared, every number the run measured, when and under what load, and the command."
)

# README order; the arguments a full run passes beyond the script's defaults, and the smoke run's
SCRIPTS: dict[str, tuple[list[str], list[str]]] = {
    "textworld_overhead": ([], ["--smoke"]),
    "textworld_lean": ([], ["--smoke"]),
    "textworld_snapshot": ([], ["--smoke"]),
    "textworld_generation": ([], ["--smoke"]),
    "alfworld_speed": ([], ["--smoke"]),
    "alfworld_snapshot": ([], ["--smoke"]),
    "webshop_snapshot": ([], ["--smoke"]),
    "alfworld_resources": ([], ["--smoke"]),
    "alfworld_reset_cache": ([], ["--smoke"]),
    "textworld_reset_cache": (["--tasks", "1000", "--draws", "1000"], ["--smoke"]),
    "webshop_speed": ([], ["--smoke"]),
    "twx_speed": ([], ["--smoke"]),
    "sciworld_speed": ([], ["--smoke"]),
    "sciworld_gold": ([], ["--smoke"]),
    "babyai_speed": ([], ["--smoke"]),
    "babyai_expert": ([], ["--smoke"]),
    "vector_env": ([], ["--smoke"]),
    "integrity_costs": ([], ["--smoke"]),
    "ray_vs_pool": ([], ["--smoke"]),
    "prefix_mode": ([], ["--smoke"]),
    "llm_concurrency": ([], ["--smoke"]),
    "openenv_latency": ([], ["--smoke"]),
    "trl_rollout": ([], ["--smoke"]),
    "train_speed": ([], ["--smoke"]),
    "grpo_signal": (None, ["--smoke"]),  # full run needs a trained base: --model DIR
    "train_memory": ([], ["--smoke"]),
    "hf_agent_batching": (["--rounds", "5"], ["--smoke"]),
    "scoring_speed": ([], ["--smoke"]),
    "scoring_gate": (None, ["--smoke"]),  # full run trains ~40 min: python benchmarks/scoring_gate.py --work DIR
    "webshop_title_nouns": (None, ["--smoke"]),  # full run needs a spaCy pipeline: --model DIR
    "study": (None, ["--smoke"]),  # full run is the hour-long study: python benchmarks/study.py
}


def run_script(name: str, arguments: list[str], capture: bool = False) -> tuple[int, float, str]:
    """Run one benchmark script in its own process; its exit status, wall seconds and (if ``capture``) output."""
    began = time.perf_counter()
    command = [sys.executable, str(HERE / f"{name}.py"), *arguments]
    if capture:
        done = subprocess.run(command, cwd=HERE.parent, capture_output=True, text=True)
        status, output = done.returncode, done.stdout + done.stderr
    else:
        status, output = subprocess.call(command, cwd=HERE.parent), ""
    return status, time.perf_counter() - began, output


SMOKE_LONGEST_FIRST = (
    "study",
    "trl_rollout",
    "train_speed",
    "train_memory",
    "hf_agent_batching",
    "sciworld_speed",
    "openenv_latency",
    "ray_vs_pool",
)
"""Smoke runs in parallel start with these (the longest), so that no long one is left running alone at the end."""


def run_scripts(names: list[str], smoke: bool, jobs: int) -> list[str]:
    """Run ``names`` (``jobs`` at a time; each script's output printed whole when it ends); the failed ones."""

    def one(name: str) -> tuple[int, float, str]:
        full, smoke_arguments = SCRIPTS[name]
        return run_script(name, smoke_arguments if smoke else full, capture=jobs > 1)

    if jobs > 1:
        first = [name for name in SMOKE_LONGEST_FIRST if name in names]
        names = first + [name for name in names if name not in first]
    failed = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        running = {pool.submit(one, name): name for name in names}
        for future in as_completed(running):
            name, (status, seconds, output) = running[future], future.result()
            print(output, end="")
            print(f"[benchmarks] {name}: exit {status} in {seconds:.1f} s", flush=True)
            if status:
                failed.append(name)
    return failed


def _cell(text: str) -> str:
    escaped = text.replace("|", "\\|")
    return f" {escaped} " if text else " "


def _conditions(record: dict) -> str:
    """When and under what load a record was measured, e.g. ``2026-12-04, load average 1.2 -> 1.5``."""
    machine = record["machine"]
    return (
        f"{record['finished_utc'][:10]}, load average {machine['load_before'][0]:.1f} -> "
        f"{machine['load_after'][0]:.1f}, CPU {record['timing']['process_cpu_s']:.0f} s of "
        f"{record['timing']['wall_s']:.0f} s wall"
    )


def _rows(results: Path) -> list[dict[str, str]]:
    """Every row of the scripts' JSON in ``results``, in :data:`SCRIPTS` order, with its anchor and conditions."""
    rows = []
    for name in SCRIPTS:
        path = results / f"{name}.json"
        if not path.exists():
            continue
        record = json.loads(path.read_text())
        command = ""
        for index, (what, figure, target, reproduce) in enumerate(record.get("readme_rows", [])):
            command = command if reproduce == "same" else reproduce
            measured = "machine" in record and not record.get("readme_rows_by_hand")
            label, result = headline([what, figure, target, reproduce])
            rows.append(
                {
                    "anchor": f"bench-{name.replace('_', '-')}-{index}",
                    "label": label,
                    "result": result,
                    "target": target.split("; load average", 1)[0],
                    "what": what,
                    "figure": figure,
                    "reproduce": command,
                    "conditions": f"Measured {_conditions(record)}"
                    if measured
                    else "Written by hand before the harness",
                }
            )
    return rows


def table(results: Path) -> str:
    """The docs table (one number per row) and each row in full below it, from the scripts' JSON in ``results``."""
    rows = _rows(results)
    lines = [HEADER]
    for row in rows:
        cells = [f"[{row['label']}](#{row['anchor']})", row["result"], row["target"]]
        lines.append("|" + "|".join(_cell(text) for text in cells) + "|")
    lines += ["", DETAILS_INTRO, ""]
    for row in rows:
        lines += [
            f"({row['anchor']})=",
            f"**{row['label']}.** {row['what']}: {row['figure']}. {row['conditions']}. Reproduce: {row['reproduce']}.",
            "",
        ]
    return "\n".join(lines).rstrip("\n")


def regenerate_readme(results: Path, readme: Path = README) -> bool:
    """Replace the table between the markers in ``readme``; whether it changed."""
    text = readme.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{table(results)}\n{END}{tail}"
    if new != text:
        readme.write_text(new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="seconds-long runs; the README is left alone")
    parser.add_argument("--readme", action="store_true", help="only regenerate the docs table")
    parser.add_argument("--only", nargs="+", choices=sorted(SCRIPTS), help="run these scripts only")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="smoke runs only: scripts run at once (full runs are timed, so one at a time)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1 or (args.jobs > 1 and not args.smoke):
        parser.error(f"--jobs {args.jobs}: expected 1, or a number >= 1 with --smoke (full runs are timed alone)")
    results = Path(os.environ.get("BENCHMARK_RESULTS_DIR") or HERE / "results")
    failed = []
    if not args.readme:
        names = []
        for name in args.only or SCRIPTS:
            if not args.smoke and SCRIPTS[name][0] is None:
                print(f"[benchmarks] {name}: skipped (its full run is started by hand, see its docstring)")
            else:
                names.append(name)
        failed = run_scripts(names, args.smoke, args.jobs)
    if not args.smoke:
        changed = regenerate_readme(results)
        print(f"[benchmarks] docs/benchmarks.md table {'regenerated' if changed else 'unchanged'}")
    if failed:
        print(f"[benchmarks] failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
