"""What is specific to training a scoring policy: which weights train, the PPO update, exploration, normalisation.

The rest of a scoring run is the generation path's: the recipe, budgets, curriculum stages, process reward
(:class:`~agentgym_budget.train.config.TrainConfig`), and the RL schedule, credit, rollouts and dynamic
sampling (:class:`~agentgym_budget.train.grpo.GRPOSettings`: ``steps``, ``episodes_per_step``,
``num_generations``, ``learning_rate``, ``temperature``, ``beta``, ``credit``, ``gamma``, ``step_weight``,
``rollouts``, ``dynamic_sampling``, ``resample_rounds``, ``save_steps``). SFT's steps, batch (demonstration
episodes a step) and learning rate are :class:`~agentgym_budget.train.sft.SFTSettings`'.

Example:
    >>> ScoreSettings(train_blocks=-1)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: ScoreSettings: train_blocks must be an integer >= 0, got -1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from agentgym_budget.agents.scoring.policy import check_normalise
from agentgym_budget.errors import InvalidOptionError

__all__ = ["ScoreSettings"]

POLICIES = ("generate", "score")
"""How a trained model plays: it generates its command (``hf:``), or it scores the admissible ones (``score:``)."""

SCORE_RL_DEFAULTS: dict[str, Any] = {
    "learning_rate": 1e-4,
    "num_generations": 8,
    "episodes_per_step": 32,
    "steps": 100,
    "beta": 0.0,
    "temperature": 1.0,
    "save_steps": 10,
}
"""GRPO settings a scoring run starts from (the flags override them): the pilot's lr 1e-4 and groups of 8."""

SCORE_SFT_DEFAULTS: dict[str, Any] = {"steps": 20, "batch_size": 8, "learning_rate": 1e-4, "save_steps": 10}
"""SFT settings a scoring run starts from (the flags override them): on Coin Collector level 3 (100 tasks, top 2
blocks of SmolLM2) a base that wins a middling share at T = 4 (greedy 10 of 32 held-out tasks)."""


@dataclass(frozen=True)
class ScoreSettings:
    """How a scoring policy trains (see the module docstring for what it shares with the generation path).

    Attributes:
        train_blocks: The top N decoder blocks and the final norm train (0: every weight). The rollouts keep the
            hidden states entering block ``depth - N``, so the update recomputes only the trained blocks.
        lora_rank: Train LoRA adapters of this rank on the trained blocks' linear layers instead of their
            weights (``peft``; 0: the weights themselves). Merged into the weights when saved.
        epochs: PPO epochs per batch of rollouts (each one optimiser step over the whole batch).
        clip: PPO's ratio clip ``epsilon``: the objective is clipped outside ``[1 - clip, 1 + clip]``.
        epsilon: Exploration: this share of the policy is spread uniformly over the candidates (rollouts and
            loss alike); the other exploration setting is ``GRPOSettings.temperature``.
        normalise: A candidate's score: ``word``, ``mean`` or ``sum`` of its token log-probs.
        batch_size: Most candidates scored in one forward pass of the rollouts.
        update_rows: Rollouts per forward / backward pass of the update (bounds memory; the step accumulates).
        history: Show the episode's past turns in the prompt (append-only, each turn reads only its new tokens);
            without, each prompt is the goal and the current observation (saved in the checkpoint's format).

    Raises:
        InvalidOptionError: A value out of range.
    """

    train_blocks: int = 2
    lora_rank: int = 0
    epochs: int = 2
    clip: float = 0.2
    epsilon: float = 0.0
    normalise: str = "word"
    batch_size: int = 64
    update_rows: int = 8
    history: bool = True

    def __post_init__(self) -> None:
        for name in ("train_blocks", "lora_rank"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidOptionError(f"ScoreSettings: {name} must be an integer >= 0, got {value!r}.")
        for name in ("epochs", "batch_size", "update_rows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidOptionError(f"ScoreSettings: {name} must be a positive integer, got {value!r}.")
        if not 0 < self.clip < 1 or not 0 <= self.epsilon < 1:
            raise InvalidOptionError(
                f"ScoreSettings: need 0 < clip < 1 and 0 <= epsilon < 1; got clip={self.clip}, epsilon={self.epsilon}."
            )
        check_normalise(self.normalise)

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)
