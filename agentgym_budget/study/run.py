"""The study: an SFT base and RL arms trained from it, then their evaluation on held-out tasks, in one run.

:func:`run_study` runs, each stage resumable (a rerun with the same ``out`` continues):

1. ``sft/``: recipe ``sft`` (the base policy, see :mod:`agentgym_budget.train.recipe`);
2. one directory per RL arm and training seed (``fixed/``, ``fixed@1/``, ``budgetmix/``, ``curriculum/``, ...;
   :mod:`agentgym_budget.study.arms`), each RL from ``sft/final`` on the same tasks and steps, up to ``workers``
   runs side by side (:mod:`agentgym_budget.study.training`);
3. ``passkt/``: the Pass@(K,T) grid of every checkpoint as ``hf:DIR`` agents (``score:DIR`` when the study trains a
   scoring policy, ``policy="score"``) on the first
   ``eval_tasks`` tasks of the **test** split (never trained on), budgets ``eval_budgets``;
4. ``probe/`` and ``recovery/``: single-step probes (at discriminating states the agents visited) and
   recovery probes of the same agents on the test split (:mod:`agentgym_budget.study.evaluation`).

It writes ``study.json`` (settings, the Pass@1 table at every budget with its interval, the
step-value distribution of the probes, the ``claims`` with their verdicts:
:mod:`agentgym_budget.study.claims`), ``study.md`` (the tables, claims and the text summaries of
the three evaluations, with the wall and CPU time of every stage, and a provenance section when its runs were
produced by different engines, libraries or models), ``provenance.json`` (:mod:`agentgym_budget.runner.provenance`;
each run below has its own), two figures (``pass_at_1.png``: Pass@1 against
the budget and each RL run minus the base; ``training.png``: SFT loss, GRPO return and groups with a signal per
step; :mod:`agentgym_budget.study.figures`) and ``timing.json`` (per stage: wall
seconds, CPU seconds of the process and its workers, load averages). ``study.json`` holds no time: with
the same settings and seed it is byte-identical whatever the load, ``workers`` or the interleaving of
episodes (up to the study directory's path inside the agent names).

Example::

    from agentgym_budget.study.run import StudyConfig, run_study

    summary = run_study(StudyConfig(), "runs/study")
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from agentgym_budget.errors import InvalidOptionError, RunConfigError
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.runner.provenance import read_provenance, warn_if_different, write_provenance
from agentgym_budget.runner.quiet import quiet_progress
from agentgym_budget.study.arms import DEFAULT_ARMS, arm_config, check_arms
from agentgym_budget.study.claims import study_claims
from agentgym_budget.study.evaluation import (
    passkt_stage,
    passkt_tables,
    probe_stage,
    recovery_stage,
    relocate_logs,
    step_value_distribution,
    turn_quality,
)
from agentgym_budget.study.figures import study_figures
from agentgym_budget.study.report import study_markdown
from agentgym_budget.study.timing import stage_times, timed
from agentgym_budget.study.training import train_runs
from agentgym_budget.train.config import TrainConfig
from agentgym_budget.train.grpo import GRPOSettings
from agentgym_budget.train.recipe import training_provenance
from agentgym_budget.train.scoring.settings import POLICIES, SCORE_RL_DEFAULTS, SCORE_SFT_DEFAULTS
from agentgym_budget.train.trajectories import DEMONSTRATIONS

__all__ = ["StudyConfig", "run_study"]

STAGES = ("sft", "fixed", "budgetmix", "curriculum", "budgetmix_turn", "budgetmix_process", "passkt", "probe",
          "recovery")  # fmt: skip
"""The stages of a study, in order (an RL arm the study does not train is skipped)."""

VOLATILE = ("wall_s_last_invocation", "elapsed_s")
"""Keys of the training summaries that measure time: kept out of ``study.json`` (they are in ``timing.json``)."""


@dataclass(frozen=True)
class StudyConfig:
    """Settings of a study (defaults: the CPU study of the README; sizes: :mod:`~agentgym_budget.study.presets`).

    Attributes:
        env_id: Environment id.
        env_kwargs: Its arguments.
        train_budget: The fixed recipe's budget, and the budget the table compares at.
        budgets: The BudgetMix and curriculum recipes' budgets (default 4-6 on Coin Collector level 3, whose
            routes are 3 turns: 1.3x-2x the optimal route).
        eval_budgets: Budgets of the Pass@(K,T) grid (default 3-9: 1x-3x the route, with 3 and 9 outside the
            BudgetMix range: the ``budgetmix_robustness`` claim's out-of-range budgets).
        eval_ks: Breadths of the grid.
        eval_samples: Episodes per (agent, task, budget).
        eval_tasks: Held-out tasks (the first of the test split).
        probe_states: Agent episodes of the Pass@(K,T) grid walked for single-step probe states (up to 4 each,
            kept where the candidate actions differ in value; 0: skip the stage).
        recovery_states: States of the recovery probes (0: skip the stage).
        train: The training settings shared by the recipes (its recipe and budgets are set per stage).
        arms: The RL arms (:mod:`~agentgym_budget.study.arms`; ``fixed`` is required).
        model: The base policy SFT fine-tunes (``None``: the built-in tiny model; a local Hugging Face directory
            or a named model such as ``smollm2-135m``). Only applies when ``train`` is not given.
        workers: Worker processes of the RL runs (trained side by side: :mod:`~agentgym_budget.study.training`)
            and of the evaluation.
        seed: Seed of everything.
        training_seeds: RL runs per RL recipe (run ``i`` trains with seed ``seed + i`` into ``NAME@i``; run 0
            into ``NAME``); the claims' intervals include their spread. SFT is trained once.
        demonstrations: What SFT imitates, one of :data:`DEMONSTRATIONS` (default ``masked``: the noisy expert's
            wins with its errors left out of the loss). Only applies when ``train`` is not given.
        policy: How the trained models play: ``generate`` (``hf:`` agents) or ``score`` (``score:`` agents that
            choose among the admissible commands; SFT and RL start from the scoring defaults of
            :mod:`agentgym_budget.train.scoring.settings`). Only applies when ``train`` is not given (then
            ``train.policy`` decides).

    Raises:
        InvalidOptionError: ``train_budget`` not in ``eval_budgets``, a bad number, or bad ``arms``.

    Example:
        >>> StudyConfig(arms=("fixed", "curriculum")).arms
        ('fixed', 'curriculum')
        >>> StudyConfig(train_budget=7)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: train_budget=7 must be one of eval_budgets [3, 4, 5, 6, 9] (the table compares the agents at the training budget).
    """

    env_id: str = "TextWorld-CoinCollector-v0"
    env_kwargs: Any = "level=3"
    train_budget: int = 6
    budgets: tuple[int, ...] = (4, 5, 6)
    eval_budgets: tuple[int, ...] = (3, 4, 5, 6, 9)
    eval_ks: tuple[int, ...] = (1, 2, 4)
    eval_samples: int = 4
    eval_tasks: int = 30
    probe_states: int = 15
    recovery_states: int = 10
    train: TrainConfig | None = None
    workers: int = 2
    seed: int = 0
    training_seeds: int = 1
    demonstrations: str = "masked"
    arms: tuple[str, ...] = DEFAULT_ARMS
    model: str | None = None
    policy: str = "generate"

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
        env_kwargs = dict(EnvRef.parse(self.env_id, self.env_kwargs or None).kwargs)
        object.__setattr__(self, "arms", check_arms(self.arms, self.env_id, env_kwargs))
        if self.policy not in POLICIES:
            raise InvalidOptionError(f"StudyConfig: policy must be one of {', '.join(POLICIES)}, got {self.policy!r}.")
        if self.demonstrations not in DEMONSTRATIONS:
            raise InvalidOptionError(
                f"StudyConfig: demonstrations must be one of {', '.join(DEMONSTRATIONS)}, got {self.demonstrations!r}."
            )
        if max(self.eval_ks) > self.eval_samples:
            raise InvalidOptionError(
                f"StudyConfig: eval_ks {list(self.eval_ks)} exceed eval_samples={self.eval_samples}."
            )
        if self.train is None:
            object.__setattr__(self, "train", self._default_train())

    def _default_train(self) -> TrainConfig:
        """The training settings of a study given no ``train``: the SFT recipe on ``model``, as ``policy`` plays."""
        train = TrainConfig(
            self.env_id,
            self.env_kwargs,
            recipe="sft",
            budget=max(self.budgets),
            seed=self.seed,
            model=self.model,
            sft_agent=DEMONSTRATIONS[self.demonstrations][0],
            sft_mask_errors=DEMONSTRATIONS[self.demonstrations][1],
            policy=self.policy,
        )
        if self.policy != "score":
            return train
        return replace(
            train, sft=replace(train.sft, **SCORE_SFT_DEFAULTS), grpo=replace(train.grpo, **SCORE_RL_DEFAULTS)
        )

    def recipe(self, name: str, sft_final: Path | None = None, index: int = 0) -> TrainConfig:
        """The :class:`TrainConfig` of the stage ``name``: ``sft``, or an RL arm starting from ``sft_final``.

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
        return arm_config(self.train, name, train_budget=self.train_budget, budgets=self.budgets, init=init)

    def to_json(self) -> dict[str, Any]:
        """JSON form (``arms``, ``model`` and ``policy`` only when not the defaults, so earlier studies still resume).

        ``workers`` is left out: how many processes train and evaluate changes no result (a resume may change it).
        """
        data = asdict(self)
        data.pop("workers")
        data["train"] = self.train.to_json() if self.train else None
        if self.arms == ("fixed", "budgetmix"):  # the arms of every study before curriculum was one
            data.pop("arms")
        if self.model is None:
            data.pop("model")
        if self.policy == "generate":  # the policy of every study before scoring policies
            data.pop("policy")
        return data


def run_names(config: StudyConfig) -> list[tuple[str, str, int]]:
    """``(recipe, directory, index)`` of every training run: SFT once, each RL arm ``training_seeds`` times."""
    return [("sft", "sft", 0)] + [
        (name, name if index == 0 else f"{name}@{index}", index)
        for name in config.arms
        for index in range(config.training_seeds)
    ]


def _agents(out: Path, config: StudyConfig) -> dict[str, str]:
    kind = "score" if config.train is not None and config.train.policy == "score" else "hf"
    return {directory: f"{kind}:{out / directory / 'final'}" for _, directory, _ in run_names(config)}


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
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise InvalidOptionError(f"Unknown study stage(s) {unknown}; stages are {', '.join(STAGES)}.")
    out = Path(out)
    _check_study(config, out)
    write_provenance(out, **training_provenance(config.recipe("sft")))
    sft_final = out / "sft" / "final"
    runs = [(d, config.recipe(name, sft_final, index)) for name, d, index in run_names(config) if name in stages]
    train_runs(runs, out, workers=config.workers, progress=progress)
    agents = _agents(out, config)
    relocate_logs(out, agents)
    held_out = EnvRef.parse(config.env_id, config.env_kwargs or None, "test")
    texts: dict[str, str] = {}
    evaluations = (("passkt", passkt_stage, True), ("probe", probe_stage, config.probe_states),
                   ("recovery", recovery_stage, config.recovery_states))  # fmt: skip
    with quiet_progress(not progress):
        for stage, run, wanted in evaluations:
            if stage in stages and wanted:
                texts[stage] = timed(out, stage, lambda r=run: r(config, held_out, agents, out, progress))
    table, differences = passkt_tables(config, agents, out)
    study = {
        "config": config.to_json(),
        "agents": agents,
        "training": {name: _training_summary(out / name) for name in agents if (out / name / "summary.json").exists()},
        "pass@1": table,
        "differences": differences,
        "probe_step_values": step_value_distribution(out, agents),
        "turns": turn_quality(out, agents, held_out),
        "claims": study_claims(out, config, agents),
    }
    (out / "study.json").write_text(json.dumps(study, indent=2, sort_keys=True) + "\n")
    times = stage_times(out)
    figures = study_figures(out, config, study, times)
    markdown = study_markdown(config, study, texts, times, figures)
    (out / "study.md").write_text(markdown + _provenance_section(out, config))
    return study


def _provenance_section(out: Path, config: StudyConfig) -> str:
    """Warn when the study's runs were produced by different engines, libraries or models; their list for study.md."""
    names = [".", *(directory for _, directory, _ in run_names(config)), "passkt", "probe", "recovery"]
    lines = warn_if_different({name: read_provenance(out / name) for name in names if (out / name).is_dir()})
    if not lines:
        return ""
    items = "".join(f"- {line}\n" for line in lines)
    return f"\n## Provenance\n\nThe runs combined here were not produced alike (their provenance.json):\n\n{items}"


def _training_summary(directory: Path) -> dict[str, Any]:
    """A run's ``summary.json`` without its times (:data:`VOLATILE`)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
        return value

    return strip(json.loads((directory / "summary.json").read_text()))
