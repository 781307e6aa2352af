"""Generating TextWorld games offline with the real ``textworld`` generator, cached on disk.

A :class:`GameRecipe` says how to make one kind of game (a TextWorld challenge
with its settings, or a custom world); :func:`generate_game` makes the game of a
given seed in-process (``make`` + ``compile_game``, not the ``tw-make`` CLI) and
caches it under :func:`agentgym_budget.storage.cache.cache_root` ``/textworld``, keyed by the
TextWorld version, the recipe and the seed. A cached game is never regenerated.

Every game is played by its own expert before it is cached: TextWorld's winning policy,
re-planned after every step and screened by :func:`~.commands.check_command`, exactly as
the env's ``expert_action`` is played, through the real interpreter. Some draws cannot be
won that way (e.g. a custom world with a ``locker`` and a ``type 0 locker`` in one room: the
parser asks "Which do you mean?" for ever), and TextWorld cannot make some others (a
``QuestGenerationError`` asking for another seed, e.g. Treasure Hunter level 20, seed 3).
Such a draw is rejected and the game is drawn again with the derived seed
:func:`draw_seed` ``(seed, 1)``, then ``(seed, 2)``, ...: the task id, the split's size and
determinism are kept, and ``generation.json`` in the cache entry records the TextWorld seed
used, the expert's number of turns and the rejected draws with the reason.

The Inform 7 compiler writes an ``Inform`` folder into ``$HOME``; it runs with ``HOME`` set
to ``<cache>/inform7-home`` instead (for the compiler's process only).

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

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.errors import GenerationError, InvalidOptionError
from agentgym_budget.storage.cache import cache_root, cached_directory, find_entry

__all__ = [
    "SPLIT_SEEDS",
    "coin_collector_recipe",
    "cooking_recipe",
    "custom_recipe",
    "expert_turns",
    "generate_game",
    "simple_recipe",
    "treasure_hunter_recipe",
]

EXPERT_CHECK = "expert-wins-1"
"""Version of the expert check games pass before they are cached (part of the cache key)."""

MAX_DRAWS = 20
"""Draws tried for one seed before :func:`generate_game` gives up."""

_DRAW_STRIDE = 1_000_000

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


def draw_seed(seed: int, draw: int) -> int:
    """The TextWorld seed of the ``draw``-th attempt at the game of ``seed`` (draw 0 is ``seed`` itself).

    Derived seeds lie outside every split's seed range, so a redrawn game is no other task's game.

    Example:
        >>> draw_seed(7, 0), draw_seed(7, 2)
        (7, 2000007)
    """
    return seed + draw * _DRAW_STRIDE


class _CompilerSubprocess:
    """``subprocess`` as TextWorld's Inform 7 module sees it: its compilers run with ``HOME`` in the cache.

    Installed once into that module only (no patch window, nothing else affected), so generating
    games from any thread never writes ``~/Inform`` and never touches ``os.environ``.
    """

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    @staticmethod
    def check_output(*args: Any, **kwargs: Any) -> bytes:
        if kwargs.get("env") is None:
            home = cache_root() / "inform7-home"
            home.mkdir(parents=True, exist_ok=True)
            kwargs["env"] = {**os.environ, "HOME": str(home)}
        return subprocess.check_output(*args, **kwargs)


def _keep_compiler_home_in_cache() -> None:
    from textworld.generator.inform7 import world2inform7

    if not isinstance(world2inform7.subprocess, _CompilerSubprocess):
        world2inform7.subprocess = _CompilerSubprocess()


def expert_turns(z8_path: str | Path, max_turns: int | None = None) -> int | None:
    """Play the game's expert through the interpreter; return the turns it needs to win, or ``None``.

    The expert is TextWorld's winning policy from the start (what the env's ``expert_plan``
    shows after a reset), played command by command as the env plays it: through
    :func:`~.commands.check_command` (a command it would cut or refuse fails the game) and the
    real interpreter, whose own "*** The End ***" decides the win. It is planned once, like
    ALFWorld's check; re-planning after every step (the env's ``expert_action``) costs 3-5x more
    on large Cooking games and follows the same plan.

    Args:
        z8_path: A TextWorld game (its ``.json`` beside it).
        max_turns: Give up after this many turns (default: the plan's length).
    """
    import textworld
    from textworld.generator.game import GameProgression
    from textworld.generator.inform7 import Inform7Game

    from agentgym_budget.tasks.textworld.commands import sanitize_command
    from agentgym_budget.tasks.textworld.engine import TextWorldEngine, load_game

    game = load_game(str(z8_path))
    policy = GameProgression(game, track_quests=True).winning_policy
    plan = Inform7Game(game).gen_commands_from_actions(policy) if policy else []
    engine = TextWorldEngine(textworld.EnvInfos(won=True, lost=True))
    try:
        engine.load(str(z8_path))
        engine.reset(1)
        for turn, planned in enumerate(plan[:max_turns], start=1):
            command = sanitize_command(planned)
            if command is None or command != " ".join(planned.lower().split()):
                return None
            state, _ = engine.step(command)
            if state.get("won"):
                return turn
            if state.get("lost"):
                return None
        return None
    finally:
        engine.close()


def _make(recipe: GameRecipe, seed: int, split: str, folder: Path) -> None:
    import textworld
    from textworld.challenges import CHALLENGES
    from textworld.generator import compile_game, make_game

    from agentgym_budget.tasks.textworld.parsers import make_parsers_thread_safe

    make_parsers_thread_safe()
    _keep_compiler_home_in_cache()

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

    The game is won by its expert (:func:`expert_turns`); a draw that is not, or that TextWorld
    cannot make (its ``QuestGenerationError``: "try a different seed"), is redrawn with
    :func:`draw_seed` (see the module docstring).

    Raises:
        GenerationError: TextWorld failed to generate or compile the game, or no draw in
            :data:`MAX_DRAWS` gave a game its expert wins.
    """

    def build(folder: Path) -> None:
        from textworld.generator.chaining import QuestGenerationError

        rejected: list[dict[str, Any]] = []
        for draw in range(MAX_DRAWS):
            textworld_seed = draw_seed(seed, draw)
            try:
                _make(recipe, textworld_seed, split, folder)
                turns = expert_turns(folder / "game.z8")
            except QuestGenerationError as err:  # TextWorld: "Try using a different value for the seed".
                rejected.append({"textworld_seed": textworld_seed, "reason": f"{type(err).__name__}: {err}"})
                continue
            except Exception as err:
                raise GenerationError(
                    f"TextWorld failed to generate {recipe.challenge or 'custom'} game {dict(recipe.settings)} "
                    f"with seed {textworld_seed}: {type(err).__name__}: {err}"
                ) from err
            if turns is not None:
                record = {"textworld_seed": textworld_seed, "expert_turns": turns, "rejected": rejected}
                (folder / "generation.json").write_text(json.dumps(record, indent=1))
                return
            rejected.append({"textworld_seed": textworld_seed, "reason": "its expert does not win"})
        raise GenerationError(
            f"TextWorld {recipe.challenge or 'custom'} game {dict(recipe.settings)} for seed {seed}: none of "
            f"{MAX_DRAWS} draws (TextWorld seeds {rejected[0]['textworld_seed']}..{rejected[-1]['textworld_seed']}) "
            f"is a game its own expert wins; the last one: {rejected[-1]['reason']}."
        )

    return cached_directory("textworld", _entry_params(recipe, seed, split), build) / "game.z8"


def _entry_params(recipe: GameRecipe, seed: int, split: str) -> dict[str, Any]:
    return {**recipe.params(seed, split), "check": EXPERT_CHECK}


def cached_game(recipe: GameRecipe, seed: int, split: str) -> Path | None:
    """The ``.z8`` of :func:`generate_game` if it is in the cache, intact; ``None`` otherwise (nothing is built)."""
    entry = find_entry("textworld", _entry_params(recipe, seed, split))
    return None if entry is None else entry / "game.z8"
