"""Summaries and plots of a training run directory (see :mod:`agentgym_budget.train.recipe` for its layout).

:func:`summarize_training` reads ``sft/metrics.jsonl``, ``rl/metrics.jsonl`` and ``rl/episodes.jsonl``;
:func:`training_plot` draws ``training.png``: the SFT loss, the GRPO mean return, and the training
success rate by budget (a moving window over steps), so a run can be watched while it goes.

Example:
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> log = JsonlLog(out / "rl" / "episodes.jsonl")
    >>> for step, won in [(1, False), (1, True), (2, True), (2, True)]:
    ...     log.append({"step": step, "budget": 4, "won": won, "turns": 3, "return": float(won), "truncated": not won})
    >>> summary = summarize_training(out)["rl"]
    >>> summary["episodes"], summary["success_by_budget"]["4"]["first"], summary["success_by_budget"]["4"]["last"]
    (4, 0.5, 1.0)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentgym_budget.train.metrics import JsonlLog

__all__ = ["steps_with_signal", "success_by_budget"]


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def success_by_budget(episodes: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per budget: episodes, success and mean turns over the first and the last quarter of the steps (and all).

    Example:
        >>> success_by_budget([{"step": 1, "budget": 2, "won": True, "turns": 1}])["2"]["all"]
        1.0
    """
    by_budget: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for episode in episodes:
        by_budget[int(episode["budget"])].append(episode)
    result = {}
    for budget, rows in sorted(by_budget.items()):
        steps = sorted({int(r["step"]) for r in rows})
        quarter = max(1, len(steps) // 4)
        first, last = set(steps[:quarter]), set(steps[-quarter:])
        result[str(budget)] = {
            "episodes": len(rows),
            "all": _mean([float(r["won"]) for r in rows]),
            "first": _mean([float(r["won"]) for r in rows if r["step"] in first]),
            "last": _mean([float(r["won"]) for r in rows if r["step"] in last]),
            "turns": _mean([float(r["turns"]) for r in rows]),
        }
    return result


def steps_with_signal(rl_logs: Sequence[dict[str, Any]]) -> int | None:
    """GRPO steps in which some group's rewards differed (TRL's ``frac_reward_zero_std`` below 1).

    In the other steps every group's episodes earned the same reward: zero advantage, nothing for the
    policy gradient to follow. ``None`` when the logs do not carry the metric. A resumed step counts once.

    Example:
        >>> steps_with_signal([{"step": 1, "frac_reward_zero_std": 1.0}, {"step": 2, "frac_reward_zero_std": 0.5}])
        1
    """
    by_step = {r["step"]: r["frac_reward_zero_std"] for r in rl_logs if r.get("frac_reward_zero_std") is not None}
    return sum(share < 1 for share in by_step.values()) if by_step else None


def summarize_training(out: str | Path) -> dict[str, Any]:
    """What a run directory's logs say: final SFT loss, RL episodes, steps with a signal and success by budget."""
    out = Path(out)
    summary: dict[str, Any] = {}
    sft = [r for r in JsonlLog(out / "sft" / "metrics.jsonl").read() if "loss" in r]
    if sft:
        summary["sft"] = {
            "steps": sft[-1]["step"],
            "first_loss": sft[0]["loss"],
            "last_loss": sft[-1]["loss"],
            "elapsed_s": sft[-1].get("elapsed_s"),
        }
    episodes = JsonlLog(out / "rl" / "episodes.jsonl").read()
    if episodes:
        rl_logs = [r for r in JsonlLog(out / "rl" / "metrics.jsonl").read() if "reward" in r]
        summary["rl"] = {
            "steps": max(int(e["step"]) for e in episodes),
            "episodes": len(episodes),
            "success": _mean([float(e["won"]) for e in episodes]),
            "steps_with_signal": steps_with_signal(rl_logs),
            "success_by_budget": success_by_budget(episodes),
            "elapsed_s": rl_logs[-1].get("elapsed_s") if rl_logs else None,
        }
    return summary


def _moving(xs: Sequence[int], ys: Sequence[float], window: int) -> tuple[list[int], list[float]]:
    by_step: dict[int, list[float]] = defaultdict(list)
    for x, y in zip(xs, ys, strict=True):
        by_step[x].append(y)
    steps = sorted(by_step)
    smooth = []
    for i in range(len(steps)):
        chunk = [v for s in steps[max(0, i - window + 1) : i + 1] for v in by_step[s]]
        smooth.append(sum(chunk) / len(chunk))
    return steps, smooth


def training_plot(out: str | Path, path: str | Path, *, window: int = 10) -> Path | None:
    """Draw the run's curves into ``path`` (PNG); ``None`` when there is nothing logged yet."""
    from agentgym_budget.eval.figures import new_figure, save_figure, series_style

    out = Path(out)
    sft = [r for r in JsonlLog(out / "sft" / "metrics.jsonl").read() if "loss" in r]
    rl = [r for r in JsonlLog(out / "rl" / "metrics.jsonl").read() if "reward" in r]
    episodes = JsonlLog(out / "rl" / "episodes.jsonl").read()
    if not (sft or rl or episodes):
        return None
    figure, (loss, reward, success) = new_figure(3, columns=3)
    if sft:
        loss.plot([r["step"] for r in sft], [r["loss"] for r in sft], marker=".")
    else:
        loss.text(0.5, 0.5, "no SFT phase in this run\n(RL from --init)", ha="center", transform=loss.transAxes)
    loss.set(title="SFT loss (assistant tokens)", xlabel="step", ylabel="loss")
    if rl:
        reward.plot([r["step"] for r in rl], [r["reward"] for r in rl], alpha=0.35, label="per step")
        reward.plot(*_moving([r["step"] for r in rl], [r["reward"] for r in rl], window), label=f"mean of {window}")
        reward.legend(fontsize=8)
    else:
        reward.text(0.5, 0.5, "no RL phase in this run", ha="center", transform=reward.transAxes)
    reward.set(title="GRPO mean return", xlabel="step", ylabel="return")
    budgets = sorted({int(e["budget"]) for e in episodes})
    for index, budget in enumerate(budgets):
        rows = [e for e in episodes if int(e["budget"]) == budget]
        xs, ys = _moving([int(e["step"]) for e in rows], [float(e["won"]) for e in rows], window)
        success.plot(xs, ys, label=f"T={budget}", markevery=max(1, len(xs) // 8), **series_style(index))
    if budgets:
        success.legend(fontsize=8)
    success.set(title=f"training success by budget (last {window} steps)", xlabel="step", ylabel="success", ylim=(0, 1))
    return save_figure(figure, Path(path))[0]
