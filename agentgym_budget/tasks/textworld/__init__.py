"""TextWorld task family: games made by the real ``textworld`` generator, and user game files.

Registered ids (all in the ``agentgym_budget`` namespace):

====================================  ==================================================
``TextWorld-Cooking-v0``              cook a recipe; ``difficulty`` 1-7 (default 3)
``TextWorld-CoinCollector-v0``        find the coin; ``level`` 1-300 (default 5)
``TextWorld-TreasureHunter-v0``       find the named treasure; ``level`` 1-30 (default 5)
``TextWorld-Simple-v0``               TextWorld's simple house game; ``rewards``, ``goal``
``TextWorld-Custom-v0``               random worlds: ``world_size``, ``nb_objects``, ``quest_length``
``TextWorld-File-v0``                 your own ``.z8`` games: ``path`` (file or folder)
====================================  ==================================================

Generated ids share the splits of :data:`.games.SPLIT_SEEDS` (train seeds 0-999, valid
1000-1199, test 1200-1399). Importing this module registers the ids without importing
TextWorld; the engine loads when an env is made.
"""

from __future__ import annotations

from agentgym_budget.registration import declare_engine, register_env

__all__ = ["register"]

_ENV_MODULE = "agentgym_budget.tasks.textworld.env"


def register() -> None:
    """Register the TextWorld ids with Gymnasium."""
    declare_engine("textworld", ("textworld", "jericho"))
    register_env(
        "TextWorld-Cooking-v0",
        f"{_ENV_MODULE}:CookingEnv",
        family="textworld",
        description="Cook and eat a recipe (First TextWorld Problems style), difficulty 1-7.",
    )
    register_env(
        "TextWorld-CoinCollector-v0",
        f"{_ENV_MODULE}:CoinCollectorEnv",
        family="textworld",
        description="Navigate through rooms to find and take the coin, level 1-300.",
    )
    register_env(
        "TextWorld-TreasureHunter-v0",
        f"{_ENV_MODULE}:TreasureHunterEnv",
        family="textworld",
        description="Find the named treasure among distractors, level 1-30.",
    )
    register_env(
        "TextWorld-Simple-v0",
        f"{_ENV_MODULE}:SimpleEnv",
        family="textworld",
        description="TextWorld's simple house game with dense/balanced/sparse rewards.",
    )
    register_env(
        "TextWorld-Custom-v0",
        f"{_ENV_MODULE}:CustomEnv",
        family="textworld",
        description="Random TextWorld worlds of a chosen size, object count and quest length.",
    )
    register_env(
        "TextWorld-File-v0",
        f"{_ENV_MODULE}:FileEnv",
        family="textworld",
        description="Play TextWorld .z8 games from a path (a file or a folder of games).",
        splits=("all",),
    )


register()
