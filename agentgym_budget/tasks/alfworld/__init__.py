"""ALFWorld task family: ALFRED household tasks on ALFWorld's real text engine, with no download.

Registered ids (all in the ``agentgym_budget`` namespace; splits ``train``, ``valid_seen``,
``valid_unseen``):

=================================  ================================================================
``ALFWorld-v0``                    all six task types
``ALFWorld-PickAndPlace-v0``       ``pick_and_place_simple``: put an object in/on a receptacle
``ALFWorld-LookAtInLight-v0``      ``look_at_obj_in_light``: examine an object under a lamp
``ALFWorld-CleanAndPlace-v0``      ``pick_clean_then_place_in_recep``: clean it, then place it
``ALFWorld-HeatAndPlace-v0``       ``pick_heat_then_place_in_recep``: heat it, then place it
``ALFWorld-CoolAndPlace-v0``       ``pick_cool_then_place_in_recep``: cool it, then place it
``ALFWorld-PickTwoAndPlace-v0``    ``pick_two_obj_and_place``: put two of a kind in/on a receptacle
=================================  ================================================================

Every id accepts the arguments of :class:`.env.ALFWorldEnv` (``data_dir`` for the official data,
``num_games``, ``shuffle_names``, ``expert``, ``info_keys``). They need the ``alfworld`` extra
(``pip install "agentgym-budget[alfworld]"``); importing this module registers the ids without
importing ``alfworld``.

Modules: :mod:`.scenes` (ALFRED scene layouts), :mod:`.task_types` (goals and progress),
:mod:`.generator` (offline games), :mod:`.data` (official data), :mod:`.planner` (Fast Downward
pool and translation cache), :mod:`.grammar` (compiled text grammar), :mod:`.pddl_env` (fast
PDDL backend), :mod:`.engine` (ALFWorld's wrapper stack), :mod:`.expert` (handcoded expert),
:mod:`.env` (the Gymnasium environments).

Example:
    >>> import agentgym_budget
    >>> agentgym_budget.registered_ids("alfworld")[:2]
    ['agentgym_budget/ALFWorld-CleanAndPlace-v0', 'agentgym_budget/ALFWorld-CoolAndPlace-v0']
"""

from __future__ import annotations

from agentgym_budget.registration import declare_engine, register_env
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES

__all__ = ["register"]

SPLITS = ("train", "valid_seen", "valid_unseen")
"""The splits of every ALFWorld id."""

_ENTRY_POINT = "agentgym_budget.tasks.alfworld.env:ALFWorldEnv"
_NEEDS = {"extra": "alfworld", "requires": ("alfworld", "fast_downward")}


def register() -> None:
    """Register the ALFWorld ids with Gymnasium (no ``alfworld`` import)."""
    declare_engine("alfworld", ("alfworld", "textworld", "fast-downward-textworld"))
    register_env(
        "ALFWorld-v0",
        _ENTRY_POINT,
        family="alfworld",
        description="ALFWorld household tasks (all six ALFRED task types) on the real text engine.",
        splits=SPLITS,
        **_NEEDS,
    )
    for task_type in TASK_TYPES.values():
        register_env(
            task_type.env_name,
            _ENTRY_POINT,
            family="alfworld",
            description=task_type.description,
            splits=SPLITS,
            kwargs={"task_types": task_type.name},
            **_NEEDS,
        )


register()
