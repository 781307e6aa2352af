"""Which weights of a scoring policy train, the frozen reference policy, and checkpoints of the trained weights.

:func:`prepare_policy` marks the trained weights (``train_blocks``: the top N blocks and the final norm, or
every weight; ``lora_rank``: LoRA adapters on those blocks' linear layers through ``peft``) and says where
a pass starts (:attr:`TrainedPolicy.start`: the first trained block, whose input the rollouts keep). The
reference policy of the KL term is the starting one: a frozen copy of the trained blocks (or of the whole
model), or the model with its adapters disabled.

Checkpoints hold the trained weights and the optimiser's state only (``torch.save``, read back with
``weights_only=True``: loading a checkpoint runs no code); the frozen rest comes from the starting model.

Example::

    policy = prepare_policy(model, ScoreSettings(train_blocks=2))
    policy.start  # 28 of SmolLM2's 30 blocks are frozen: passes start at block 28 from kept hidden states
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_budget.agents.scoring.packing import DecoderParts
from agentgym_budget.dependencies import require
from agentgym_budget.errors import DataError
from agentgym_budget.train.scoring.settings import ScoreSettings

__all__: list[str] = []

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""Linear layers of a block that get LoRA adapters (those the model has)."""


@dataclass
class TrainedPolicy:
    """A model prepared for training as a scoring policy.

    Attributes:
        model: The model (wrapped by ``peft`` with LoRA).
        parts: Its :class:`~agentgym_budget.agents.scoring.packing.DecoderParts`.
        start: The first trained block: rollouts keep the hidden states entering it (0: passes read token ids).
        parameters: The trained parameters, by name.
        lora: Whether the trained parameters are LoRA adapters.
    """

    model: Any
    parts: DecoderParts
    start: int
    parameters: dict[str, Any]
    lora: bool = False
    _reference: DecoderParts | None = field(default=None, repr=False)

    @property
    def capture(self) -> int | None:
        """The block whose input the rollouts keep (``None``: passes start from the token ids)."""
        return self.start or None

    def reference_parts(self) -> Any:
        """A context manager giving the parts of the starting policy (for the KL term)."""
        import contextlib

        if self.lora:
            return _disabled(self.model, self.parts)
        return contextlib.nullcontext(self._reference)

    def state(self) -> dict[str, Any]:
        """The trained parameters' values (detached copies)."""
        return {name: p.detach().clone() for name, p in self.parameters.items()}

    def load_state(self, values: dict[str, Any]) -> None:
        """Set the trained parameters.

        Raises:
            DataError: ``values`` are not this policy's trained parameters.
        """
        import torch

        if set(values) != set(self.parameters) or any(values[n].shape != p.shape for n, p in self.parameters.items()):
            raise DataError(
                "The checkpoint holds other trained weights than this run trains (another --train-blocks?)."
            )
        with torch.no_grad():
            for name, parameter in self.parameters.items():
                parameter.copy_(values[name])

    def merged(self) -> Any:
        """The model to save: LoRA adapters merged into a copy of the weights (the model itself otherwise)."""
        if not self.lora:
            return self.model
        return copy.deepcopy(self.model).merge_and_unload()


class _disabled:
    def __init__(self, model: Any, parts: DecoderParts) -> None:
        self.model, self.parts, self._context = model, parts, None

    def __enter__(self) -> DecoderParts:
        self._context = self.model.disable_adapter()
        self._context.__enter__()
        return self.parts

    def __exit__(self, *exc: Any) -> None:
        self._context.__exit__(*exc)


def _lora(model: Any, settings: ScoreSettings, start: int, depth: int) -> Any:
    peft = require("peft", extra="trl", feature="LoRA training of a scoring policy (--lora-rank)")
    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    targets = [t for t in LORA_TARGETS if t in names]
    config = peft.LoraConfig(
        r=settings.lora_rank,
        lora_alpha=2 * settings.lora_rank,
        lora_dropout=0.0,
        target_modules=targets,
        layers_to_transform=list(range(start, depth)),
        bias="none",
    )
    return peft.get_peft_model(model, config)


def prepare_policy(model: Any, settings: ScoreSettings, *, reference: bool = False) -> TrainedPolicy:
    """Mark ``model``'s trained weights per ``settings`` (module docstring); ``reference`` keeps a frozen copy of the
    starting policy for the KL term (LoRA needs none: its reference is the model with adapters disabled)."""
    parts = DecoderParts.of(model)
    depth = parts.depth
    start = depth - min(settings.train_blocks, depth) if settings.train_blocks else 0
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    if settings.lora_rank:
        model = _lora(model, settings, start, depth)
        parts = DecoderParts.of(model)
        trained = {n: p for n, p in model.named_parameters() if p.requires_grad}
        return TrainedPolicy(model, parts, start, trained, lora=True)
    kept = None
    if reference:
        kept = copy.deepcopy(model) if settings.train_blocks == 0 else None
        frozen = DecoderParts.of(kept) if kept is not None else None
        if frozen is None:
            layers = [*parts.layers[:start], *(copy.deepcopy(layer) for layer in parts.layers[start:])]
            frozen = DecoderParts(parts.embed, layers, copy.deepcopy(parts.norm), parts.rotary, parts.head)
    modules = [model] if settings.train_blocks == 0 else [*parts.layers[start:], parts.norm]
    for module in modules:
        for parameter in module.parameters():
            parameter.requires_grad_(True)
    trained = {n: p for n, p in model.named_parameters() if p.requires_grad}
    return TrainedPolicy(model, parts, start, trained, _reference=frozen if reference else None)


def save_checkpoint(policy: TrainedPolicy, optimizer: Any, directory: Path, step: int) -> Path:
    """Write ``directory/step-N/state.pt`` (trained weights, optimiser state, step) atomically; returns it."""
    import torch

    target = directory / f"step-{step}"
    temporary = directory / f".step-{step}.tmp"
    temporary.mkdir(parents=True, exist_ok=True)
    torch.save({"step": step, "weights": policy.state(), "optimizer": optimizer.state_dict()}, temporary / "state.pt")
    if target.exists():
        import shutil

        shutil.rmtree(target)
    temporary.rename(target)
    return target


def last_checkpoint(directory: Path) -> Path | None:
    """The checkpoint of the highest step in ``directory`` (``None`` without one)."""
    found = [p for p in directory.glob("step-*") if (p / "state.pt").is_file() and p.name[5:].isdigit()]
    return max(found, key=lambda p: int(p.name[5:])) if found else None


def load_checkpoint(policy: TrainedPolicy, optimizer: Any, checkpoint: Path) -> int:
    """Restore the trained weights and the optimiser from ``checkpoint``; returns its step.

    Raises:
        DataError: The file is not a checkpoint of this run.
    """
    import torch

    try:
        data = torch.load(checkpoint / "state.pt", weights_only=True)
        policy.load_state(data["weights"])
        optimizer.load_state_dict(data["optimizer"])
        return int(data["step"])
    except (KeyError, TypeError, ValueError, RuntimeError, OSError) as err:
        raise DataError(f"Cannot read the scoring checkpoint {checkpoint}: {err}") from err
