"""The study: SFT, fixed-budget GRPO and BudgetMix GRPO, then their evaluation on held-out tasks, in one run.

:func:`run_study` runs, each stage resumable (a rerun with the same ``out`` continues):

1. ``sft/``: recipe ``sft`` (the base policy, see :mod:`agentgym_budget.train.recipe`);
2. ``fixed/``: recipe ``fixed`` at ``train_budget``, RL from ``sft/final``;
3. ``budgetmix/``: recipe ``budgetmix`` over ``budgets``, RL from ``sft/final`` (same steps, same tasks);
4. ``passkt/``: the Pass@(K,T) grid of the three checkpoints as ``hf:DIR`` agents on the first
   ``eval_tasks`` tasks of the **test** split (never trained on), budgets ``eval_budgets``;
5. ``probe/`` and ``recovery/``: single-step probes and recovery probes of the same agents on the test split.

It writes ``study.json`` (settings, wall time per stage, the Pass@1 table at every budget with its
bootstrap interval, the ``claims`` with their verdicts: :mod:`agentgym_budget.train.study_claims`) and ``study.md`` (the table and the text summaries of the three evaluations).

Example::

    summary = run_study(StudyConfig(), "runs/study")
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from agentgym_budget.errors import InvalidOptionError, RunConfigError
from agentgym_budget.train.grpo import GRPOSettings
from agentgym_budget.train.recipe import TrainConfig, run_training
from agentgym_budget.train.study_claims import claims_markdown, study_claims

__all__ = ["StudyConfig", "run_study"]

STAGES = ("sft", "fixed", "budgetmix", "passkt", "probe", "recovery")
"""The stages of a study, in order."""

RECIPE_STAGES = ("sft", "fixed", "budgetmix")

CLEAN_DEMONSTRATIONS = "expert"
"""The scripted agent whose won episodes are the study's SFT demonstrations by default (no injected errors)."""


@dataclass(frozen=True)
class StudyConfig:
    """Settings of a study (defaults: the CPU study of the README, <= 60 minutes on 2 cores).

    Attributes:
        env_id: Environment id.
        env_kwargs: Its arguments.
        train_budget: The fixed recipe's budget, and the budget the table compares at.
        budgets: The BudgetMix recipe's budgets.
        eval_budgets: Budgets of the Pass@(K,T) grid.
        eval_ks: Breadths of the grid.
        eval_samples: Episodes per (agent, task, budget).
        eval_tasks: Held-out tasks (the first of the test split).
        probe_states: States of the single-step probes (0: skip the stage).
        recovery_states: States of the recovery probes (0: skip the stage).
        train: The training settings shared by the three recipes (its recipe and budgets are set per stage).
        workers: Evaluation worker processes.
        seed: Seed of everything.
        training_seeds: RL runs per RL recipe (run ``i`` trains with seed ``seed + i`` into ``NAME@i``; run 0
            into ``NAME``); the claims' intervals include their spread. SFT is trained once.
        noisy_demonstrations: SFT imitates the won episodes of the noisy expert (``TrainConfig.sft_agent``'s
            default, injected errors included) instead of the clean ``expert`` (default). Only applies when
            ``train`` is not given.

    Raises:
        InvalidOptionError: ``train_budget`` not in ``eval_budgets``, or a bad number.
    """

    env_id: str = "TextWorld-CoinCollector-v0"
    env_kwargs: Any = "level=3"
    train_budget: int = 6
    budgets: tuple[int, ...] = (3, 4, 6, 8)
    eval_budgets: tuple[int, ...] = (3, 4, 6, 8)
    eval_ks: tuple[int, ...] = (1, 2, 4)
    eval_samples: int = 4
    eval_tasks: int = 30
    probe_states: int = 15
    recovery_states: int = 10
    train: TrainConfig | None = None
    workers: int = 2
    seed: int = 0
    training_seeds: int = 1
    noisy_demonstrations: bool = False

    def __post_init__(self) -> None:
        if self.train_budget not in self.eval_budgets:
            raise InvalidOptionError(
                f"train_budget={self.train_budget} must be one of eval_budgets {list(self.eval_budgets)} "
                "(the table compares the agents at the training budget)."
            )
        for name in ("eval_samples", "eval_tasks", "workers", "training_seeds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidOptionError(f"StudyConfig: {name} must be a positive integer, got {value!r}.")
        if max(self.eval_ks) > self.eval_samples:
            raise InvalidOptionError(
                f"StudyConfig: eval_ks {list(self.eval_ks)} exceed eval_samples={self.eval_samples}."
            )
        if self.train is None:
            object.__setattr__(
                self,
                "train",
                TrainConfig(
                    self.env_id,
                    self.env_kwargs,
                    recipe="sft",
                    budget=max(self.budgets),
                    seed=self.seed,
                    **({} if self.noisy_demonstrations else {"sft_agent": CLEAN_DEMONSTRATIONS}),
                ),
            )

    def recipe(self, name: str, sft_final: Path | None = None, index: int = 0) -> TrainConfig:
        """The :class:`TrainConfig` of the stage ``name`` (``fixed`` and ``budgetmix`` start from ``sft_final``).

        ``index`` is the RL run (training seed ``train.seed + index``).
        """
        assert self.train is not None
        if index and name != "sft":
            return replace(self.recipe(name, sft_final), seed=self.train.seed + index)
        if name == "sft":  # RL settings do not concern it: studies that differ only in them share an SFT run
            return replace(
                self.train, recipe="sft", budget=max(self.budgets), budgets=None, init=None, grpo=GRPOSettings()
            )
        init = str(sft_final) if sft_final is not None else None
        if name == "fixed":
            return replace(self.train, recipe="fixed", budget=self.train_budget, budgets=None, init=init, model=None)
        return replace(self.train, recipe="budgetmix", budget=None, budgets=self.budgets, init=init, model=None)

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        data = asdict(self)
        data["train"] = self.train.to_json() if self.train else None
        return data


def run_names(config: StudyConfig) -> list[tuple[str, str, int]]:
    """``(recipe, directory, index)`` of every training run: SFT once, each RL recipe ``training_seeds`` times."""
    return [("sft", "sft", 0)] + [
        (name, name if index == 0 else f"{name}@{index}", index)
        for name in RECIPE_STAGES[1:]
        for index in range(config.training_seeds)
    ]


def _agents(out: Path, config: StudyConfig) -> dict[str, str]:
    return {directory: f"hf:{out / directory / 'final'}" for _, directory, _ in run_names(config)}


def study_table(passkt_summary: dict[str, Any], agents: dict[str, str], budget: int) -> list[dict[str, Any]]:
    """Rows ``agent, budget, pass@1, low, high, tasks`` of a Pass@(K,T) ``summary.json`` (K=1 only).

    Example:
        >>> summary = {"agents": [{"agent": "hf:runs/s/sft/final", "tasks": 2, "grid": [
        ...     {"k": 1, "t": 4, "pass": 0.25, "ci_low": 0.0, "ci_high": 0.5},
        ...     {"k": 1, "t": 8, "pass": 0.5, "ci_low": 0.25, "ci_high": 0.75}]}]}
        >>> study_table(summary, {"sft": "hf:runs/s/sft/final"}, 8)
        [{'agent': 'sft', 'budget': 8, 'pass@1': 0.5, 'low': 0.25, 'high': 0.75, 'tasks': 2}]
    """
    names = {spec: name for name, spec in agents.items()}
    rows = []
    for entry in passkt_summary.get("agents", []):
        for cell in entry["grid"]:
            if cell["k"] == 1 and cell["t"] == budget:
                rows.append(
                    {
                        "agent": names.get(entry["agent"], entry["agent"]),
                        "budget": budget,
                        "pass@1": cell["pass"],
                        "low": cell["ci_low"],
                        "high": cell["ci_high"],
                        "tasks": entry["tasks"],
                    }
                )
    return rows


def _rank(name: str) -> int:
    return RECIPE_STAGES.index(name) if name in RECIPE_STAGES else len(RECIPE_STAGES)


def study_differences(passkt_summary: dict[str, Any], agents: dict[str, str], budget: int) -> list[dict[str, Any]]:
    """Paired Pass@1 differences at ``budget`` on common tasks (later recipe minus earlier: ``fixed - sft``).

    Example:
        >>> summary = {"differences": [{"first": "hf:a", "second": "hf:b", "tasks": 3, "grid": [
        ...     {"k": 1, "t": 6, "diff": 0.2, "ci_low": 0.05, "ci_high": 0.4, "significant": True}]}]}
        >>> row = study_differences(summary, {"sft": "hf:a", "fixed": "hf:b"}, 6)[0]
        >>> row["pair"], row["diff"], row["low"], row["high"]
        ('fixed - sft', -0.2, -0.4, -0.05)
    """
    names = {spec: name for name, spec in agents.items()}
    rows = []
    for entry in passkt_summary.get("differences", []):
        for cell in entry["grid"]:
            if cell["k"] == 1 and cell["t"] == budget:
                first, second = names.get(entry["first"], entry["first"]), names.get(entry["second"], entry["second"])
                diff, low, high = cell["diff"], cell["ci_low"], cell["ci_high"]
                if _rank(first) < _rank(second):  # report later recipe minus earlier one: RL - SFT
                    first, second, diff, low, high = second, first, 0.0 - diff, 0.0 - high, 0.0 - low  # no -0.0
                rows.append(
                    {
                        "pair": f"{first} - {second}",
                        "budget": budget,
                        "diff": diff,
                        "low": low,
                        "high": high,
                        "significant": cell["significant"],
                        "tasks": entry["tasks"],
                    }
                )
    return rows


def _stage_times(out: Path) -> dict[str, float]:
    path = out / "stage_times.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _timed(out: Path, stage: str, work: Callable[[], Any]) -> Any:
    began = time.perf_counter()
    result = work()
    times = _stage_times(out)
    times[stage] = round(times.get(stage, 0.0) + time.perf_counter() - began, 1)
    (out / "stage_times.json").write_text(json.dumps(times, indent=2) + "\n")
    return result


def _check_study(config: StudyConfig, out: Path) -> None:
    path = out / "study_config.json"
    wanted = json.loads(json.dumps(config.to_json()))
    if path.exists() and json.loads(path.read_text()) != wanted:
        raise RunConfigError(
            f"{out} holds a study with other settings; rerun with the same ones or give another --out."
        )
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(wanted, indent=2, sort_keys=True) + "\n")


def run_study(
    config: StudyConfig, out: str | Path, *, stages: tuple[str, ...] = STAGES, progress: bool = True
) -> dict[str, Any]:
    """Run (or resume) the ``stages`` of the study into ``out``; returns what ``study.json`` holds.

    Raises:
        InvalidOptionError: An unknown stage.
        RunConfigError: ``out`` holds a study with other settings.
    """
    from agentgym_budget.runner.env_ref import EnvRef

    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise InvalidOptionError(f"Unknown study stage(s) {unknown}; stages are {', '.join(STAGES)}.")
    out = Path(out)
    _check_study(config, out)
    sft_final = out / "sft" / "final"
    for name, directory, index in run_names(config):
        if name in stages:
            recipe = config.recipe(name, sft_final, index)
            _timed(out, directory, lambda r=recipe, d=directory: run_training(r, out / d, progress=progress))
    agents = _agents(out, config)
    held_out = EnvRef.parse(config.env_id, config.env_kwargs or None, "test")
    texts: dict[str, str] = {}
    table: list[dict[str, Any]] = []
    differences: list[dict[str, Any]] = []
    if "passkt" in stages:
        texts["passkt"], table, differences = _passkt(config, held_out, agents, out, progress)
    if "probe" in stages and config.probe_states:
        texts["probe"] = _timed(out, "probe", lambda: _probe(config, held_out, agents, out, progress))
    if "recovery" in stages and config.recovery_states:
        texts["recovery"] = _timed(out, "recovery", lambda: _recovery(config, held_out, agents, out, progress))
    study = {
        "config": config.to_json(),
        "agents": agents,
        "stage_wall_s": _stage_times(out),
        "total_wall_s": round(sum(_stage_times(out).values()), 1),
        "training": {
            name: json.loads((out / name / "summary.json").read_text())
            for name in agents
            if (out / name / "summary.json").exists()
        },
        "pass@1": table,
        "differences": differences,
        "claims": study_claims(out, config, agents),
    }
    (out / "study.json").write_text(json.dumps(study, indent=2, sort_keys=True) + "\n")
    (out / "study.md").write_text(_markdown(config, study, texts))
    return study


def _passkt(
    config: StudyConfig, env: Any, agents: dict[str, str], out: Path, progress: bool
) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """The held-out Pass@(K,T) stage: its summary text, the pass@1 table and the differences, per budget."""
    from agentgym_budget.eval.passkt.config import PassKTConfig
    from agentgym_budget.eval.passkt.plan import run_passkt
    from agentgym_budget.eval.passkt.tables import format_summary

    show = bool(config.train and config.train.show_budget)
    passkt = PassKTConfig(
        env,
        tuple(agents.values()),
        ks=config.eval_ks,
        budgets=config.eval_budgets,
        samples=config.eval_samples,
        tasks=config.eval_tasks,
        mode="independent" if show else "prefix",
        show_budget=show,
        seed=config.seed,
        workers=config.workers,
    )
    result = _timed(out, "passkt", lambda: run_passkt(passkt, out / "passkt", progress=progress))
    summary_json = json.loads((out / "passkt" / "summary.json").read_text())
    table: list[dict[str, Any]] = []
    differences: list[dict[str, Any]] = []
    for budget in config.eval_budgets:
        table += study_table(summary_json, agents, budget)
        differences += study_differences(summary_json, agents, budget)
    return format_summary(result.summary), table, differences


def _probe(config: StudyConfig, env: Any, agents: dict[str, str], out: Path, progress: bool) -> str:
    from agentgym_budget.eval.probes.plan import ProbeConfig, run_probe
    from agentgym_budget.eval.probes.summary import format_probe_summary

    probe = ProbeConfig(
        envs=(env,),
        agents=tuple(agents.values()),
        states=config.probe_states,
        samples=2,
        budget=config.train_budget,
        show_budget=bool(config.train and config.train.show_budget),
        seed=config.seed,
        workers=config.workers,
    )
    return format_probe_summary(run_probe(probe, out / "probe", progress=progress).summary)


def _recovery(config: StudyConfig, env: Any, agents: dict[str, str], out: Path, progress: bool) -> str:
    from agentgym_budget.eval.recovery.config import RecoveryConfig
    from agentgym_budget.eval.recovery.plan import run_recovery
    from agentgym_budget.eval.recovery.summary import format_recovery_summary

    recovery = RecoveryConfig(
        envs=(env,),
        agents=tuple(agents.values()),
        states=config.recovery_states,
        ks=(0, 1, 2, 3),
        budgets=tuple(sorted({config.train_budget, max(config.budgets)})),
        samples=2,
        natural=0,
        show_budget=bool(config.train and config.train.show_budget),
        seed=config.seed,
        workers=config.workers,
    )
    return format_recovery_summary(run_recovery(recovery, out / "recovery", progress=progress).summary)


def _markdown(config: StudyConfig, study: dict[str, Any], texts: dict[str, str]) -> str:
    lines = [
        f"# Study on {config.env_id} ({config.env_kwargs}), held-out test tasks",
        "",
        f"Training budget T={config.train_budget}; BudgetMix budgets {list(config.budgets)}; "
        f"{config.eval_tasks} test tasks x {config.eval_samples} episodes per agent and budget.",
        "",
        "| agent | T | Pass@1 | 95% CI | tasks |",
        "|---|---|---|---|---|",
    ]
    for row in study["pass@1"]:
        lines.append(
            f"| {row['agent']} | {row['budget']} | {row['pass@1']:.3f} | [{row['low']:.3f}, {row['high']:.3f}] | "
            f"{row['tasks']} |"
        )
    lines += ["", "| difference | T | Pass@1 difference | 95% CI (paired) | tasks |", "|---|---|---|---|---|"]
    for row in study["differences"]:
        lines.append(
            f"| {row['pair']} | {row['budget']} | {row['diff']:+.3f} | [{row['low']:+.3f}, {row['high']:+.3f}] | "
            f"{row['tasks']} |"
        )
    times = ", ".join(f"{stage} {seconds:.0f} s" for stage, seconds in study["stage_wall_s"].items())
    lines += ["", f"Wall time: {study['total_wall_s']:.0f} s ({times}).", ""]
    lines += claims_markdown(study["claims"], config.training_seeds)
    for name, text in texts.items():
        lines += [f"## {name}", "", "```", text, "```", ""]
    return "\n".join(lines)
