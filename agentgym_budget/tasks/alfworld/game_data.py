"""What one ALFWorld game file holds that does not change while it is played: :class:`GameData`."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from textworld.logic import Proposition

from agentgym_budget.tasks.alfworld.parsed_game import ActionSchema

__all__: list[str] = []

_NAMINGS_KEPT = 8
_PLANS_KEPT = 2048


@dataclass
class GameData:
    """Everything about one game file that does not change while it is played (shared).

    Shared by every engine of the process playing the game, from any thread: the derivation
    and plan caches are guarded by :attr:`lock`.

    Attributes:
        path: The ``game.tw-pddl`` file.
        data: Its JSON content.
        logic: TextWorld's ``GameLogic`` (actions and grammar).
        sas: The full SAS encoding (loaded into the planner library at every reset).
        sas_replan: The optimised SAS encoding (what TextWorld's ``replan`` searches).
        fluents: Lower-case names of the predicates that actions change.
        weight: Estimated bytes held in memory (what the process-wide cache counts).
        bindings: The action name, parameter binding and full name of each planner operator, by id
            (filled as operators are met; see :class:`~.pddl_state.CachedPddlState`).
        command_templates: The sorted command templates of the game's actions.
    """

    path: str
    data: dict[str, Any]
    logic: Any
    sas: bytes
    sas_replan: bytes
    fluents: frozenset[str]
    name2type: dict[str, str] = field(default_factory=dict)
    actions: dict[str, ActionSchema] = field(default_factory=dict)
    init_facts: list[Proposition] = field(default_factory=list)
    state_facts: list[Proposition] = field(default_factory=list)
    weight: int = 0
    bindings: dict[str, Any] = field(default_factory=dict)
    command_templates: list[str] = field(default_factory=list)
    derivations: OrderedDict[Any, dict[tuple[Any, ...], str]] = field(default_factory=OrderedDict)
    plans: OrderedDict[Any, tuple[str, ...]] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def derivations_for(self, naming: Any) -> dict[tuple[Any, ...], str]:
        """The shared cache of static derivations for one entity naming (a few namings are kept)."""
        with self.lock:
            results = self.derivations.get(naming)
            if results is None:
                results = self.derivations[naming] = {}
                if len(self.derivations) > _NAMINGS_KEPT:
                    self.derivations.popitem(last=False)
            else:
                self.derivations.move_to_end(naming)
            return results

    def cached_plan(self, key: Any) -> tuple[str, ...] | None:
        """The plan stored under ``key`` by :meth:`store_plan`, if it is still kept."""
        with self.lock:
            plan = self.plans.get(key)
            if plan is not None:
                self.plans.move_to_end(key)
            return plan

    def store_plan(self, key: Any, plan: tuple[str, ...]) -> None:
        """Keep ``plan`` under ``key`` (the last 2,048 plans of the game are kept)."""
        with self.lock:
            self.plans[key] = plan
            if len(self.plans) > _PLANS_KEPT:
                self.plans.popitem(last=False)

    @property
    def goal(self) -> str:
        """The problem's ``(:goal ...)`` section, up to the end of the problem."""
        problem = self.data["pddl_problem"]
        return problem[problem.lower().index("(:goal") :]
