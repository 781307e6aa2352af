"""Natural recovery: in freely played episodes, find the first error and see whether the agent recovers.

An episode's *trace* is, for every state ``s_0 .. s_n`` it went through, the length of the expert's
plan (``None``: no plan in a running episode) and the ``progress``. From it:

* the **first error** is the first action after which the plan gets longer, progress falls or the
  task is lost (:func:`~agentgym_budget.eval.probes.judge.is_error_step`);
* the agent is **back on track** after the first later action that leads to a state whose plan is no
  longer than before the error and whose progress is no lower; the **turns spent recovering** are
  the actions after the erroneous one up to and including that one;
* the episode **recovered** when it still won after its first error.

Traces come from :class:`TraceRecorder` (an outermost wrapper that notes each state while an
agent plays, so nothing is replayed) or, for episodes logged elsewhere (e.g. a ``passkt`` run), from
:func:`trace_actions`, which replays the logged actions once on an env with the expert's plan.
:func:`natural_recovery` sums them up per agent; :func:`trace_signal_points` feeds the
process-signal analysis (:mod:`.process_signal`).

Example:
    >>> analyze_trace([4, 3, 4, 3, 2, 1, 0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], won=True)
    {'error_turn': 1, 'back_on_track_turn': 2, 'recovery_turns': 1, 'won': True}
    >>> analyze_trace([2, 1, 0], [0.0, 0.0, 1.0], won=True)["error_turn"] is None
    True
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_budget.eval.estimator import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE, RATE, bootstrap_ci
from agentgym_budget.eval.probes.judge import is_error_step
from agentgym_budget.eval.probes.states import plan_of
from agentgym_budget.eval.process_signal import SignalPoint

__all__: list[str] = []

_TOLERANCE = 1e-9


def _plan_length(info: Mapping[str, Any]) -> int | None:
    plan = plan_of(info)
    return len(plan) if plan or info.get("won") else None


class TraceRecorder(gym.Wrapper):
    """Notes the expert's plan length and the progress of every state the wrapped stack goes through.

    Attributes:
        plan_lengths: One per state since the last reset (``None``: no plan in a running episode).
        progress: One per state since the last reset.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.plan_lengths: list[int | None] = []
        self.progress: list[float] = []

    def _note(self, info: Mapping[str, Any]) -> None:
        self.plan_lengths.append(_plan_length(info))
        self.progress.append(float(info.get("progress", 0.0)))

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        self.plan_lengths, self.progress = [], []
        self._note(info)
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        result = self.env.step(action)
        self._note(result[4])
        return result


def trace_actions(
    env: gym.Env, task_id: str, seed: int, budget: int, actions: Sequence[str]
) -> tuple[list[int | None], list[float]]:
    """Replay ``actions`` from the seeded reset of ``task_id`` on ``env`` (with ``expert_plan``) and trace them."""
    recorder = TraceRecorder(env)
    recorder.reset(seed=seed, options={"task": task_id, "max_turns": max(1, budget, len(actions))})
    for action in actions:
        _, _, terminated, truncated, _ = recorder.step(action)
        if terminated or truncated:
            break
    return recorder.plan_lengths, recorder.progress


def analyze_trace(plan_lengths: Sequence[int | None], progress: Sequence[float], *, won: bool) -> dict[str, Any]:
    """First error, back-on-track turn and turns spent recovering of one trace (see the module docstring).

    Turns are 0-based action indices: ``error_turn`` is the erroneous action, ``back_on_track_turn`` the
    action after which the agent was back (``None`` if never), ``recovery_turns`` their difference.
    ``plan_lengths[i]`` and ``progress[i]`` describe the state before action ``i``; a lost final state
    has no plan (``None``).
    """
    error = None
    for i in range(len(plan_lengths) - 1):
        last = i + 1 == len(plan_lengths) - 1
        if is_error_step(
            plan_lengths[i],
            plan_lengths[i + 1],
            progress[i],
            progress[i + 1],
            won=won and last,
            lost=False,
        ):
            error = i
            break
    back = None
    if error is not None:
        reference, level = plan_lengths[error], progress[error]
        for j in range(error + 1, len(plan_lengths) - 1):
            length = plan_lengths[j + 1]
            if (
                length is not None
                and reference is not None
                and length <= reference
                and progress[j + 1] >= level - _TOLERANCE
            ):
                back = j
                break
    return {
        "error_turn": error,
        "back_on_track_turn": back,
        "recovery_turns": None if back is None or error is None else back - error,
        "won": bool(won),
    }


def _rate(
    values: Sequence[float], confidence: float, resamples: int, seed: int, bounds: tuple[float, float] | None = RATE
) -> dict[str, Any]:
    if not values:
        return {"mean": None, "ci": [None, None], "n": 0}
    low, high = bootstrap_ci(values, confidence=confidence, resamples=resamples, seed=seed, bounds=bounds)
    return {"mean": round(float(np.mean(values)), 6), "ci": [round(low, 6), round(high, 6)], "n": len(values)}


def natural_recovery(
    records: Iterable[Mapping[str, Any]],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Per agent: episodes, success, share with an error, success after an error, turns spent recovering.

    ``records`` are traced episodes (``agent``, ``won``, ``plan_lengths``, ``progress_trace``). Intervals
    are expanded BCa bootstraps over episodes.

    Example:
        >>> rows = [{"agent": "a", "won": True, "plan_lengths": [2, 3, 2, 1, 0], "progress_trace": [0, 0, 0, 0, 1]},
        ...         {"agent": "a", "won": False, "plan_lengths": [2, 3, 4], "progress_trace": [0, 0, 0]},
        ...         {"agent": "a", "won": True, "plan_lengths": [2, 1, 0], "progress_trace": [0, 0, 1]}]
        >>> stats = natural_recovery(rows, resamples=200)["a"]
        >>> stats["error_rate"]["mean"], stats["success_after_error"]["mean"], stats["recovery_turns"]["mean"]
        (0.666667, 0.5, 1.0)
    """
    by_agent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        result = analyze_trace(record["plan_lengths"], record["progress_trace"], won=bool(record["won"]))
        by_agent[record["agent"]].append(result)
    options = {"confidence": confidence, "resamples": resamples, "seed": seed}
    summary = {}
    for agent, results in by_agent.items():
        with_error = [r for r in results if r["error_turn"] is not None]
        clean = [r for r in results if r["error_turn"] is None]
        summary[agent] = {
            "episodes": len(results),
            "success_rate": _rate([float(r["won"]) for r in results], **options),
            "error_rate": _rate([float(r["error_turn"] is not None) for r in results], **options),
            "success_after_error": _rate([float(r["won"]) for r in with_error], **options),
            "success_without_error": _rate([float(r["won"]) for r in clean], **options),
            "back_on_track_rate": _rate([float(r["back_on_track_turn"] is not None) for r in with_error], **options),
            "recovery_turns": _rate(
                [float(r["recovery_turns"]) for r in with_error if r["recovery_turns"] is not None],
                **options,
                bounds=None,
            ),
            "first_error_turn": _rate([float(r["error_turn"]) for r in with_error], **options, bounds=None),
        }
    return summary


def trace_signal_points(records: Iterable[Mapping[str, Any]]) -> list[SignalPoint]:
    """Process-signal points of traced episodes: every step, with the episode's outcome as its success."""
    points = []
    for record in records:
        plans, progress, won = record["plan_lengths"], record["progress_trace"], bool(record["won"])
        for i in range(len(plans) - 1):
            last = i + 1 == len(plans) - 1
            before, after = plans[i], plans[i + 1]
            optimal = (won and last) or (before is not None and after is not None and 0 < after <= before - 1)
            points.append(
                SignalPoint(
                    family=record.get("family", "?"),
                    progress=float(progress[i]),
                    delta=float(progress[i + 1]) - float(progress[i]),
                    success=float(won),
                    optimal=bool(optimal),
                    error=is_error_step(before, after, progress[i], progress[i + 1], won=won and last, lost=False),
                )
            )
    return points


def format_natural(summary: Mapping[str, Mapping[str, Any]]) -> str:
    """The natural-recovery table (for the terminal).

    Example:
        >>> row = {"episodes": 2, "success_rate": {"mean": 0.5}, "error_rate": {"mean": 1.0},
        ...        "success_after_error": {"mean": 0.5}, "recovery_turns": {"mean": 1.0}}
        >>> print(format_natural({"a": row}))  # doctest: +NORMALIZE_WHITESPACE
        agent  episodes  success  with error  success after error  turns recovering
        a             2     0.50        1.00                 0.50              1.00
    """

    def number(value: Any) -> str:
        return "-" if value is None else f"{value:.2f}"

    width = max([len(a) for a in summary] + [5])
    lines = [
        f"{'agent'.ljust(width)}  episodes  success  with error  success after error  turns recovering",
    ]
    for agent, row in summary.items():
        lines.append(
            f"{agent.ljust(width)}  {row['episodes']:>8}  {number(row['success_rate']['mean']):>7}  "
            f"{number(row['error_rate']['mean']):>10}  {number(row['success_after_error']['mean']):>19}  "
            f"{number(row['recovery_turns']['mean']):>16}"
        )
    return "\n".join(lines)
