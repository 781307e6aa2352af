"""Summaries and plots from the logs of one or more finished (or interrupted) runs.

:func:`load_runs` reads the ``episodes.jsonl`` (read-only: a cut last line is skipped, not removed)
and ``run.json`` of each directory; :func:`report` summarises them together (agents from several
runs are compared on their common tasks) and writes the summary files and plots. Without explicit
``ks``/``budgets`` it uses those of the runs' ``run.json`` files, or else what the logs hold: the
budgets that were run and ``K`` = 1, 2, 4, ... up to the number of samples.

Example:
    >>> import tempfile, pathlib, json
    >>> run = pathlib.Path(tempfile.mkdtemp())
    >>> lines = [json.dumps({"agent": "a", "env_id": "e", "task_id": "t", "sample": s, "budget": 5, "seed": s,
    ...                      "mode": "independent", "show_budget": False, "won": s == 0, "turns": 5}) for s in range(4)]
    >>> _ = (run / "episodes.jsonl").write_text("\\n".join(lines) + "\\n")
    >>> summary = report([run], run, plots=False, resamples=10)
    >>> summary.grids[0].ks, summary.grids[0].estimate[:, 0].tolist()
    ((1, 2, 4), [0.25, 0.5, 1.0])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_budget.errors import DataError
from agentgym_budget.eval.estimator import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE
from agentgym_budget.eval.passkt import EPISODES_FILE, RUN_FILE, episode_key, write_summary
from agentgym_budget.eval.store import read_jsonl
from agentgym_budget.eval.summary import Summary, summarize

__all__ = ["LoadedRuns", "default_grid", "load_runs", "report"]


@dataclass
class LoadedRuns:
    """Records and settings read from run directories.

    Attributes:
        directories: The directories read.
        records: Every committed episode record (duplicates across directories dropped).
        configs: The ``run.json`` of each directory that has one.
    """

    directories: list[Path]
    records: list[dict[str, Any]] = field(default_factory=list)
    configs: list[dict[str, Any]] = field(default_factory=list)


def load_runs(directories: Sequence[str | Path]) -> LoadedRuns:
    """Read the logs and settings of ``directories``.

    Raises:
        DataError: A directory has no ``episodes.jsonl``, or a log line is corrupt.
    """
    loaded = LoadedRuns([Path(d) for d in directories])
    seen: set[tuple[Any, ...]] = set()
    for directory in loaded.directories:
        log = directory / EPISODES_FILE
        if not log.is_file():
            raise DataError(f"{directory} has no {EPISODES_FILE}; pass the --out directory of a passkt run.")
        for record in read_jsonl(log):
            key = episode_key(record)
            if key not in seen:
                seen.add(key)
                loaded.records.append(record)
        settings = directory / RUN_FILE
        if settings.is_file():
            try:
                loaded.configs.append(json.loads(settings.read_text()))
            except ValueError as err:
                raise DataError(f"{settings} is not valid JSON ({err}).") from err
    return loaded


def default_grid(loaded: LoadedRuns) -> tuple[list[int], list[int]]:
    """``(ks, budgets)`` from the runs' settings, or else from their records."""
    ks = sorted({k for config in loaded.configs for k in config.get("ks", ())})
    budgets = sorted({t for config in loaded.configs for t in config.get("budgets", ())})
    if not budgets:
        budgets = sorted({int(record["budget"]) for record in loaded.records})
    if not ks:
        samples = max((int(record["sample"]) + 1 for record in loaded.records), default=1)
        ks = [2**i for i in range(samples.bit_length()) if 2**i <= samples]
    return ks, budgets


def report(
    directories: Sequence[str | Path],
    out: str | Path,
    *,
    ks: Sequence[int] | None = None,
    budgets: Sequence[int] | None = None,
    samples: int | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    plots: bool = True,
) -> Summary:
    """Summarise the runs in ``directories`` into ``out`` (summary files and plots); return the summary."""
    loaded = load_runs(directories)
    if not loaded.records:
        raise DataError(f"No finished episode in {', '.join(str(d) for d in loaded.directories)}.")
    default_ks, default_budgets = default_grid(loaded)
    ks, budgets = list(ks or default_ks), list(budgets or default_budgets)
    order = [agent for config in loaded.configs for agent in config.get("agents", ())]
    summary = summarize(
        loaded.records,
        ks=ks,
        budgets=budgets,
        samples=samples,
        order=list(dict.fromkeys(order)),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    settings = {
        "sources": [str(d) for d in loaded.directories],
        "ks": ks,
        "budgets": budgets,
        "samples": samples,
        "seed": seed,
        "runs": loaded.configs,
    }
    write_summary(summary, Path(out), settings, plots=plots)
    return summary
