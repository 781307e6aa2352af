"""What an episode session plays: :class:`SessionConfig` (env, budget, reward) and the per-episode fields.

Every RL-library adapter is configured by a :class:`SessionConfig` and reads the fields of one
episode (a dataset row, OpenEnv reset arguments, SkyRL ``extra_info``) with :func:`episode_fields`;
unknown fields raise :class:`~agentgym_budget.errors.InvalidOptionError`. How a session plays them
is :mod:`agentgym_budget.integrations.session`.

Example:
    >>> SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=1", max_turns=3).label
    'TextWorld-CoinCollector-v0(level=1) max_turns=3 reward=env'
    >>> episode_fields({"task": 3, "seed": 7})
    {'task': 3, 'seed': 7}
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_budget.errors import InvalidBudgetError, InvalidOptionError, did_you_mean
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.wrappers import BudgetMix, ProcessReward, TurnBudget
from agentgym_budget.wrappers.process_reward import TERMINAL_POTENTIALS
from agentgym_budget.wrappers.turn_budget import validate_budget

__all__ = ["SessionConfig", "episode_fields"]

EPISODE_FIELDS = ("task", "seed", "max_turns", "show_budget")
"""Per-episode fields: ``task`` (id or index), ``seed`` (int), ``max_turns`` (int), ``show_budget`` (bool)."""

REWARDS = ("env", "process")
"""Reward sources: the family's own reward, or :class:`~agentgym_budget.wrappers.ProcessReward` shaping."""

_PROCESS_REWARD_KEYS = ("coefficient", "gamma", "invalid_penalty", "terminal_potential")


def _choice(value: object, allowed: Iterable[str], what: str) -> str:
    allowed = tuple(allowed)
    if value not in allowed:
        hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
        raise InvalidOptionError(f"Unknown {what} {value!r}.{hint} Expected one of: {', '.join(allowed)}.")
    return str(value)


def _boolean(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidOptionError(f"{what} must be true or false, got {value!r} ({type(value).__name__}).")
    return value


def _index(value: object) -> bool:
    """``value`` is an integer >= 0 and not a bool (JSON ``true`` is no seed, ``-1`` no task index on the wire)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def episode_fields(fields: Mapping[str, Any], *, ignore: Iterable[str] = ()) -> dict[str, Any]:
    """Validate the per-episode fields of a dataset row or a reset call (see :data:`EPISODE_FIELDS`).

    ``None`` values count as absent. Keys in ``ignore`` are dropped (e.g. a dataset's ``prompt``).

    Raises:
        InvalidOptionError: An unknown field, or a field of the wrong type.
        InvalidBudgetError: ``max_turns`` is not a positive integer.

    Example:
        >>> episode_fields({"task": 3, "seed": 7, "prompt": "..."}, ignore={"prompt"})
        {'task': 3, 'seed': 7}
        >>> episode_fields({"max_turn": 5})
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: Unknown episode field 'max_turn'. Did you mean 'max_turns'? Episode fields are: task (id or index), seed (int), max_turns (int), show_budget (bool).
    """
    ignored = set(ignore)
    result: dict[str, Any] = {}
    for key, value in fields.items():
        if key in ignored:
            continue
        if key not in EPISODE_FIELDS:
            raise InvalidOptionError(
                f"Unknown episode field {key!r}.{did_you_mean(str(key), EPISODE_FIELDS)} Episode fields are: "
                "task (id or index), seed (int), max_turns (int), show_budget (bool)."
            )
        if value is None:
            continue
        if key == "task" and not isinstance(value, str) and not _index(value):
            raise InvalidOptionError(
                f"Episode field 'task' must be a task id (str) or index (int >= 0), got {value!r}."
            )
        if key == "seed" and not _index(value):
            raise InvalidOptionError(f"Episode field 'seed' must be an integer >= 0, got {value!r}.")
        if key == "max_turns":
            value = validate_budget(value, "in the episode field 'max_turns'")
        if key == "show_budget":
            value = _boolean(value, "Episode field 'show_budget'")
        result[key] = int(value) if key in ("seed", "task") and not isinstance(value, str) else value
    return result


@dataclass(frozen=True)
class SessionConfig:
    """What an adapter serves: an environment, its budget policy, its reward and what the model sees.

    Args:
        env_id: A registered id (namespace optional), e.g. ``"TextWorld-CoinCollector-v0"``.
        env_kwargs: Constructor arguments, a mapping or ``"key=value,..."``.
        split: Task split (``None``: the env's default).
        max_turns: Budget of an episode that sets none and draws none.
        budgets: Budget values drawn per episode by ``BudgetMix`` (``None``: no draw).
        budget_weights: Relative probabilities of ``budgets`` (uniform by default).
        show_budget: Tell the model its remaining turns in every observation.
        show_actions: List the admissible actions in the text the model sees.
        reward: ``"env"`` or ``"process"`` (see :data:`REWARDS`).
        process_reward: ``ProcessReward`` parameters (``coefficient``, ``gamma``, ``invalid_penalty``,
            ``terminal_potential``) when ``reward="process"``.
        info_keys: Opt-in ``info`` keys to compute and report (e.g. ``("expert_action",)``).

    Raises:
        UnknownEnvIdError: ``env_id`` is not registered.
        InvalidBudgetError: A budget or weight is invalid.
        InvalidOptionError: Any other value is invalid.

    Example:
        >>> SessionConfig("TextWorld-Cooking-v0", env_kwargs="difficulty=1", budgets=(5, 10)).label
        'TextWorld-Cooking-v0(difficulty=1) budgets=5,10 reward=env'
    """

    env_id: str
    env_kwargs: Any = ()
    split: str | None = None
    max_turns: int = 30
    budgets: tuple[int, ...] | None = None
    budget_weights: tuple[float, ...] | None = None
    show_budget: bool = False
    show_actions: bool = True
    reward: str = "env"
    process_reward: Any = ()
    info_keys: tuple[str, ...] = ()
    ref: EnvRef = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ref = EnvRef.parse(self.env_id, self.env_kwargs if self.env_kwargs else None, self.split)
        set_ = object.__setattr__
        set_(self, "ref", ref)
        set_(self, "env_id", ref.env_id)
        set_(self, "env_kwargs", ref.kwargs)
        set_(self, "split", ref.split)
        set_(self, "max_turns", validate_budget(self.max_turns, "for SessionConfig(max_turns=...)"))
        if self.budgets is not None:
            budgets = tuple(validate_budget(b, "in SessionConfig(budgets=...)") for b in self.budgets)
            if not budgets:
                raise InvalidBudgetError("SessionConfig: budgets is empty; give positive integers or None.")
            set_(self, "budgets", budgets)
        if self.budget_weights is not None:
            weights = tuple(float(w) for w in self.budget_weights)
            if self.budgets is None or len(weights) != len(self.budgets):
                raise InvalidBudgetError("SessionConfig: budget_weights needs one weight per value of budgets.")
            if any(not math.isfinite(w) or w < 0 for w in weights) or sum(weights) <= 0:
                raise InvalidBudgetError(f"SessionConfig: budget_weights {weights} must be >= 0, not all zero.")
            set_(self, "budget_weights", weights)
        set_(self, "show_budget", _boolean(self.show_budget, "SessionConfig(show_budget=...)"))
        set_(self, "show_actions", _boolean(self.show_actions, "SessionConfig(show_actions=...)"))
        _choice(self.reward, REWARDS, "reward")
        shaping = dict(self.process_reward or {})
        for key in shaping:
            _choice(key, _PROCESS_REWARD_KEYS, "process_reward parameter")
        if shaping and self.reward != "process":
            raise InvalidOptionError("SessionConfig: process_reward parameters need reward='process'.")
        if "terminal_potential" in shaping:
            _choice(shaping["terminal_potential"], TERMINAL_POTENTIALS, "terminal_potential")
        set_(self, "process_reward", tuple(sorted(shaping.items())))
        if isinstance(self.info_keys, str):
            raise InvalidOptionError(
                f"SessionConfig: info_keys must be a list of keys, got the string {self.info_keys!r}."
            )
        set_(self, "info_keys", tuple(sorted(set(self.info_keys))))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> SessionConfig:
        """Build a config from a mapping (a SkyRL ``env_config``, a JSON object), rejecting unknown keys.

        Example:
            >>> SessionConfig.from_mapping({"env_id": "WebShop-1k-v0", "max_turns": 12}).max_turns
            12
            >>> SessionConfig.from_mapping({"env_id": "WebShop-1k-v0", "max_turn": 12})
            Traceback (most recent call last):
            ...
            agentgym_budget.errors.InvalidOptionError: Unknown session setting 'max_turn'. Did you mean 'max_turns'? Expected one of: env_id, env_kwargs, split, max_turns, budgets, budget_weights, show_budget, show_actions, reward, process_reward, info_keys.
        """
        known = tuple(f.name for f in dataclasses.fields(cls) if f.init)
        for key in values:
            _choice(key, known, "session setting")
        if "env_id" not in values:
            raise InvalidOptionError("A session config needs 'env_id', e.g. {'env_id': 'TextWorld-CoinCollector-v0'}.")
        items = dict(values)
        for key in ("budgets", "budget_weights", "info_keys"):
            if items.get(key) is not None and not isinstance(items[key], str):
                items[key] = tuple(items[key])
        return cls(**items)

    @property
    def label(self) -> str:
        """A short readable description."""
        budget = f"budgets={','.join(map(str, self.budgets))}" if self.budgets else f"max_turns={self.max_turns}"
        shown = " shown" if self.show_budget else ""
        return f"{self.ref.label} {budget}{shown} reward={self.reward}"

    def build(self) -> gym.Env:
        """Build the env stack (see the module docstring)."""
        env: gym.Env = TurnBudget(
            self.ref.make_base(self.info_keys), max_turns=self.max_turns, show_budget=self.show_budget
        )
        if self.budgets is not None:
            env = BudgetMix(env, budgets=self.budgets, weights=self.budget_weights)
        if self.reward == "process":
            env = ProcessReward(env, **dict(self.process_reward))
        return env
