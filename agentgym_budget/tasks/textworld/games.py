"""Generating TextWorld games offline with the real ``textworld`` generator, cached on disk.

A :class:`GameRecipe` says how to make one kind of game (a TextWorld challenge
with its settings, or a custom world); :func:`generate_game` makes the game of a
given seed in-process (``make`` + ``compile_game``, not the ``tw-make`` CLI) and
caches it under :func:`agentgym_budget.cache.cache_root` ``/textworld``, keyed by the
TextWorld version, the recipe and the seed. A cached game is never regenerated.

Splits are disjoint seed ranges (:data:`SPLIT_SEEDS`); for the Cooking challenge
the split is also passed to TextWorld, whose food items differ between splits.

Example:
    >>> recipe = cooking_recipe(difficulty=1)
    >>> recipe.challenge, dict(recipe.settings)["go"]
    ('tw-cooking', 1)
    >>> path = generate_game(recipe, seed=3, split="train")
    >>> path.suffix, path.with_suffix(".json").is_file()
    ('.z8', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.cache import cached_directory
from agentgym_budget.errors import GenerationError, InvalidOptionError

__all__ = [
    "COOKING_DIFFICULTIES",
    "SPLIT_SEEDS",
    "GameRecipe",
    "coin_collector_recipe",
    "cooking_recipe",
    "custom_recipe",
    "generate_game",
    "simple_recipe",
    "split_seeds",
    "treasure_hunter_recipe",
]

SPLIT_SEEDS: Mapping[str, range] = {
    "train": range(0, 1000),
    "valid": range(1000, 1200),
    "test": range(1200, 1400),
}
"""Game seeds of each split: train 0-999, valid 1000-1199, test 1200-1399."""

COOKING_DIFFICULTIES: Mapping[int, Mapping[str, Any]] = {
    1: {"recipe": 1, "take": 1, "go": 1, "open": False, "cook": False, "cut": False, "drop": False},
    2: {"recipe": 1, "take": 1, "go": 1, "open": True, "cook": False, "cut": True, "drop": False},
    3: {"recipe": 1, "take": 1, "go": 1, "open": True, "cook": True, "cut": True, "drop": False},
    4: {"recipe": 2, "take": 2, "go": 6, "open": True, "cook": True, "cut": True, "drop": False},
    5: {"recipe": 3, "take": 3, "go": 6, "open": True, "cook": True, "cut": True, "drop": False},
    6: {"recipe": 3, "take": 3, "go": 9, "open": True, "cook": True, "cut": True, "drop": False},
    7: {"recipe": 4, "take": 4, "go": 12, "open": True, "cook": True, "cut": True, "drop": False},
}
"""Cooking skills per difficulty, in the style of the First TextWorld Problems: ``recipe``
ingredients of which ``take`` must be fetched, ``go`` rooms, and whether containers must be
opened and ingredients cooked / cut. The limited-inventory skill (``drop``) is never used:
TextWorld's quest tracker finds no winning policy in those games, so they would have no expert."""


@dataclass(frozen=True)
class GameRecipe:
    """How to generate one kind of TextWorld game.

    Attributes:
        challenge: A ``textworld.challenges`` name (``"tw-cooking"``, ...) or ``None`` for a custom world.
        settings: The challenge's settings (or the custom world's options), as sorted pairs.
        split_aware: Whether the split is passed to the generator (Cooking).
    """

    challenge: str | None
    settings: tuple[tuple[str, Any], ...]
    split_aware: bool = False

    def params(self, seed: int, split: str) -> dict[str, Any]:
        """Every parameter the generated game depends on (the cache key)."""
        import textworld

        return {
            "textworld": textworld.__version__,
            "challenge": self.challenge,
            "settings": dict(self.settings),
            "split": split if self.split_aware else None,
            "seed": seed,
        }


def split_seeds(split: str) -> range:
    """The game seeds of ``split`` (see :data:`SPLIT_SEEDS`)."""
    return SPLIT_SEEDS[split]


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidOptionError(f"{name} must be an integer in [{low}, {high}], got {value!r}.")
    return value


def cooking_recipe(difficulty: int = 3) -> GameRecipe:
    """Cooking games of a difficulty in :data:`COOKING_DIFFICULTIES`."""
    _check_int("difficulty", difficulty, min(COOKING_DIFFICULTIES), max(COOKING_DIFFICULTIES))
    return GameRecipe("tw-cooking", tuple(sorted(COOKING_DIFFICULTIES[difficulty].items())), split_aware=True)


def coin_collector_recipe(level: int = 5) -> GameRecipe:
    """Coin Collector games: find the coin; ``level`` 1-300 sets rooms and distractors (TextWorld's levels)."""
    _check_int("level", level, 1, 300)
    quest_length, distractors = (level - 1) % 100 + 1, (level - 1) // 100
    if (distractors + 1) * quest_length > 100:
        raise InvalidOptionError(
            f"Coin Collector level {level} needs {(distractors + 1) * quest_length} rooms; TextWorld 1.7 "
            "supports at most 100. Use a level whose rooms (quest length x (1 + distractor tier)) stay <= 100."
        )
    return GameRecipe("tw-coin_collector", (("level", level),))


def treasure_hunter_recipe(level: int = 5) -> GameRecipe:
    """Treasure Hunter games: find and take a treasure; ``level`` 1-30 (TextWorld's levels)."""
    _check_int("level", level, 1, 30)
    return GameRecipe("tw-treasure_hunter", (("level", level),))


def simple_recipe(rewards: str = "dense", goal: str = "detailed") -> GameRecipe:
    """TextWorld's simple challenge; ``rewards`` dense/balanced/sparse, ``goal`` detailed/brief/none."""
    if rewards not in ("dense", "balanced", "sparse"):
        raise InvalidOptionError(f"rewards must be 'dense', 'balanced' or 'sparse', got {rewards!r}.")
    if goal not in ("detailed", "brief", "none"):
        raise InvalidOptionError(f"goal must be 'detailed', 'brief' or 'none', got {goal!r}.")
    return GameRecipe("tw-simple", (("goal", goal), ("rewards", rewards), ("test", False)))


def custom_recipe(
    world_size: int = 5, nb_objects: int = 10, quest_length: int = 5, quest_breadth: int = 1
) -> GameRecipe:
    """Custom worlds from ``textworld.generator.make_game``: rooms, objects, quest length and breadth."""
    _check_int("world_size", world_size, 1, 100)
    _check_int("nb_objects", nb_objects, 0, 200)
    _check_int("quest_length", quest_length, 1, 50)
    _check_int("quest_breadth", quest_breadth, 1, 10)
    settings = {"nb_rooms": world_size, "nb_objects": nb_objects, "quest_length": quest_length}
    settings["quest_breadth"] = quest_breadth
    return GameRecipe(None, tuple(sorted(settings.items())))


def _make(recipe: GameRecipe, seed: int, split: str, folder: Path) -> None:
    import textworld
    from textworld.challenges import CHALLENGES
    from textworld.generator import compile_game, make_game

    from agentgym_budget.tasks.textworld.parsers import make_parsers_thread_safe

    make_parsers_thread_safe()
    options = textworld.GameOptions()
    options.seeds = seed
    options.path = str(folder / "game.z8")
    options.file_ext = ".z8"
    options.force_recompile = True
    settings = dict(recipe.settings)
    if recipe.challenge is None:
        for name, value in settings.items():
            setattr(options, name, value)
        game = make_game(options)
    else:
        if recipe.split_aware:
            settings.update(split=split, recipe_seed=seed + 1)
        game = CHALLENGES[recipe.challenge][1](settings, options)
    compile_game(game, options)
    for leftover in folder.glob("game.*"):
        if leftover.suffix not in (".z8", ".json"):
            leftover.unlink()


def generate_game(recipe: GameRecipe, seed: int, split: str) -> Path:
    """Return the path of the ``.z8`` game for ``seed`` (its ``.json`` lies beside it), generating it once.

    Raises:
        GenerationError: TextWorld failed to generate or compile the game.
    """

    def build(folder: Path) -> None:
        try:
            _make(recipe, seed, split, folder)
        except Exception as err:
            raise GenerationError(
                f"TextWorld failed to generate {recipe.challenge or 'custom'} game {dict(recipe.settings)} "
                f"with seed {seed}: {type(err).__name__}: {err}"
            ) from err

    return cached_directory("textworld", recipe.params(seed, split), build) / "game.z8"
