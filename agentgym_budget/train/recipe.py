"""Training recipes: ``sft`` (base policy), ``fixed`` (GRPO at one budget), ``budgetmix`` (GRPO, budget drawn per
episode), ``curriculum`` (GRPO, budgets growing in stages).

:func:`run_training` runs a :class:`TrainConfig` into a directory, phase by phase:

1. **SFT** (every recipe, unless ``init`` names a checkpoint to start RL from): the demonstrations
   (:func:`~agentgym_budget.train.trajectories.agent_conversations` of ``sft_agent`` on the first
   ``train_tasks`` tasks of the train split, won episodes only), then the base model (the built-in
   tiny Qwen2 with a tokenizer trained on those conversations, or ``model``: any local Hugging Face
   causal LM), fine-tuned with TRL's ``SFTTrainer``.
2. **RL** (``fixed``, ``budgetmix``): multi-turn GRPO (:func:`~agentgym_budget.train.grpo.run_grpo`)
   from the SFT result (or ``init``) on the same training tasks; ``fixed`` plays every episode at
   ``budget``, ``budgetmix`` draws each episode's budget from ``budgets`` with
   :class:`~agentgym_budget.wrappers.BudgetMix`, ``curriculum`` plays the budgets in increasing
   stages of equal length (the first ``1/len(budgets)`` of the steps at the smallest, and so on, as
   AgentGym-RL's ScalingInter-RL grows the interaction horizon); ``show_budget`` shows ``[Turns left: k of T]``,
   ``process_reward`` trains on the ProcessReward-shaped return.

Layout of ``out``::

    run.json                  the TrainConfig (a rerun must match it: it resumes); ``init`` relative to ``out``
    sft/demonstrations.jsonl  one record per demonstration episode played (won, turns, commands, ...)
    sft/base/                 the untrained base model and its tokenizer
    sft/checkpoints/          TRL checkpoints (checkpoint-N); sft/metrics.jsonl: loss by step
    sft/final/                the fine-tuned model (save_pretrained + agentgym_chat.json)
    rl/checkpoints/           GRPO checkpoints; rl/metrics.jsonl (reward, loss, ...), rl/episodes.jsonl
    rl/final/                 the RL model
    final/                    the recipe's result (a copy of the last phase's final/): load it as hf:OUT/final
    summary.json, training.png  (the plot is redrawn at every checkpoint)

A killed run rerun with the same arguments and ``out`` resumes: finished phases are skipped (their
``final/`` exists), an unfinished one continues from its last checkpoint.

Example::

    config = TrainConfig("TextWorld-CoinCollector-v0", env_kwargs="level=3", recipe="budgetmix", budgets=(4, 6, 8))
    summary = run_training(config, "runs/train-bm")
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from agentgym_budget.agents.hf_model import load_causal_lm
from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.errors import DataError, InvalidBudgetError, InvalidOptionError, RunConfigError, did_you_mean
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.runner.quiet import quiet_progress
from agentgym_budget.runner.store import same_path
from agentgym_budget.safe_json import read_json_file
from agentgym_budget.train.base_model import TinyModelSpec, build_base_model, save_model
from agentgym_budget.train.device import DeviceSettings, check_device
from agentgym_budget.train.grpo import GRPOSettings, run_grpo
from agentgym_budget.train.metrics import JsonlLog
from agentgym_budget.train.sft import SFTSettings, run_sft
from agentgym_budget.train.trajectories import Trajectories, agent_conversations
from agentgym_budget.wrappers.turn_budget import validate_budget

__all__ = ["RECIPES", "TrainConfig", "run_training"]

RECIPES = ("sft", "fixed", "budgetmix", "curriculum")
"""Training recipes (see the module docstring)."""


@dataclass(frozen=True)
class TrainConfig:
    """What to train and how.

    Attributes:
        env_id: A registered environment id.
        env_kwargs: Its constructor arguments (mapping or ``"k=v,..."``).
        recipe: One of :data:`RECIPES`.
        budget: Budget of every RL episode (``fixed``); with ``sft``, the demonstrations' budget (default 16).
        budgets: Budgets drawn per episode (``budgetmix``) or played in increasing stages (``curriculum``).
        show_budget: Show the remaining turns in every observation (demonstrations and RL alike).
        process_reward: RL on the ProcessReward-shaped return instead of the family's reward.
        model: The base policy (default: the built-in tiny model): a local Hugging Face causal LM directory, a
            ``.gguf`` file or a named model such as ``smollm2-135m`` (:mod:`agentgym_budget.agents.pretrained`).
        init: A checkpoint directory (e.g. an ``sft`` run's ``final``) to start RL from; skips SFT.
        train_tasks: Tasks of the train split used (its first ``train_tasks``). With 40 tasks (80
            demonstrations) the default tiny model memorised them and never read the observation (it
            answered the same direction in every room, held-out greedy accuracy of moves 0.15 to 0.23
            after 150 or 350 SFT steps); with 100 tasks and 350 steps it reads it (0.47).
        sft_agent: The scripted agent whose won episodes are the demonstrations.
        sft_mask_errors: Leave the demonstrator's errors (commands that were not the expert's action in their
            state) out of the SFT loss: the model still reads the states they lead to and learns the recovery.
        sft_episodes_per_task: Demonstration episodes per task.
        tiny: Size of the built-in tiny model.
        sft: SFT hyper-parameters.
        grpo: GRPO hyper-parameters.
        seed: Seed of everything (data, weights, sampling).
        report_to: Loggers of ``transformers`` that get the logs too (e.g. ``("tensorboard",)``: events in
            ``sft/checkpoints/runs`` and ``rl/checkpoints/runs``), beside ``metrics.jsonl`` and ``training.png``.
        device: Where training runs (:class:`~agentgym_budget.train.device.DeviceSettings`: CPU by default; CUDA,
            bf16, vLLM colocate generation). Recorded in ``run.json`` only when not the CPU default.

    Raises:
        InvalidOptionError: An unknown recipe, ``budget`` / ``budgets`` missing for their recipe or given
            to the other one, ``model`` together with ``init``.
        InvalidBudgetError: A budget is not a positive integer.

    Example:
        >>> TrainConfig("TextWorld-CoinCollector-v0", recipe="budgetmx")
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: Unknown recipe 'budgetmx'. Did you mean 'budgetmix'? Recipes: sft, fixed, budgetmix, curriculum.
        >>> TrainConfig("TextWorld-CoinCollector-v0", recipe="budgetmix", budgets=(8, 4)).session_config().budgets
        (4, 8)
    """

    env_id: str
    env_kwargs: Any = ()
    recipe: str = "budgetmix"
    budget: int | None = None
    budgets: tuple[int, ...] | None = None
    show_budget: bool = False
    process_reward: bool = False
    model: str | None = None
    init: str | None = None
    train_tasks: int = 100
    sft_agent: str = "noisy-expert-recover:eps=0.2"
    sft_mask_errors: bool = True
    sft_episodes_per_task: int = 2
    tiny: TinyModelSpec = field(default_factory=TinyModelSpec)
    sft: SFTSettings = field(default_factory=lambda: SFTSettings(steps=350, save_steps=50))
    grpo: GRPOSettings = field(default_factory=GRPOSettings)
    seed: int = 0
    report_to: tuple[str, ...] = ()
    device: DeviceSettings = field(default_factory=DeviceSettings)

    def __post_init__(self) -> None:
        if self.recipe not in RECIPES:
            raise InvalidOptionError(
                f"Unknown recipe {self.recipe!r}.{did_you_mean(str(self.recipe), RECIPES)} Recipes: {', '.join(RECIPES)}."
            )
        if self.budget is not None:
            object.__setattr__(self, "budget", validate_budget(self.budget, "for --budget"))
        if self.budgets is not None:
            values = tuple(sorted({validate_budget(b, "in --budgets") for b in self.budgets}))
            if not values:
                raise InvalidBudgetError("--budgets is empty: give comma-separated positive integers like 4,6,8.")
            object.__setattr__(self, "budgets", values)
        if self.recipe in ("budgetmix", "curriculum") and (self.budgets is None or self.budget is not None):
            raise InvalidOptionError(
                f"Recipe {self.recipe} plays several budgets: give --budgets 4,6,8 (not --budget)."
            )
        if self.recipe == "fixed" and (self.budget is None or self.budgets is not None):
            raise InvalidOptionError("Recipe fixed plays every episode at one budget: give --budget N (not --budgets).")
        if self.recipe == "sft" and self.budgets is not None:
            raise InvalidOptionError(
                "Recipe sft has no RL phase: --budgets does not apply (use --budget for the data)."
            )
        if self.recipe == "sft" and self.init is not None:
            raise InvalidOptionError(
                "Recipe sft trains the base policy; --init (start RL from a checkpoint) needs fixed or budgetmix."
            )
        if self.model is not None and self.init is not None:
            raise InvalidOptionError(
                "Give --model (a base policy to fine-tune first) or --init (start RL from it), not both."
            )
        for name in ("train_tasks", "sft_episodes_per_task"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidOptionError(f"TrainConfig: {name} must be a positive integer, got {value!r}.")
        session = SessionConfig(self.env_id, self.env_kwargs)  # unknown env ids and bad arguments fail here
        object.__setattr__(self, "env_id", session.env_id)
        object.__setattr__(self, "env_kwargs", session.env_kwargs)

    @property
    def largest_budget(self) -> int:
        """The largest budget of an episode (the demonstrations are played with it)."""
        if self.budgets:
            return max(self.budgets)
        return self.budget if self.budget is not None else 16

    @property
    def budget_stages(self) -> tuple[int, ...] | None:
        """The budgets of the ``curriculum`` recipe's stages, in order (``None`` for the other recipes)."""
        return self.budgets if self.recipe == "curriculum" else None

    def session_config(self) -> SessionConfig:
        """The RL environment: the train split with the recipe's budget policy and reward."""
        return SessionConfig(
            self.env_id,
            self.env_kwargs,
            split="train",
            max_turns=self.largest_budget,
            budgets=self.budgets if self.recipe == "budgetmix" else None,
            show_budget=self.show_budget,
            reward="process" if self.process_reward else "env",
        )

    def chat_format(self) -> ChatFormat:
        """The format recorded beside the trained weights."""
        return ChatFormat(show_budget=self.show_budget, env=self.session_config().ref.label)

    def to_json(self) -> dict[str, Any]:
        """JSON form (written to ``run.json``)."""
        data = asdict(self)
        data["env_kwargs"] = dict(self.env_kwargs)
        data["budgets"] = list(self.budgets) if self.budgets else None
        data.pop("report_to")  # where logs also go is not a setting of the run: a resume may change it
        if self.device.is_default:  # CPU runs keep the run.json they had before devices were options
            data.pop("device")
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrainConfig:
        """The config :meth:`to_json` wrote."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["tiny"] = TinyModelSpec(**values.get("tiny", {}))
        values["sft"] = SFTSettings(**values.get("sft", {}))
        values["grpo"] = GRPOSettings(**values.get("grpo", {}))
        values["device"] = DeviceSettings(**values.get("device", {}))
        if values.get("budgets") is not None:
            values["budgets"] = tuple(values["budgets"])
        values["report_to"] = tuple(values.get("report_to", ()))
        values.setdefault("sft_mask_errors", False)  # runs written before masking trained on every turn
        return cls(**values)


def _check_run(config: TrainConfig, out: Path) -> None:
    """Pin ``config`` in ``out/run.json``, or check that a run there was started with the same settings.

    ``init`` is stored relative to ``out`` (a study's RL runs: ``../sft/final``), so a run directory moved
    together with its starting checkpoint resumes; one stored as given (runs before this) still matches
    when it names the same directory, and is rewritten in the relative form.
    """
    path = out / "run.json"
    wanted = config.to_json()
    if config.init is not None:
        wanted["init"] = os.path.relpath(Path(config.init).resolve(), out.resolve())
    if path.exists():
        found = read_json_file(path, what="training run", expected=dict)
        if found != wanted and {**found, "init": wanted["init"]} == wanted and same_path(found["init"], config.init):
            path.write_text(json.dumps(wanted, indent=2, sort_keys=True) + "\n")
            return
        if found != wanted:
            changed = sorted(k for k in set(found) | set(wanted) if found.get(k) != wanted.get(k))
            raise RunConfigError(
                f"{out} holds a training run with other settings ({', '.join(changed)} differ); rerun with the same "
                "arguments to resume it, or give another --out."
            )
        return
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(wanted, indent=2, sort_keys=True) + "\n")


def _demonstrations(config: TrainConfig, directory: Path, progress: bool) -> Trajectories:
    path = directory / "demonstrations.json"
    if path.exists():
        stored = read_json_file(path, what="training demonstrations", expected=dict)
        if not isinstance(stored.get("conversations"), list) or not isinstance(stored.get("records"), list):
            raise DataError(f"training demonstrations: {path} lacks the lists 'conversations' and 'records'.")
        return Trajectories(stored["conversations"], stored["records"])
    data = agent_conversations(
        replace(config.session_config(), budgets=None),
        config.sft_agent,
        tasks=range(config.train_tasks),
        episodes_per_task=config.sft_episodes_per_task,
        budget=config.largest_budget,
        seed=config.seed,
        progress=progress,
    )
    directory.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"conversations": data.conversations, "records": data.records}))
    temporary.replace(path)
    log = JsonlLog(directory / "demonstrations.jsonl")
    for record in data.records:
        log.append({"step": 0, **{k: v for k, v in record.items() if k != "stats"}})
    return data


def _base(config: TrainConfig, data: Trajectories, directory: Path) -> tuple[Any, Any]:
    base = directory / "base"
    if (base / "config.json").is_file():
        return load_causal_lm(base)
    if config.model is not None:
        from agentgym_budget.agents.pretrained import resolve_model

        model, tokenizer = load_causal_lm(resolve_model(config.model))
    else:
        model, tokenizer = build_base_model(
            data.conversations, config.tiny, chat_format=config.chat_format(), seed=config.seed
        )
    save_model(model, tokenizer, base, config.chat_format())
    # Train what a resumed run (and evaluation) loads: a tokenizer built in memory and the same one
    # reloaded from disk split some texts differently (" 1" into 1 or 2 tokens), so resuming diverged.
    return load_causal_lm(base)


def _plot_on_save(out: Path, plots: bool) -> list[Any]:
    """A callback redrawing ``out/training.png`` at every checkpoint, so a long run can be watched."""
    if not plots:
        return []
    from transformers import TrainerCallback

    from agentgym_budget.train.report import training_plot

    class PlotOnSave(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            training_plot(out, out / "training.png")

    return [PlotOnSave()]


def _sft_phase(config: TrainConfig, out: Path, progress: bool, plots: bool) -> Path:
    directory = out / "sft"
    final = directory / "final"
    if (final / "config.json").is_file():
        return final
    data = _demonstrations(config, directory, progress)
    model, tokenizer = _base(config, data, directory)
    model.train()
    run_sft(
        model,
        tokenizer,
        data.conversations,
        config.sft,
        out=directory,
        seed=config.seed,
        progress=progress,
        callbacks=_plot_on_save(out, plots),
        report_to=config.report_to,
        device=config.device,
        masked_turns=data.off_expert_turns if config.sft_mask_errors else None,
    )
    _save_final(model, tokenizer, final, config.chat_format())
    return final


def _rl_phase(config: TrainConfig, start: Path, out: Path, progress: bool, plots: bool) -> Path:
    directory = out / "rl"
    final = directory / "final"
    if (final / "config.json").is_file():
        return final
    model, tokenizer = load_causal_lm(start)
    model.train()
    run_grpo(
        model,
        tokenizer,
        config.session_config(),
        config.grpo,
        tasks=range(config.train_tasks),
        out=directory,
        seed=config.seed,
        progress=progress,
        callbacks=_plot_on_save(out, plots),
        budget_stages=config.budget_stages,
        report_to=config.report_to,
        device=config.device,
    )
    _save_final(model, tokenizer, final, config.chat_format())
    return final


def _save_final(model: Any, tokenizer: Any, final: Path, chat_format: ChatFormat) -> None:
    temporary = final.with_name(final.name + ".tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    save_model(model, tokenizer, temporary, chat_format)
    shutil.rmtree(final, ignore_errors=True)
    temporary.rename(final)


def _copy_final(source: Path, final: Path) -> None:
    temporary = final.with_name(final.name + ".tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    shutil.copytree(source, temporary)
    shutil.rmtree(final, ignore_errors=True)
    temporary.rename(final)


def run_training(config: TrainConfig, out: str | Path, *, progress: bool = True, plots: bool = True) -> dict[str, Any]:
    """Run (or resume) ``config`` into ``out``; returns the summary written to ``out/summary.json``.

    Raises:
        RunConfigError: ``out`` holds a run with other settings.
        InvalidOptionError: ``init`` is not a model directory, or ``device`` asks for a GPU this machine lacks.
        MissingDependencyError: The ``trl`` extra is missing, or ``vllm`` for vLLM generation.
    """
    from agentgym_budget.train.report import summarize_training, training_plot

    check_device(config.device)
    out = Path(out)
    _check_run(config, out)
    began = time.perf_counter()
    if config.init is not None and not (Path(config.init) / "config.json").is_file():
        raise InvalidOptionError(f"--init {config.init!r} is not a model directory (no config.json).")
    with quiet_progress(not progress):
        start = Path(config.init) if config.init is not None else _sft_phase(config, out, progress, plots)
        last = start if config.recipe == "sft" else _rl_phase(config, start, out, progress, plots)
        _copy_final(last, out / "final")
    summary = summarize_training(out)
    summary["wall_s_last_invocation"] = round(time.perf_counter() - began, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    if plots:
        training_plot(out, out / "training.png")
    return summary
