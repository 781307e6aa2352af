"""BabyAI task family: minigrid's BabyAI levels as text, with GLAM's sentences and a planner at every state.

Registered ids (all in the ``agentgym_budget`` namespace): ``BabyAI-<level>-v0`` for every level of
:data:`.levels.LEVELS`: eleven of minigrid's one-room ("local") levels, and ``BabyAI-MixedTrainLocal-v0`` /
``BabyAI-MixedTestLocal-v0`` (:mod:`.mixed`: five mission kinds, held-out object/colour combinations).
See :mod:`.env` for the text, reward, ``progress`` and ``info`` keys, :mod:`.planner` for the expert and
:mod:`.state` for snapshots. Needs the ``babyai`` extra (``minigrid==3.2.0``, Python >= 3.11). Importing
this module registers the ids without importing minigrid.

Example:
    >>> import agentgym_budget
    >>> len(agentgym_budget.registered_ids("babyai"))
    13
"""

from __future__ import annotations

from agentgym_budget.registration import register_env
from agentgym_budget.tasks.babyai.levels import LEVELS, SPLIT_SEEDS

__all__ = ["register"]

_ENV_MODULE = "agentgym_budget.tasks.babyai.env"


def register() -> None:
    """Register the BabyAI ids with Gymnasium."""
    for level in LEVELS.values():
        register_env(
            level.env_name,
            f"{_ENV_MODULE}:BabyAI{level.name}Env",
            family="babyai",
            description=level.description[:1].upper() + level.description[1:] + ".",
            splits=tuple(SPLIT_SEEDS),
            extra="babyai",
            requires=("minigrid",),
            min_python=(3, 11),
        )


register()
