"""TextWorldExpress task family: the eight games of TextWorldExpress's native simulator.

Registered ids (all in the ``agentgym_budget`` namespace):

=============================  ==================================================================
``TWX-CoinCollector-v0``       find and take the coin; ``num_locations``, ``num_distractor_items``,
                               ``include_doors``, ``limit_inventory_size``
``TWX-Cooking-v0``             read the recipe, gather, prepare and eat the meal; also ``num_ingredients``
``TWX-TWC-v0``                 put objects where they belong; ``num_locations``, ``num_items_to_put_away``
``TWX-Arithmetic-v0``          solve a math problem, put the matching quantity in the box
``TWX-MapReader-v0``           read the map, fetch the coin; ``num_locations``, ``max_distance_apart``, ...
``TWX-Sorting-v0``             put the objects in the box by increasing quantity
``TWX-SimonSays-v0``           do what Simon says; ``game_length``, ``num_distractors``, ``memorization``
``TWX-PeckingOrder-v0``        follow the instructions book
=============================  ==================================================================

Splits are TextWorldExpress's folds ``train`` / ``dev`` / ``test`` (:data:`.games.FOLD_SEEDS`); each
game's arguments, ranges and defaults are in :data:`.games.GAMES`. Needs the ``twx`` extra
(``textworld-express``) and a Java runtime (``apt-get install default-jre-headless``). Importing this
module registers the ids without importing the engine.

Example:
    >>> import agentgym_budget
    >>> len(agentgym_budget.registered_ids("twx"))
    8
"""

from __future__ import annotations

from agentgym_budget.registration import declare_engine, register_env
from agentgym_budget.tasks.twx.games import FOLD_SEEDS, GAMES

__all__ = ["register"]

_ENV_MODULE = "agentgym_budget.tasks.twx.env"


def register() -> None:
    """Register the TWX ids with Gymnasium."""
    declare_engine("twx", ("textworld-express", "py4j"), runtime=java_runtime)
    for spec in GAMES.values():
        class_name = "TWX" + spec.env_name.removeprefix("TWX-").removesuffix("-v0") + "Env"
        register_env(
            spec.env_name,
            f"{_ENV_MODULE}:{class_name}",
            family="twx",
            description=spec.description,
            splits=tuple(FOLD_SEEDS),
            extra="twx",
            requires=("textworld_express", "py4j"),
            programs=("java",),
        )


def java_runtime() -> dict[str, str | None]:
    """The Java runtime the TWX ids start (its ``java -version`` line and path), for run provenance."""
    from agentgym_budget._internal.program_version import program_version
    from agentgym_budget.errors import MissingDependencyError
    from agentgym_budget.tasks.twx.gateway import java_command

    try:
        java = java_command()
    except MissingDependencyError:
        return {"java": None}
    return {"java": program_version([java, "-version"]), "java_path": java}


register()
