"""Training metrics written as they come: trainer logs and played episodes as JSONL, resumable.

Two append-only logs per training phase directory (each line written and fsynced at once, so a
killed run loses nothing it had logged):

* ``metrics.jsonl``: every trainer log (``step``, ``loss``, ``learning_rate``, GRPO's ``reward``,
  ``tools/call_frequency``, ... and ``elapsed_s``), from :func:`metrics_callback`;
* ``episodes.jsonl``: every episode played during GRPO (``step``, ``budget``, ``budget_shown``, ``turns``,
  ``won``, ``truncated``, ``return``, ``cut_short``: the rollout stopped before the episode ended,
  e.g. the completion hit ``max_completion_length`` or the model stopped calling the tool), from
  :class:`EpisodeRecorder`.

When a run resumes from a checkpoint at step ``s``, :meth:`JsonlLog.truncate_after` drops lines of
steps after ``s`` (they are played again), so the logs always describe one run.

Example:
    >>> import tempfile, pathlib
    >>> log = JsonlLog(pathlib.Path(tempfile.mkdtemp()) / "metrics.jsonl")
    >>> log.append({"step": 1, "loss": 2.0}); log.append({"step": 2, "loss": 1.5})
    >>> log.truncate_after(1); [r["step"] for r in log.read()]
    [1]
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentgym_budget.errors import DataError

__all__: list[str] = []


class JsonlLog:
    """An append-only JSONL file of records with a ``step`` (fsynced per line)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record durably."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as handle:
            handle.write(json.dumps(dict(record), sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def read(self) -> list[dict[str, Any]]:
        """Every record; a torn last line (a kill mid-write) is ignored.

        Raises:
            DataError: A line before the last is not JSON.
        """
        if not self.path.exists():
            return []
        lines = self.path.read_text().splitlines()
        records = []
        for number, line in enumerate(lines, start=1):
            try:
                records.append(json.loads(line))
            except ValueError:
                if number == len(lines):
                    break
                raise DataError(f"{self.path}:{number} is not a JSON record.") from None
        return records

    def truncate_after(self, step: int) -> None:
        """Keep only the records of steps ``<= step`` (rewritten atomically)."""
        if not self.path.exists():
            return
        kept = [r for r in self.read() if int(r.get("step", 0)) <= step]
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))
        os.replace(temporary, self.path)


def metrics_callback(log: JsonlLog, phase: str) -> Any:
    """A ``transformers.TrainerCallback`` appending every trainer log to ``log`` with ``phase`` and the step."""
    from transformers import TrainerCallback

    began = time.perf_counter()

    class MetricsCallback(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Mapping[str, Any] | None = None, **kwargs: Any):
            if logs:
                clean = {k: v for k, v in logs.items() if isinstance(v, (int, float, str, bool)) or v is None}
                log.append(
                    {"phase": phase, "step": int(state.global_step), "elapsed_s": round(time.perf_counter() - began, 2)}
                    | clean
                )

    return MetricsCallback()


def episode_summary(record: Mapping[str, Any], step: int) -> dict[str, Any]:
    """One ``episodes.jsonl`` line from a :class:`~agentgym_budget.integrations.trl.BudgetToolEnv` record.

    Example:
        >>> episode_summary({"task_id": "t", "seed": 3, "budget": 4, "budget_shown": False, "turns": 2, "won": False,
        ...                  "lost": False, "terminated": False, "truncated": False, "return": 0.0,
        ...                  "admissible_rate": 1.0}, step=7)["cut_short"]
        True
    """
    done = bool(record["terminated"] or record["truncated"])
    return {
        "step": step,
        "task_id": record["task_id"],
        "seed": record["seed"],
        "budget": record["budget"],
        "budget_shown": record["budget_shown"],
        "turns": record["turns"],
        "won": record["won"],
        "truncated": record["truncated"],
        "cut_short": not done,
        "return": record["return"],
        "admissible_rate": record["admissible_rate"],
    }


class EpisodeRecorder:
    """A GRPO reward function that scores nothing (``None``) and logs every finished rollout's episode.

    TRL calls reward functions once per generated batch with the rollouts' ``environments``; this
    one appends :func:`episode_summary` of each to ``log``. Pass it in ``reward_funcs`` beside the
    environment's own ``get_reward``; it never changes the reward.
    """

    __name__ = "episodes"

    def __init__(self, log: JsonlLog, trainer_state: Any = None) -> None:
        self.log = log
        self.trainer = trainer_state

    def __call__(self, prompts: Any = None, completions: Any = None, environments: Any = None, **kwargs: Any):
        step = int(self.trainer.state.global_step) + 1 if self.trainer is not None else 0
        count = len(completions) if completions is not None else len(environments or ())
        for environment in environments or ():
            if environment.session.last is not None:
                self.log.append(episode_summary(environment.record, step))
        return [None] * count
