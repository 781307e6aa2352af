"""Shared timing and recording for every benchmark script.

Each script calls :func:`start` first and :meth:`Run.finish` last: the JSON it writes to
``benchmarks/results/NAME.json`` (``results/smoke/`` in smoke mode) holds the script's result beside
the run's wall time and CPU time (process and main thread), the machine (CPU model, cores, load
average before and after) and its ``provenance`` (:mod:`agentgym_budget.runner.provenance`: this package's
version and commit, the engines and libraries imported, Python, the command line). ``readme_rows`` are the rows
of the README's benchmark table that ``python -m benchmarks`` regenerates from these files.

Scripts are run as files (``python benchmarks/NAME.py``), so they import this module as
``_harness``; the environment variable ``BENCHMARK_RESULTS_DIR`` redirects the output (tests).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.runner.provenance import collect_provenance

__all__ = ["Clock", "Run", "add_smoke_flag", "machine", "results_dir", "start", "timed_ms"]


def results_dir(smoke: bool) -> Path:
    """Where results go: ``benchmarks/results`` (``/smoke`` below it in smoke mode)."""
    base = Path(os.environ.get("BENCHMARK_RESULTS_DIR") or Path(__file__).parent / "results")
    return base / "smoke" if smoke else base


def add_smoke_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--smoke``: a seconds-long run of every code path, results under ``results/smoke``."""
    parser.add_argument("--smoke", action="store_true", help="a seconds-long run (results/smoke/)")


def machine() -> dict[str, Any]:
    """CPU model, cores (all and usable), Python and platform, and the load average now."""
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu_model": model,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


@dataclass(frozen=True)
class Clock:
    """Wall, process CPU and thread CPU seconds at one instant."""

    wall: float
    process: float
    thread: float

    @classmethod
    def now(cls) -> Clock:
        return cls(time.perf_counter(), time.process_time(), time.thread_time())

    def since(self, earlier: Clock) -> dict[str, float]:
        """Seconds elapsed since ``earlier``, per clock."""
        return {
            "wall_s": round(self.wall - earlier.wall, 6),
            "process_cpu_s": round(self.process - earlier.process, 6),
            "thread_cpu_s": round(self.thread - earlier.thread, 6),
        }


def timed_ms(function: Callable[[], Any], repeats: int, before: Callable[[], Any] = lambda: None) -> dict[str, float]:
    """Median wall and thread-CPU milliseconds of ``function`` over ``repeats`` calls.

    Example:
        >>> sorted(timed_ms(lambda: sum(range(100)), 3))
        ['cpu_ms', 'wall_ms']
    """
    walls, cpus = [], []
    for _ in range(repeats):
        before()
        wall, cpu = time.perf_counter(), time.thread_time()
        function()
        cpus.append((time.thread_time() - cpu) * 1e3)
        walls.append((time.perf_counter() - wall) * 1e3)
    return {"wall_ms": statistics.median(walls), "cpu_ms": statistics.median(cpus)}


class Run:
    """One benchmark run: clocks and load recorded at :func:`start`, JSON written at :meth:`finish`."""

    def __init__(self, name: str, smoke: bool) -> None:
        self.name = name
        self.smoke = smoke
        self.load_before = os.getloadavg()
        self.began = Clock.now()

    def finish(self, result: dict[str, Any], rows: list[list[str]] | None = None) -> Path:
        """Write ``result`` with timing, machine, versions and README rows; print and return the path.

        Args:
            result: The script's measurements (JSON-serialisable).
            rows: README table rows ``[what, figure, target, reproduce]`` formatted from ``result``.
        """
        timing = Clock.now().since(self.began)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        timing["children_cpu_s"] = round(children.ru_utime + children.ru_stime, 6)
        timing["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        record = {
            "benchmark": self.name,
            "smoke": self.smoke,
            "command": " ".join(["python", f"benchmarks/{self.name}.py", *sys.argv[1:]]),
            "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "timing": timing,
            "machine": machine() | {"load_before": list(self.load_before), "load_after": list(os.getloadavg())},
            "provenance": collect_provenance(),
            "result": result,
            "readme_rows": rows or [],
        }
        out = results_dir(self.smoke)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{self.name}.json"
        if rows is None:  # no formatter yet: keep the rows written by hand, flagged as such
            record["readme_rows"] = _previous_rows(path)
            record["readme_rows_by_hand"] = True
        path.write_text(json.dumps(record, indent=2) + "\n")
        print(json.dumps({"timing": timing, "load": [record["machine"]["load_before"][0], os.getloadavg()[0]]}))
        print(f"wrote {path}")
        return path


def _previous_rows(path: Path) -> list[list[str]]:
    try:
        return list(json.loads(path.read_text()).get("readme_rows", []))
    except (OSError, ValueError, AttributeError):
        return []


def start(name: str, smoke: bool = False) -> Run:
    """Start recording the run of benchmark ``name`` (the script's file stem)."""
    return Run(name, smoke)
