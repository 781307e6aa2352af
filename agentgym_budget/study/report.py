"""``study.md``: the study's tables, the probes' step-value distribution, the claims, and the time each stage took.

Example:
    >>> lines = timing_lines({"sft": {"wall_s": 60.0, "cpu_s": 110.0, "load_start": 1.0, "load_end": 2.5}})
    >>> lines[-3]
    '| sft | 1.0 | 1.8 | 1.00 -> 2.50 |'
    >>> timing_lines({"passkt": {"wall_s": 60.0, "cpu_s": 90.0, "load_start": 1.0, "load_end": 2.0, "interrupted": 1}})[2]
    '| passkt (stopped 1x, resumed) | 1.0 | 1.5 | 1.00 -> 2.00 |'
    >>> loads = {"load_start": 2.0, "load_end": 2.0}
    >>> print(*timing_lines({"fixed": {"wall_s": 600, "cpu_s": 590, "within": "rl_runs", **loads},
    ...                      "fixed@1": {"wall_s": 540, "cpu_s": 530, "within": "rl_runs", **loads},
    ...                      "rl_runs": {"wall_s": 606, "cpu_s": 1120, "side_by_side": 2, **loads}})[2:], sep="\\n")
    | fixed (in rl_runs) | 10.0 | 9.8 | 2.00 -> 2.00 |
    | fixed@1 (in rl_runs) | 9.0 | 8.8 | 2.00 -> 2.00 |
    | rl_runs: the runs in it, 2 side by side | 10.1 | 18.7 | 2.00 -> 2.00 |
    | total (runs side by side: their block) | 10.1 | 18.7 | |
    <BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentgym_budget.study.claims import claims_markdown
from agentgym_budget.study.timing import study_totals

__all__: list[str] = []


def timing_lines(times: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The wall and CPU minutes of every stage, with the 1-minute load average at its start and end."""
    lines = ["| stage | wall min | CPU min | load (1 min) |", "|---|---|---|---|"]
    for stage, entry in times.items():
        stops = entry.get("interrupted", 0)
        label = f"{stage}{f' (stopped {stops}x, resumed)' if stops else ''}"
        if "side_by_side" in entry:
            label += f": the runs in it, {entry['side_by_side']} side by side"
        elif "within" in entry:
            label += f" (in {entry['within']})"
        lines.append(
            f"| {label} | {entry['wall_s'] / 60:.1f} | "
            f"{entry['cpu_s'] / 60:.1f} | {entry['load_start']:.2f} -> {entry['load_end']:.2f} |"
        )
    wall, cpu = study_totals(times)
    blocks = any("side_by_side" in entry for entry in times.values())
    lines += [
        f"| total{' (runs side by side: their block)' if blocks else ''} | {wall / 60:.1f} | {cpu / 60:.1f} | |",
        "",
    ]
    if any(entry.get("interrupted") for entry in times.values()):
        lines += [
            "A stopped stage's time counts up to its stop; the CPU time of worker processes it left unfinished "
            "does not.",
            "",
        ]
    return lines


def figure_lines(figures: Sequence[str], name: str, alt: str) -> list[str]:
    """A Markdown image line for figure ``name`` if it was drawn.

    Example:
        >>> figure_lines(["training.png"], "training.png", "curves")
        ['![curves](training.png)', '']
    """
    return [f"![{alt}]({name})", ""] if name in figures else []


def training_lines(training: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each RL run's GRPO steps, how many had a reward signal, and its training success early and late.

    Example:
        >>> rl = {"steps": 12, "steps_with_signal": 4, "success_by_budget": {"4": {"first": 0.58, "last": 0.5}}}
        >>> training_lines({"sft": {}, "fixed": {"rl": rl}})[-2]
        '| fixed | 12 | 4 | T=4: 0.58 -> 0.50 |'
    """
    runs = {name: summary["rl"] for name, summary in training.items() if "rl" in summary}
    if not runs:
        return []
    lines = [
        "## Training",
        "",
        "Per RL run: GRPO steps, the steps in which some group's episodes earned different rewards (in the "
        "others every advantage is 0: no reward signal to follow), and the training success rate in the first "
        "and the last quarter of the steps, per training budget.",
        "",
        "| run | steps | steps with a signal | success, first -> last quarter |",
        "|---|---|---|---|",
    ]
    for name, rl in runs.items():
        signal = rl.get("steps_with_signal")
        success = "; ".join(
            f"T={budget}: {entry['first']:.2f} -> {entry['last']:.2f}"
            for budget, entry in rl["success_by_budget"].items()
        )
        lines.append(f"| {name} | {rl['steps']} | {'' if signal is None else signal} | {success} |")
    return [*lines, ""]


def step_value_lines(distribution: Mapping[str, Any]) -> list[str]:
    """The per-state step value of every agent: quantiles and histogram counts (a saturated metric shows at once)."""
    lines = [
        "## Probe step values",
        "",
        f"States examined {distribution['states_examined']}, kept {distribution['states_kept']} (best and worst "
        f"admissible action's expert-continuation values differ by >= {distribution['value_gap']}); states come "
        "from the evaluated agents' own held-out episodes. Per agent, the distribution over kept states of the "
        "step value (share of expert continuations that win after the agent's action, mean over its samples); "
        f"histogram bins {distribution['bins'][0]}-{distribution['bins'][-1]} by 0.1.",
        "",
        "| agent | states | mean | min | q10 | q25 | median | q75 | q90 | max | histogram |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in distribution["agents"].items():
        quantiles = " | ".join(f"{value:.2f}" for value in entry["quantiles"].values())
        lines.append(
            f"| {name} | {entry['states']} | {entry['mean']:.3f} | {quantiles} | {' '.join(map(str, entry['histogram']))} |"
        )
    return [*lines, ""]


def turn_lines(turns: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """How every agent spent its held-out turns (``study.json``'s ``turns``), as a table.

    Example:
        >>> turn_lines({"sft": {"episodes": 1, "turns": 4, "inadmissible": 0.25, "free_text": 0.0}})[-2]
        '| sft | 1 | 4 | 25.0% | 0.0% | n/a |'
    """
    lines = [
        "Turns on held-out tasks (the Pass@(K,T) episodes): the share naming an action not admissible in its "
        "state, the share of replies that were not a well-formed `act` call, and the share of episodes whose "
        "first action is the reference solver's first command (an agent that ignores its task matches it "
        "only by chance).",
        "",
        "| agent | episodes | turns | inadmissible | free text | first move = solver's |",
        "|---|---|---|---|---|---|",
    ]
    for name, entry in turns.items():
        first = f"{entry['first_move_expert']:.1%}" if "first_move_expert" in entry else "n/a"
        lines.append(
            f"| {name} | {entry['episodes']} | {entry['turns']} | {entry['inadmissible']:.1%} | "
            f"{entry['free_text']:.1%} | {first} |"
        )
    return [*lines, ""]


def _demonstrations_line(train: Any) -> str:
    """What the SFT base imitated (``train``: the study's :class:`~agentgym_budget.train.config.TrainConfig`).

    Example:
        >>> from types import SimpleNamespace
        >>> _demonstrations_line(SimpleNamespace(sft_agent="noisy-expert-recover:eps=0.2", sft_mask_errors=True,
        ...                                     train_tasks=100, sft_episodes_per_task=2))
        'SFT demonstrations: the won episodes of noisy-expert-recover:eps=0.2 (2 per task on 100 train tasks), its errors (commands other than the expert action) masked from the loss.'
    """
    if train.sft_agent == "expert":
        errors = "no error to mask"
    elif train.sft_mask_errors:
        errors = "its errors (commands other than the expert action) masked from the loss"
    else:
        errors = "every turn trained on, errors included"
    return (
        f"SFT demonstrations: the won episodes of {train.sft_agent} ({train.sft_episodes_per_task} per task on "
        f"{train.train_tasks} train tasks), {errors}."
    )


def pass_at_one_lines(
    table: Sequence[Mapping[str, Any]], differences: Sequence[Mapping[str, Any]], budgets: Sequence[int]
) -> list[str]:
    """Pass@1 per agent (rows) and budget (columns), then each RL run minus the SFT base, paired on the same tasks.

    Example:
        >>> table = [{"agent": "sft", "budget": 3, "pass@1": 0.1, "low": 0.05, "high": 0.2, "tasks": 20}]
        >>> diffs = [{"pair": "fixed - sft", "budget": 3, "diff": 0.02, "low": -0.01, "high": 0.05, "tasks": 20},
        ...          {"pair": "budgetmix - fixed", "budget": 3, "diff": 0.0, "low": -0.02, "high": 0.02, "tasks": 20}]
        >>> pass_at_one_lines(table, diffs, [3])[2], pass_at_one_lines(table, diffs, [3])[-2]
        ('| sft | 0.100 [0.050, 0.200] |', '| fixed - sft | +0.020 [-0.010, +0.050] |')
    """
    header = " | ".join(f"T={b}" for b in budgets)
    cells: dict[str, dict[int, str]] = {}
    for row in table:
        cells.setdefault(row["agent"], {})[row["budget"]] = f"{row['pass@1']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"
    versus: dict[str, dict[int, str]] = {}
    for row in differences:
        if row["pair"].endswith(" - sft"):
            versus.setdefault(row["pair"], {})[row["budget"]] = (
                f"{row['diff']:+.3f} [{row['low']:+.3f}, {row['high']:+.3f}]"
            )
    tasks = max((row["tasks"] for row in table), default=0)
    lines = [f"| agent | {header} |", "|---|" + "---|" * len(budgets)]
    lines += [f"| {agent} | " + " | ".join(by.get(b, "") for b in budgets) + " |" for agent, by in cells.items()]
    lines += [
        "",
        f"Pass@1 with 95% intervals over the {tasks} tasks (expanded BCa bootstrap). Each RL run minus the SFT base, "
        "paired on the same tasks (Student-t on the per-task differences; every other pair: `study.json` "
        "`differences` and `passkt/difference.csv`):",
        "",
        f"| run - base | {header} |",
        "|---|" + "---|" * len(budgets),
    ]
    lines += [f"| {pair} | " + " | ".join(by.get(b, "") for b in budgets) + " |" for pair, by in versus.items()]
    return [*lines, ""]


DECIDING_TASKS, DECIDING_SEEDS = 32, 2
"""The least test tasks and training seeds per RL arm of a study whose verdicts can decide a claim."""


def scope_lines(config: Any) -> list[str]:
    """A warning when the study is too small to decide anything (the ``smoke`` and ``quick`` presets).

    Example:
        >>> from types import SimpleNamespace
        >>> scope_lines(SimpleNamespace(eval_tasks=8, training_seeds=1))[0][:42]
        '**These sizes show the pipeline; they deci'
        >>> scope_lines(SimpleNamespace(eval_tasks=56, training_seeds=3))
        []
    """
    if config.eval_tasks >= DECIDING_TASKS and config.training_seeds >= DECIDING_SEEDS:
        return []
    return [
        f"**These sizes show the pipeline; they decide nothing** ({config.eval_tasks} test tasks, "
        f"{config.training_seeds} training seed(s) per RL arm; a verdict needs at least {DECIDING_TASKS} tasks and "
        f"{DECIDING_SEEDS} seeds): read the verdicts below as a demonstration, not a finding.",
        "",
    ]


def study_markdown(
    config: Any,
    study: Mapping[str, Any],
    texts: Mapping[str, str],
    times: Mapping[str, Any],
    figures: Sequence[str] = (),
) -> str:
    """The text of ``study.md`` (``config``: the :class:`~agentgym_budget.study.run.StudyConfig`; ``figures``:
    the names of the figures drawn beside it)."""
    lines = [
        f"# Study on {config.env_id} ({config.env_kwargs}), held-out test tasks",
        "",
        f"Training budget T={config.train_budget}; BudgetMix and curriculum budgets {list(config.budgets)}; arms "
        f"{', '.join(config.arms)} ({config.training_seeds} training seed(s) each) from one SFT base; "
        f"{config.eval_tasks} test tasks x {config.eval_samples} episodes per agent and budget.",
        "",
        _demonstrations_line(config.train),
        "",
        *scope_lines(config),
        *pass_at_one_lines(study["pass@1"], study["differences"], config.eval_budgets),
        *figure_lines(figures, "pass_at_1.png", "Pass@1 by budget, and each RL run minus the base"),
        *turn_lines(study["turns"]),
        *training_lines(study["training"]),
        *figure_lines(figures, "training.png", "SFT loss, GRPO return and groups with a signal per step"),
    ]
    lines += claims_markdown(study["claims"], config.training_seeds)
    if study["probe_step_values"]["states_examined"]:
        lines += step_value_lines(study["probe_step_values"])
    lines += ["## Time", "", *timing_lines(times)]
    for name, text in texts.items():
        lines += [f"## {name}", "", "```", text, "```", ""]
    return "\n".join(lines)
