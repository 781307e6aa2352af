"""The TextWorldExpress games, their parameters and folds, described without starting the engine.

Each game takes a few integer parameters (TextWorldExpress's ``gameParams`` string, e.g.
``numLocations=11,includeDoors=1``). Here they are ``gym.make`` keyword arguments in snake case,
checked against the ranges the engine accepts (:data:`GAMES`); :func:`resolve_params` fills in the
engine's defaults, so an env made with the defaults spelled out equals one made without them.

Folds are TextWorldExpress's seed ranges: ``train`` seeds 0-999, ``dev`` 10,000-10,999 and ``test``
20,000-20,999 (:data:`FOLD_SEEDS`); a task is one seed, ``<game>-<seed>``.

Example:
    >>> resolve_params("coin", {"num_locations": 5})
    {'numLocations': 5, 'numDistractorItems': 0, 'includeDoors': 1, 'limitInventorySize': 1}
    >>> params_string(resolve_params("coin", {"include_doors": False}))
    'numLocations=11,numDistractorItems=0,includeDoors=0,limitInventorySize=1'
    >>> resolve_params("coin", {"num_location": 5})
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: TWX-CoinCollector-v0: unknown argument 'num_location'. Did you mean 'num_locations'? Arguments: num_locations (1-11, default 11), num_distractor_items (0-10, default 0), include_doors (bool, default True), limit_inventory_size (bool, default True).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentgym_budget.errors import InvalidOptionError, did_you_mean

__all__ = ["GAMES"]

FOLD_SEEDS: Mapping[str, range] = {
    "train": range(0, 1000),
    "dev": range(10_000, 11_000),
    "test": range(20_000, 21_000),
}
"""Seeds of each fold, as the engine lists them (``getSeedsTrain`` / ``Dev`` / ``Test``)."""


@dataclass(frozen=True)
class Param:
    """One game parameter: its engine name, kwarg name, range (``bool`` for 0/1 switches) and default."""

    engine_name: str
    kwarg: str
    low: int
    high: int
    default: int
    boolean: bool = False

    def describe(self) -> str:
        if self.boolean:
            return f"{self.kwarg} (bool, default {bool(self.default)})"
        return f"{self.kwarg} ({self.low}-{self.high}, default {self.default})"


def _int(engine: str, kwarg: str, low: int, high: int, default: int) -> Param:
    return Param(engine, kwarg, low, high, default)


def _bool(engine: str, kwarg: str, default: bool) -> Param:
    return Param(engine, kwarg, 0, 1, int(default), boolean=True)


_LOCATIONS = _int("numLocations", "num_locations", 1, 11, 11)
_DOORS_ON = _bool("includeDoors", "include_doors", True)
_DOORS_OFF = _bool("includeDoors", "include_doors", False)
_INVENTORY_ON = _bool("limitInventorySize", "limit_inventory_size", True)
_INVENTORY_OFF = _bool("limitInventorySize", "limit_inventory_size", False)


@dataclass(frozen=True)
class GameSpec:
    """A TextWorldExpress game: its engine name, our id and class name, and its parameters."""

    engine_name: str
    env_name: str
    description: str
    params: tuple[Param, ...] = ()


GAMES: Mapping[str, GameSpec] = {
    spec.engine_name: spec
    for spec in (
        GameSpec(
            "coin",
            "TWX-CoinCollector-v0",
            "Explore up to 11 rooms to find and take the coin (TextWorldExpress Coin Collector).",
            (_LOCATIONS, _int("numDistractorItems", "num_distractor_items", 0, 10, 0), _DOORS_ON, _INVENTORY_ON),
        ),
        GameSpec(
            "cookingworld",
            "TWX-Cooking-v0",
            "Find the recipe and ingredients, prepare and eat the meal (TextWorldExpress Cooking World).",
            (
                _LOCATIONS,
                _int("numIngredients", "num_ingredients", 1, 5, 3),
                _int("numDistractorItems", "num_distractor_items", 0, 10, 10),
                _DOORS_ON,
                _INVENTORY_ON,
            ),
        ),
        GameSpec(
            "twc",
            "TWX-TWC-v0",
            "Put household objects away where they belong (TextWorldExpress TextWorld Commonsense).",
            (
                _int("numLocations", "num_locations", 1, 3, 3),
                _int("numItemsToPutAway", "num_items_to_put_away", 1, 4, 4),
                _DOORS_OFF,
                _INVENTORY_OFF,
            ),
        ),
        GameSpec(
            "arithmetic",
            "TWX-Arithmetic-v0",
            "Solve the math problem, then put the item with that quantity in the box (TextWorldExpress).",
        ),
        GameSpec(
            "mapreader",
            "TWX-MapReader-v0",
            "Read the map, fetch the coin from a distant room and bring it back to the box (TextWorldExpress).",
            (
                _int("numLocations", "num_locations", 2, 50, 15),
                _int("maxDistractorItemsPerLocation", "max_distractor_items_per_location", 0, 3, 3),
                _DOORS_OFF,
                _INVENTORY_OFF,
                _int("maxDistanceApart", "max_distance_apart", 1, 8, 4),
            ),
        ),
        GameSpec(
            "sorting",
            "TWX-Sorting-v0",
            "Put the objects in the box from the smallest quantity to the largest (TextWorldExpress).",
        ),
        GameSpec(
            "simonsays",
            "TWX-SimonSays-v0",
            "Do exactly what Simon says, command after command (TextWorldExpress).",
            (
                _int("gameLength", "game_length", 1, 1000, 5),
                _int("numDistractors", "num_distractors", 0, 5, 3),
                _bool("memorization", "memorization", False),
            ),
        ),
        GameSpec(
            "peckingorder",
            "TWX-PeckingOrder-v0",
            "Read and follow the instructions book, again and again (TextWorldExpress).",
        ),
    )
}
"""Every game, by engine name, in registration order."""


def resolve_params(game: str, given: Mapping[str, Any]) -> dict[str, int]:
    """The engine parameters of ``game`` for the kwargs ``given`` (defaults filled in, in a fixed order).

    Raises:
        InvalidOptionError: An unknown argument (with did-you-mean), a value of the wrong type or out of range.
    """
    spec = GAMES[game]
    by_kwarg = {param.kwarg: param for param in spec.params}
    for name in given:
        if name not in by_kwarg:
            accepted = ", ".join(param.describe() for param in spec.params) or "none (this game has no parameters)"
            raise InvalidOptionError(
                f"{spec.env_name}: unknown argument {name!r}.{did_you_mean(str(name), by_kwarg)} Arguments: {accepted}."
            )
    return {param.engine_name: _check(spec, param, given.get(param.kwarg, param.default)) for param in spec.params}


def _check(spec: GameSpec, param: Param, value: Any) -> int:
    if param.boolean:
        if not isinstance(value, (bool, numbers.Integral)) or value not in (0, 1):
            raise InvalidOptionError(f"{spec.env_name}: {param.kwarg} must be True or False, got {value!r}.")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidOptionError(
            f"{spec.env_name}: {param.kwarg} must be an int from {param.low} to {param.high}, got {value!r}."
        )
    if not param.low <= value <= param.high:
        raise InvalidOptionError(
            f"{spec.env_name}: {param.kwarg}={value} is out of range; expected {param.low} to {param.high} "
            f"(default {param.default})."
        )
    return int(value)


def params_string(params: Mapping[str, int]) -> str:
    """The engine's ``gameParams`` string for resolved ``params``."""
    return ",".join(f"{name}={value}" for name, value in params.items())


def task_seed(task_id: str) -> int:
    """The game seed of a task id ``<game>-<seed>``."""
    return int(task_id.rsplit("-", 1)[1])
