"""Summaries and plots from the logs of one or more finished (or interrupted) runs.

:func:`load_runs` reads the ``episodes.jsonl`` (read-only: a cut last line is skipped, not removed;
a line that is not an episode record is an error naming it) and ``run.json`` of each directory.
:func:`report` summarises them together (agents from several runs are compared on their common
tasks) and writes the summary files and plots as one consistent set
(:func:`~agentgym_budget.runner.outputs.output_set`) into ``out``, which must not be a run directory
unless ``force``: a report never overwrites a run's own summary by accident. Runs whose
``provenance.json`` differ in an engine, library or model version or digest are combined with a
:class:`~agentgym_budget.runner.provenance.ProvenanceWarning` per difference (:attr:`Report.warnings`);
``summary.json`` keeps every run's provenance.

Which grid (:func:`choose_grid`): a budget ``T`` or breadth ``K`` the logs cannot support is an error
that says what the logs hold, never a grid of empty cells. Without explicit ``ks`` / ``budgets`` the
report uses the grid every agent group supports (the budgets all of them hold, ``K`` up to the
smallest number of samples), and says so in :attr:`Report.notes` when that leaves some out.

Example:
    >>> import tempfile, pathlib, json
    >>> run = pathlib.Path(tempfile.mkdtemp())
    >>> lines = [json.dumps({"agent": "a", "env_id": "e", "task_id": "t", "sample": s, "budget": 5, "seed": s,
    ...                      "mode": "independent", "show_budget": False, "won": s == 0, "turns": 5}) for s in range(4)]
    >>> _ = (run / "episodes.jsonl").write_text("\\n".join(lines) + "\\n")
    >>> result = report([run], run / "report", plots=False, resamples=200)
    >>> result.summary.grids[0].ks, result.summary.grids[0].estimate[:, 0].tolist()
    ((1, 2, 4), [0.25, 0.5, 1.0])
    >>> report([run], run / "report", ks=[8], plots=False)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.DataError: K=8 needs at least 8 samples per task and budget, but the logs hold fewer: a: T=5, 1 task, n=4. Ask for K <= 4.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_budget.errors import DataError, InvalidOptionError, RunConfigError, UnknownEnvIdError
from agentgym_budget.eval.estimator import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE
from agentgym_budget.eval.passkt.plan import EPISODES_FILE, RUN_FILE, episode_key, write_summary
from agentgym_budget.eval.passkt.summary import GroupKey, Summary, group_key, outcome_table, summarize
from agentgym_budget.runner.env_args import default_split
from agentgym_budget.runner.provenance import read_provenance, warn_if_different
from agentgym_budget.runner.records import episode_problem
from agentgym_budget.runner.run_lock import lock_directory
from agentgym_budget.runner.store import read_jsonl

__all__ = ["Report", "report"]

RUN_MARKERS = (EPISODES_FILE, RUN_FILE, "probes.jsonl")
"""Files that make a directory a run directory (a report does not write into one unless forced)."""


@dataclass
class LoadedRuns:
    """Records and settings read from run directories.

    Attributes:
        directories: The directories read.
        records: Every committed episode record (duplicates across directories dropped).
        configs: The ``run.json`` of each directory that has one.
        sources: For each agent group, the directories its records come from.
    """

    directories: list[Path]
    records: list[dict[str, Any]] = field(default_factory=list)
    configs: list[dict[str, Any]] = field(default_factory=list)
    sources: dict[GroupKey, list[Path]] = field(default_factory=dict)


def _with_split(record: dict[str, Any]) -> dict[str, Any]:
    # Logs of older versions left the default split as null: name it, so runs of both versions group together.
    if record.get("split") is None:
        with contextlib.suppress(UnknownEnvIdError):
            record["split"] = default_split(record["env_id"])
    return record


def load_runs(directories: Sequence[str | Path]) -> LoadedRuns:
    """Read the logs and settings of ``directories``.

    Raises:
        DataError: A directory has no ``episodes.jsonl``, or a log line is corrupt or not an episode
            record (the message names the file and line).
    """
    loaded = LoadedRuns([Path(d) for d in directories])
    seen: set[tuple[Any, ...]] = set()
    for directory in loaded.directories:
        log = directory / EPISODES_FILE
        if not log.is_file():
            raise DataError(f"{directory} has no {EPISODES_FILE}; pass the --out directory of a passkt run.")
        for record in read_jsonl(log, check=episode_problem):
            record = _with_split(record)
            sources = loaded.sources.setdefault(group_key(record), [])
            if directory not in sources:
                sources.append(directory)
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


@dataclass(frozen=True)
class GroupHoldings:
    """What the logs hold for one agent group (an agent on one env configuration in one mode).

    Attributes:
        label: The agent (with env and mode when groups differ in them).
        prefix: Prefix mode (every budget up to the longest one can be read).
        budgets: The budgets of its episodes.
        tasks: Tasks with at least one episode.
        samples: Most samples of any (task, budget).
    """

    label: str
    prefix: bool
    budgets: tuple[int, ...]
    tasks: int
    samples: int

    def supports(self, budget: int) -> bool:
        """Whether an outcome at ``budget`` can be read from the logs."""
        return budget <= max(self.budgets) if self.prefix else budget in self.budgets

    def describe(self) -> str:
        """E.g. ``"random: T=10,20, 5 tasks, n=4"``."""
        budgets = f"T<={max(self.budgets)} (prefix mode)" if self.prefix else "T=" + ",".join(map(str, self.budgets))
        return f"{self.label}: {budgets}, {self.tasks} task{'s' if self.tasks != 1 else ''}, n={self.samples}"


def holdings(records: Sequence[Mapping[str, Any]]) -> dict[GroupKey, GroupHoldings]:
    """The :class:`GroupHoldings` of every agent group in ``records``."""
    groups: dict[GroupKey, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        groups[group_key(record)].append(record)
    environments = {key[1:] for key in groups}
    held = {}
    for key, members in groups.items():
        counts: dict[tuple[str, int], int] = defaultdict(int)
        for record in members:
            counts[(record["task_id"], record["budget"])] += 1
        label = key[0] if len(environments) <= 1 else f"{key[0]} @ {key[1].split('/', 1)[-1]} {key[4]}"
        held[key] = GroupHoldings(
            label=label,
            prefix=key[4] == "prefix",
            budgets=tuple(sorted({budget for _, budget in counts})),
            tasks=len({task for task, _ in counts}),
            samples=max(counts.values()),
        )
    return held


def _complete_samples(
    records: Sequence[Mapping[str, Any]], key: GroupKey, budgets: Sequence[int], samples: int | None
) -> tuple[int, int]:
    """``(tasks, n)`` of a group at ``budgets``: tasks with samples at every budget, and their fewest samples."""
    members = [r for r in records if group_key(r) == key]
    table = outcome_table(members, budgets, key[4], samples)
    complete = [task for task, by_budget in table.items() if all(by_budget.get(b) for b in budgets)]
    counts = [len(table[task][b]) for task in complete for b in budgets]
    return len(complete), min(counts, default=0)


def _listing(held: Mapping[GroupKey, GroupHoldings]) -> str:
    return "; ".join(h.describe() for h in held.values())


def _choose_budgets(
    loaded: LoadedRuns, held: Mapping[GroupKey, GroupHoldings], budgets: Sequence[int] | None, notes: list[str]
) -> list[int]:
    """The budgets ``T`` of the grid: those asked for (each supported), else those every group supports."""
    if budgets:
        chosen = sorted(set(budgets))
        for budget in chosen:
            lacking = {k: h for k, h in held.items() if not h.supports(budget)}
            if lacking:
                raise DataError(
                    f"T={budget} is not in the logs: {_listing(lacking)}. Ask for budgets the logs hold, or omit "
                    "--t to use those every run shares."
                )
    else:
        candidates = {t for config in loaded.configs for t in config.get("budgets", ())}
        candidates |= {t for h in held.values() for t in h.budgets}
        chosen = sorted(t for t in candidates if all(h.supports(t) for h in held.values()))
        if not chosen:
            raise DataError(f"The runs share no turn budget T, so there is no common grid: {_listing(held)}.")
        dropped = sorted(t for h in held.values() if not h.prefix for t in h.budgets if t not in chosen)
        if dropped:
            notes.append(
                f"Using the budgets every agent has: T={','.join(map(str, chosen))} "
                f"(left out: T={','.join(map(str, sorted(set(dropped))))}; {_listing(held)})."
            )
    return chosen


def _choose_ks(
    loaded: LoadedRuns,
    held: Mapping[GroupKey, GroupHoldings],
    complete: Mapping[GroupKey, tuple[int, int]],
    ks: Sequence[int] | None,
    notes: list[str],
) -> list[int]:
    """The breadths ``K`` of the grid: those asked for (if every group has the samples), else all it allows."""
    smallest = min(n for _, n in complete.values())
    if ks:
        chosen_ks = sorted(set(ks))
        if chosen_ks[-1] > smallest:
            short = {key: held[key] for key, (_, n) in complete.items() if n < chosen_ks[-1]}
            raise DataError(
                f"K={chosen_ks[-1]} needs at least {chosen_ks[-1]} samples per task and budget, but the logs hold "
                f"fewer: {_listing(short)}. Ask for K <= {smallest}."
            )
    else:
        candidates = {k for config in loaded.configs for k in config.get("ks", ())}
        largest = max(n for _, n in complete.values())
        candidates |= {2**i for i in range(largest.bit_length()) if 2**i <= largest}
        chosen_ks = sorted(k for k in candidates if k <= smallest)
        left_out = sorted(k for k in candidates if k > smallest)
        if left_out:
            notes.append(
                f"Using K up to {smallest}, the fewest samples per task and budget of any agent "
                f"(left out: K={','.join(map(str, left_out))})."
            )
    return chosen_ks


def choose_grid(
    loaded: LoadedRuns,
    ks: Sequence[int] | None = None,
    budgets: Sequence[int] | None = None,
    samples: int | None = None,
) -> tuple[list[int], list[int], list[str]]:
    """``(ks, budgets, notes)`` the logs support (see the module docstring).

    Raises:
        DataError: An explicit budget or ``K`` (or ``samples``) the logs cannot support, or no budget
            and task common to every group; the message says what each group holds.
    """
    held = holdings(loaded.records)
    notes: list[str] = []
    chosen = _choose_budgets(loaded, held, budgets, notes)
    if samples is not None:
        fewer = {k: h for k, h in held.items() if h.samples < samples}
        if fewer:
            raise DataError(f"--n {samples} asks for more samples than the logs hold: {_listing(fewer)}.")
    complete = {key: _complete_samples(loaded.records, key, chosen, samples) for key in held}
    empty = [held[key] for key, (tasks, _) in complete.items() if tasks == 0]
    if empty:
        raise DataError(
            f"No task has episodes at every budget T={','.join(map(str, chosen))} for "
            f"{', '.join(h.label for h in empty)}: {_listing(held)}. Ask for budgets its tasks were run at (--t)."
        )
    chosen_ks = _choose_ks(loaded, held, complete, ks, notes)
    return chosen_ks, chosen, notes


@dataclass
class Report:
    """Result of :func:`report`.

    Attributes:
        summary: The summary written.
        out: Where it was written.
        files: The files written.
        notes: What the reader should know about the grid (budgets or K left out, agents without
            common tasks).
        warnings: The runs' provenance differs in an engine, library or model (one line each; also
            issued as :class:`~agentgym_budget.runner.provenance.ProvenanceWarning`).
    """

    summary: Summary
    out: Path
    files: list[Path]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _is_run_directory(path: Path) -> bool:
    return any((path / name).exists() for name in RUN_MARKERS)


def _check_report_arguments(out: Path, samples: int | None, force: bool) -> None:
    """Refuse to write into a run directory unless ``force``, and a ``samples`` that is not positive."""
    if not force and _is_run_directory(out):
        raise RunConfigError(
            f"{out} is a run directory: writing the report there would replace the run's own summary and plots. "
            "Write it elsewhere (--out DIR), or pass --force to replace them."
        )
    if samples is not None and (isinstance(samples, bool) or samples < 1):
        raise InvalidOptionError(f"samples must be a positive integer, got {samples!r}.")


def _unpaired_notes(summary: Summary) -> list[str]:
    """A note for every two agent groups that share no task (no difference is reported for them)."""
    notes = []
    compared = {(d.first, d.second) for d in summary.differences}
    for a, first in enumerate(summary.grids):
        for second in summary.grids[a + 1 :]:
            if (first.label, second.label) not in compared:
                notes.append(f"{first.label} and {second.label} share no task: no difference is reported for them.")
    return notes


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
    plot_formats: Sequence[str] = ("png",),
    force: bool = False,
) -> Report:
    """Summarise the runs in ``directories`` into ``out`` (summary files and plots).

    Args:
        directories: Run directories (each with an ``episodes.jsonl``).
        out: Where to write; not a run directory unless ``force``.
        ks: Breadths ``K`` (default: see :func:`choose_grid`).
        budgets: Budgets ``T`` (default: see :func:`choose_grid`).
        samples: Use only the first ``samples`` samples of each (task, T).
        confidence: Interval level.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.
        plots: Write the plots.
        plot_formats: Their formats (``png``, ``pdf``, ``svg``).
        force: Allow writing into a run directory (its summary files and plots are replaced).

    Raises:
        DataError: Unreadable logs, or a grid they cannot support (see :func:`choose_grid`).
        RunConfigError: ``out`` is a run directory and ``force`` is not set, or another command writes
            into it.
    """
    out = Path(out)
    _check_report_arguments(out, samples, force)
    loaded = load_runs(directories)
    if not loaded.records:
        raise DataError(f"No finished episode in {', '.join(str(d) for d in loaded.directories)}.")
    chosen_ks, chosen_budgets, notes = choose_grid(loaded, ks, budgets, samples)
    order = [agent for config in loaded.configs for agent in config.get("agents", ())]
    summary = summarize(
        loaded.records,
        ks=chosen_ks,
        budgets=chosen_budgets,
        samples=samples,
        order=list(dict.fromkeys(order)),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    notes += _unpaired_notes(summary)
    provenance = {str(directory): read_provenance(directory) for directory in loaded.directories}
    mismatches = warn_if_different(provenance)
    settings = {
        "sources": [str(d) for d in loaded.directories],
        "ks": chosen_ks,
        "budgets": chosen_budgets,
        "samples": samples,
        "seed": seed,
        "notes": notes,
        "runs": loaded.configs,
        "provenance": provenance,
        "provenance_warnings": mismatches,
    }
    with lock_directory(out, "report"):
        files = write_summary(summary, out, settings, plots=plots, plot_formats=plot_formats)
    return Report(summary, out, files, notes, mismatches)
