"""What to train and how: :class:`TrainConfig`, validated when made, and the :data:`RECIPES` it names.

:func:`~agentgym_budget.train.recipe.run_training` runs one (see :mod:`agentgym_budget.train.recipe` for the
recipes and a run's layout); ``run.json`` holds :meth:`TrainConfig.to_json`, which
:meth:`TrainConfig.from_json` reads back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.errors import InvalidBudgetError, InvalidOptionError, did_you_mean
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.train.base_model import TinyModelSpec
from agentgym_budget.train.device import DeviceSettings
from agentgym_budget.train.grpo import GRPOSettings
from agentgym_budget.train.scoring.settings import POLICIES, ScoreSettings
from agentgym_budget.train.sft import SFTSettings
from agentgym_budget.wrappers.turn_budget import validate_budget

__all__ = ["RECIPES", "TrainConfig"]

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
        policy: How the trained model plays (:data:`~agentgym_budget.train.scoring.settings.POLICIES`):
            ``"generate"`` (its command is a generated ``act`` call; TRL's GRPO) or ``"score"`` (it scores the
            admissible commands: :mod:`agentgym_budget.train.scoring`; ``grpo`` gives its RL schedule, credit and
            rollouts, ``sft`` its SFT steps, batch and learning rate). Recorded in ``run.json`` when ``"score"``.
        score: What is specific to a scoring policy's training (which weights, PPO, exploration).

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
    policy: str = "generate"
    score: ScoreSettings = field(default_factory=ScoreSettings)

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise InvalidOptionError(
                f"Unknown policy {self.policy!r}.{did_you_mean(str(self.policy), POLICIES)} Policies: {', '.join(POLICIES)}."
            )
        if self.policy == "generate":
            self.grpo.check_trl_credit()
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
        if self.policy == "generate":  # generation runs keep the run.json they had before scoring policies
            data.pop("policy")
            data.pop("score")
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
        values["score"] = ScoreSettings(**values.get("score", {}))
        if values.get("budgets") is not None:
            values["budgets"] = tuple(values["budgets"])
        values["report_to"] = tuple(values.get("report_to", ()))
        values.setdefault("sft_mask_errors", False)  # runs written before masking trained on every turn
        return cls(**values)
