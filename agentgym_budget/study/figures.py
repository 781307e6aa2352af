"""The study's two figures: ``pass_at_1.png`` (Pass@1 against the budget, and each RL run minus the base) and
``training.png`` (SFT loss, then per GRPO step of every RL run its mean return and its share of groups with a
reward signal).

Both captions name what is drawn, the interval, the sizes, the machine, the load and the study's wall and CPU
time (from ``timing.json``), so a figure read on its own says what run made it. The figures are drawn from
``study.json``'s tables and the runs' ``metrics.jsonl``, after ``study.md``; ``study.json`` holds no time, the
figures do.

Example:
    >>> study = {"pass@1": [{"agent": "sft", "budget": 3, "pass@1": 0.5, "low": 0.3, "high": 0.7, "tasks": 8}],
    ...          "differences": []}
    >>> caption = pass_at_one_caption(study, 4, {"sft": {"wall_s": 60, "cpu_s": 90, "load_start": 1, "load_end": 2}})
    >>> caption.splitlines()[0]
    'Pass@1 on 8 held-out test tasks x 4 episodes per agent and budget; bars: 95% intervals (expanded BCa'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentgym_budget.runner.store import read_jsonl
from agentgym_budget.study.claims import machine
from agentgym_budget.study.timing import study_totals

__all__: list[str] = []

PASS_AT_ONE_PNG = "pass_at_1.png"
TRAINING_PNG = "training.png"


def machine_line(times: Mapping[str, Mapping[str, float]]) -> str:
    """The machine, the load range over the stages, and the study's wall and CPU minutes.

    Example:
        >>> line = machine_line({"sft": {"wall_s": 60, "cpu_s": 90, "load_start": 1.0, "load_end": 2.5}})
        >>> line.split("; ", 1)[1]
        'load 1.0-2.5 (1-minute average); study 1.0 min wall, 1.5 min CPU'
    """
    loads = [entry[key] for entry in times.values() for key in ("load_start", "load_end") if key in entry]
    wall, cpu = (seconds / 60 for seconds in study_totals(times))
    load = f"load {min(loads):.1f}-{max(loads):.1f} (1-minute average)" if loads else "load not recorded"
    stops = sum(entry.get("interrupted", 0) for entry in times.values())
    resumed = f" (stopped {stops}x and resumed)" if stops else ""
    return f"{machine()}; {load}; study {wall:.1f} min wall, {cpu:.1f} min CPU{resumed}"


def pass_at_one_caption(study: Mapping[str, Any], samples: int, times: Mapping[str, Mapping[str, float]]) -> str:
    """The caption of ``pass_at_1.png``."""
    tasks = max((row["tasks"] for row in study["pass@1"]), default=0)
    return (
        f"Pass@1 on {tasks} held-out test tasks x {samples} episodes per agent and budget; bars: 95% intervals (expanded BCa\n"
        "bootstrap over tasks; differences: paired t over tasks). Right: each RL run minus the SFT base on the same tasks.\n"
        + machine_line(times)
    )


def pass_at_one_figure(study: Mapping[str, Any], samples: int, times: Mapping[str, Any], path: Path) -> Path:
    """Draw Pass@1 against the budget per agent (left) and each RL run minus the base (right) into ``path``."""
    from agentgym_budget.eval.figures import add_caption, figure_legend, new_figure, save_figure

    figure, (rates, gains) = new_figure(2, width=5.0, columns=2)
    agents = list(dict.fromkeys(row["agent"] for row in study["pass@1"]))
    for index, agent in enumerate(agents):
        rows = sorted((r for r in study["pass@1"] if r["agent"] == agent), key=lambda r: r["budget"])
        _interval_series(rates, rows, "pass@1", index, len(agents), label=agent)
    pairs = list(dict.fromkeys(r["pair"] for r in study["differences"] if r["pair"].endswith(" - sft")))
    for index, pair in enumerate(pairs, start=1):
        rows = sorted((r for r in study["differences"] if r["pair"] == pair), key=lambda r: r["budget"])
        _interval_series(gains, rows, "diff", index, len(agents), label=None)
    gains.axhline(0.0, color="grey", linewidth=0.8)
    budgets = sorted({row["budget"] for row in study["pass@1"]})
    rates.set(title="Pass@1 by budget", xlabel="budget T (turns)", ylabel="Pass@1", ylim=(0, 1), xticks=budgets)
    gains.set(
        title="RL run - SFT base (paired)", xlabel="budget T (turns)", ylabel="difference in Pass@1", xticks=budgets
    )
    figure_legend(figure, [rates])
    add_caption(figure, pass_at_one_caption(study, samples, times))
    return save_figure(figure, path)[0]


def _interval_series(
    axis: Any, rows: Sequence[Mapping[str, Any]], key: str, index: int, count: int, label: str | None
) -> None:
    from agentgym_budget.eval.figures import series_style, shifted

    xs = shifted([row["budget"] for row in rows], index, count, step=0.08)
    ys = [row[key] for row in rows]
    errors = [[y - row["low"] for y, row in zip(ys, rows, strict=True)],
              [row["high"] - y for y, row in zip(ys, rows, strict=True)]]  # fmt: skip
    axis.errorbar(xs, ys, yerr=errors, capsize=3, label=label, color=_colour(index), **series_style(index))


def _colour(index: int) -> str:
    """The ``index``-th colour of matplotlib's default cycle: one agent keeps its colour in every panel."""
    return f"C{index % 10}"


def _signal_share(record: Mapping[str, Any]) -> float | None:
    if "signal_groups" in record:
        return float(record["signal_groups"])
    if "frac_reward_zero_std" in record:
        return 1.0 - float(record["frac_reward_zero_std"])
    return None


def training_figure(out: Path, runs: Sequence[str], times: Mapping[str, Any], path: Path) -> Path | None:
    """Draw the SFT loss and, per GRPO step of each RL run in ``runs``, its mean return and signal share."""
    from agentgym_budget.eval.figures import add_caption, figure_legend, new_figure, save_figure, series_style, shifted

    sft_log = out / "sft" / "sft" / "metrics.jsonl"
    sft = [r for r in read_jsonl(sft_log) if "loss" in r] if sft_log.exists() else []
    logs = {run: _rl_metrics(out / run) for run in runs}
    logs = {run: rows for run, rows in logs.items() if rows}
    if not (sft or logs):
        return None
    figure, (loss, reward, signal) = new_figure(3, width=4.4, columns=2)  # 2 x 2: legible at a page's width
    if sft:
        loss.plot([r["step"] for r in sft], [r["loss"] for r in sft], marker=".", color="black")
    loss.set(title="SFT loss (assistant tokens)", xlabel="SFT step", ylabel="loss")
    for index, (run, rows) in enumerate(logs.items(), start=1):
        steps = shifted([r["step"] for r in rows], index - 1, len(logs), step=0.12)
        reward.plot(steps, [r["reward"] for r in rows], label=run, color=_colour(index), **series_style(index))
        shares = [(x, share) for x, r in zip(steps, rows, strict=True) if (share := _signal_share(r)) is not None]
        signal.plot([x for x, _ in shares], [v for _, v in shares], color=_colour(index), **series_style(index))
    reward.set(title="GRPO mean return per step", xlabel="GRPO step", ylabel="mean return", ylim=(-0.05, 1.05))
    signal.set(
        title="groups with a reward signal", xlabel="GRPO step", ylabel="share of the step's groups", ylim=(-0.05, 1.05)
    )
    from matplotlib.ticker import MaxNLocator

    for axis in (loss, reward, signal):
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    figure_legend(figure, [reward])
    caption = (
        "Top left: SFT loss per step. Top right: each RL run's mean episode return per GRPO step (the rollouts it\n"
        "trained on). Bottom left: share of the step's groups whose rollouts earned different returns (after dynamic\n"
        "sampling's replays).\n" + machine_line(times)
    )
    add_caption(figure, caption)
    return save_figure(figure, path)[0]


def _rl_metrics(run: Path) -> list[dict[str, Any]]:
    path = run / "rl" / "metrics.jsonl"
    return [r for r in read_jsonl(path) if "reward" in r and "step" in r] if path.exists() else []


def study_figures(out: Path, config: Any, study: Mapping[str, Any], times: Mapping[str, Any]) -> list[str]:
    """Draw both figures into ``out``; returns the names of those drawn (none before any stage has output)."""
    drawn = []
    if study["pass@1"]:
        drawn.append(pass_at_one_figure(study, config.eval_samples, times, out / PASS_AT_ONE_PNG).name)
    runs = [name for name in study["agents"] if name != "sft"]
    if training_figure(out, runs, times, out / TRAINING_PNG) is not None:
        drawn.append(TRAINING_PNG)
    return drawn
