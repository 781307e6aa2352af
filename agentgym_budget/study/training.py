"""The study's training runs: the SFT base first, then the RL runs, side by side in worker processes.

The SFT run's training games are generated over ``workers`` processes before it plays its demonstrations.
Every RL run starts from the same ``sft/final`` and is independent of the others, so :func:`train_runs` trains
them in up to ``workers`` spawned processes (:func:`~agentgym_budget.runner.pool.run_jobs`), each with the
parent's number of torch threads: a run's weights and logs are the ones it would get alone (each run seeds
itself), and a study on 2 cores trains two runs in the time of one. Each run measures its own wall and CPU
time and load in its worker; the parent adds them to ``timing.json`` (:mod:`agentgym_budget.study.timing`).
An interrupted run resumes where it stopped, as every training run does.

Runs go side by side only as far as memory holds them (:func:`side_by_side`): a generation run's peak is
estimated by :func:`~agentgym_budget.train.memory.check_memory` (SmolLM2 GRPO: 12-17 GB, so one at a time on a
24 GB machine), and a base whose size is not known before loading it trains alone.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.prepare import prepare_tasks, select_tasks
from agentgym_budget.runner.pool import run_jobs
from agentgym_budget.study.timing import add_time, spent_since, start_clock, timed
from agentgym_budget.train.config import TrainConfig
from agentgym_budget.train.recipe import run_training

__all__: list[str] = []

RL_BLOCK = "rl_runs"
"""The ``timing.json`` entry of the RL runs trained side by side (their wall time together)."""


@dataclass(frozen=True)
class TrainingJob:
    """One training run of a study, as a worker process gets it."""

    directory: str
    config: TrainConfig
    out: str
    threads: int

    def describe(self) -> str:
        """How an error names the job."""
        return f"training run {self.directory!r} (recipe {self.config.recipe}, seed {self.config.seed})"


def side_by_side(configs: Sequence[TrainConfig], workers: int) -> int:
    """How many of ``configs`` (RL runs) train at once: up to ``workers``, as many as the machine's memory holds.

    Scoring runs (top blocks of a small model, no generation) always fit; a generation run takes its estimated
    peak (:func:`~agentgym_budget.train.memory.check_memory`), and one whose base is unknown before loading
    takes the whole machine.

    Example:
        >>> from agentgym_budget.train.config import TrainConfig
        >>> side_by_side([TrainConfig("TextWorld-CoinCollector-v0", recipe="fixed", budget=4)] * 3, workers=2)
        2
        >>> side_by_side([TrainConfig("TextWorld-CoinCollector-v0", recipe="fixed", budget=4, model="/no/model")], 2)
        1
    """
    from agentgym_budget.train.memory import check_memory, machine_bytes

    generation = [config for config in configs if config.policy != "score"]
    if not generation:
        return max(1, workers)
    peaks = [max(check_memory(config, available=2**62).values(), default=None) for config in generation]
    if any(peak is None for peak in peaks):
        return 1
    return max(1, min(workers, int(machine_bytes() // max(peaks))))


def _torch_threads() -> int:
    """The torch threads this process trains with (1 when it has not imported torch)."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else 1


def _train_in_worker(job: TrainingJob, emit: Any) -> None:
    """Train ``job`` in this worker process; emit its time (``None`` when the run was already done)."""
    import torch

    torch.set_num_threads(job.threads)
    out = Path(job.out)
    clock = start_clock(out / job.directory)
    run_training(job.config, out / job.directory, progress=False)
    spent = spent_since(clock, out / job.directory)
    emit({"directory": job.directory, "spent": spent, "load_end": os.getloadavg()[0]})


def train_runs(runs: Sequence[tuple[str, TrainConfig]], out: Path, *, workers: int = 1, progress: bool = True) -> None:
    """Train ``runs`` (``(directory, config)`` under ``out``): SFT runs here first, the others over ``workers``.

    Raises:
        WorkerError: A run failed in a worker process (runs finished before it are kept; rerun to resume).
    """
    for directory, config in (run for run in runs if run[1].recipe == "sft"):
        timed(out, directory, lambda c=config, d=out / directory: _sft_run(c, d, workers=workers, progress=progress))
    rest = [run for run in runs if run[1].recipe != "sft"]
    workers = side_by_side([config for _, config in rest], workers) if len(rest) > 1 else 1
    if workers <= 1:
        for directory, config in rest:
            timed(out, directory, lambda c=config, d=directory: run_training(c, out / d, progress=progress))
        return
    _train_side_by_side(rest, out, min(workers, len(rest)), progress)


def _train_side_by_side(runs: Sequence[tuple[str, TrainConfig]], out: Path, workers: int, progress: bool) -> None:
    """Train ``runs`` over ``workers`` processes; each run's time is added ``within`` the block :data:`RL_BLOCK`,
    whose own entry holds their wall time together and their CPU time summed."""
    jobs = [TrainingJob(directory, config, str(out), _torch_threads()) for directory, config in runs]
    bar = _progress_bar(len(jobs), workers, progress)
    began, load, cpu, finished = time.perf_counter(), os.getloadavg()[0], [], False

    def record(result: dict[str, Any]) -> None:
        if result["spent"] is not None:
            spent = tuple(result["spent"])
            add_time(out, result["directory"], spent, False, result["load_end"], labels={"within": RL_BLOCK})
            cpu.append(spent[1])
        bar.set_postfix_str(result["directory"], refresh=False)
        bar.update(1)

    try:
        run_jobs(_train_in_worker, jobs, workers=workers, on_result=record)
        finished = True
    finally:
        bar.close()
        if cpu or not finished:
            spent = (time.perf_counter() - began, sum(cpu), load)
            add_time(out, RL_BLOCK, spent, not finished, labels={"side_by_side": workers})


def _sft_run(config: TrainConfig, directory: Path, *, workers: int, progress: bool) -> dict[str, Any]:
    """The SFT run, its training tasks' games generated first over ``workers`` processes (its demonstrations then
    play them one after another without building any)."""
    if workers > 1 and config.init is None and not (directory / "final" / "config.json").is_file():
        ref = config.session_config().ref
        prepare_tasks(ref, select_tasks(ref, config.train_tasks), workers=workers, progress=progress, known_only=True)
    return run_training(config, directory, progress=progress)


def _progress_bar(total: int, workers: int, progress: bool) -> Any:
    """A bar over the RL runs (a run's own bars would interleave across workers)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"RL runs ({workers} workers)", unit="run", disable=not progress)
