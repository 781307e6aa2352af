"""``timing.json`` of a study directory: the wall and CPU time of every stage, and the load it ran under.

A stage's time is added by :func:`timed` (a stage run in this process) or :func:`add_time` (a stage run in a
worker process that measured itself: the study's RL runs, :mod:`agentgym_budget.study.training`), and only when
the stage logged work or was interrupted, so a resume that finds a stage done adds nothing. Runs trained side by
side are entries ``within`` a block (``rl_runs``: their wall time together, their CPU time summed), so that
:func:`study_totals` counts their overlapping wall time once.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentgym_budget.runner.store import atomic_write_text

__all__: list[str] = []


def stage_times(out: Path) -> dict[str, dict[str, float]]:
    """``timing.json`` of a study directory: per stage ``wall_s``, ``cpu_s`` (this process and its finished
    worker processes), summed over the invocations that did work on it (a resume that finds the stage done adds
    nothing), ``interrupted`` (how many of them were stopped by Ctrl-C or ``SIGTERM``: their time up to then is
    in the sums, the CPU time of worker processes they left unfinished is not), and the 1-minute load average at
    the start and end of the invocation that spent the most wall time on it (``load_wall_s``)."""
    path = out / "timing.json"
    return json.loads(path.read_text()) if path.exists() else {}


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def logged_bytes(directory: Path) -> int:
    """Bytes of the records logged under ``directory``: every unit of a stage's work appends one."""
    return sum(path.stat().st_size for path in directory.rglob("*.jsonl")) if directory.is_dir() else 0


def start_clock(directory: Path) -> tuple[float, float, float, int]:
    """What :func:`spent_since` measures from: wall and CPU seconds, the load, and the bytes logged so far."""
    return time.perf_counter(), cpu_seconds(), os.getloadavg()[0], logged_bytes(directory)


def spent_since(clock: tuple[float, float, float, int], directory: Path, *, always: bool = False) -> tuple | None:
    """``(wall, CPU, load at the start)`` since ``clock``, or ``None`` when nothing was logged under ``directory``
    (a stage found done) and not ``always``."""
    began, cpu, load, logged = clock
    if not always and logged_bytes(directory) == logged:
        return None
    return time.perf_counter() - began, cpu_seconds() - cpu, load


def timed(out: Path, stage: str, work: Callable[[], Any]) -> Any:
    """``work()``, its time added to ``stage`` in ``timing.json`` if it logged work or was interrupted."""
    clock = start_clock(out / stage)
    finished = False
    try:
        result = work()
        finished = True
    finally:
        spent = spent_since(clock, out / stage, always=not finished)
        if spent is not None:
            add_time(out, stage, spent, interrupted=not finished)
    return result


def add_time(
    out: Path,
    stage: str,
    spent: tuple[float, float, float],
    interrupted: bool,
    load_end: float | None = None,
    labels: dict[str, Any] | None = None,
) -> None:
    """Add ``spent`` (wall seconds, CPU seconds, 1-minute load at its start) to ``stage`` in ``timing.json``.

    ``load_end``: the load when the work ended (default: now). ``labels``: keys set on the entry as given, such
    as ``within`` (the name of the block of side-by-side runs it ran in: see :func:`study_totals`).
    """
    wall, cpu, load = spent
    times = stage_times(out)
    entry = times.get(stage, {})
    busiest = entry.get("load_wall_s", entry.get("wall_s", 0.0))
    if "load_start" in entry and wall < busiest:
        loads = {"load_start": entry["load_start"], "load_end": entry["load_end"], "load_wall_s": busiest}
    else:
        end = os.getloadavg()[0] if load_end is None else load_end
        loads = {"load_start": round(load, 2), "load_end": round(end, 2), "load_wall_s": round(wall, 1)}
    times[stage] = {
        "wall_s": round(entry.get("wall_s", 0.0) + wall, 1),
        "cpu_s": round(entry.get("cpu_s", 0.0) + cpu, 1),
    }
    times[stage] |= loads
    times[stage] |= labels or {}
    if interrupted or "interrupted" in entry:
        times[stage]["interrupted"] = entry.get("interrupted", 0) + int(interrupted)
    atomic_write_text(out / "timing.json", json.dumps(times, indent=2) + "\n")


def study_totals(times: dict[str, dict[str, Any]]) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of a study from its ``timing.json``: the entries that ran within a block
    (``"within"``) are counted by their block, whose wall time is the block's own (its runs overlapped).

    Example:
        >>> times = {"sft": {"wall_s": 60.0, "cpu_s": 50.0},
        ...          "fixed": {"wall_s": 100.0, "cpu_s": 90.0, "within": "rl_runs"},
        ...          "fixed@1": {"wall_s": 110.0, "cpu_s": 95.0, "within": "rl_runs"},
        ...          "rl_runs": {"wall_s": 112.0, "cpu_s": 185.0, "side_by_side": 2}}
        >>> study_totals(times)
        (172.0, 235.0)
    """
    counted = [entry for entry in times.values() if "within" not in entry]
    return sum(entry["wall_s"] for entry in counted), sum(entry["cpu_s"] for entry in counted)
