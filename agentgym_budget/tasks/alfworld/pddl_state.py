"""TextWorld's ``PddlState`` with the work of each step kept to what changed.

:class:`CachedPddlState` is the fact store :class:`~.pddl_env.FastPddlEnv` plays on. It answers
exactly as TextWorld's ``PddlState`` does (same facts, same applicable actions, same assignment
order), and differs in what it repeats:

* it is built from a game's cached translation (:class:`~.game_data.GameData`) instead of
  translating the problem again;
* the facts of one signature are sorted once and kept until one of them changes (TextWorld sorts
  them at every grammar query: tens of times per step, most of a step's text derivation);
* the names and parameter bindings of the planner's operators are read once per game and operator;
* every change of a predicate's facts is stamped (:meth:`CachedPddlState.stamp`), so a value computed
  from some predicates (ALFWorld's goal progress) is recomputed only after one of them changed.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import fast_downward
import textworld
from textworld.envs.pddl import logic as pddl_logic
from textworld.logic import Placeholder, Proposition, Signature, Variable

__all__: list[str] = []

_STAMPS = itertools.count(1)
"""Process-wide change stamps: each is drawn once, so equal stamps mean the same state, unchanged."""


class CachedPddlState(pddl_logic.PddlState):
    """TextWorld's ``PddlState``, built from a cached translation, with sorted facts kept per signature.

    Args:
        downward_lib: The planner library the game's task is loaded into.
        game: The game's :class:`~.game_data.GameData`.
    """

    def __init__(self, downward_lib: Any, game: Any) -> None:
        self._facts = defaultdict(set)
        self._vars_by_name = {}
        self._vars_by_type = defaultdict(set)
        self._var_counts = Counter()
        self._forget()
        self._logic = game.logic
        self.downward_lib = downward_lib
        self.pddl_problem = game.data["pddl_problem"]
        self.task = None  # the planner's parsed task is not kept (see .parsed_game)
        self.sas, self.sas_replan = game.sas, game.sas_replan
        self._actions = game.actions
        self._bindings: dict[int, tuple[str, Any, str]] = game.bindings  # shared by the game's states
        downward_lib.load_sas(game.sas)
        downward_lib.load_sas_replan(game.sas_replan)
        downward_lib.agb_has_task = True
        self.name2type = game.name2type
        self.add_facts(game.init_facts)
        self.add_facts(game.state_facts)

    def twin(self) -> CachedPddlState:
        """A state object sharing this one's game constants, with no facts (a restore fills them)."""
        twin = CachedPddlState.__new__(CachedPddlState)
        twin.__dict__.update(self.__dict__)
        twin._facts, twin._vars_by_name, twin._vars_by_type = defaultdict(set), {}, defaultdict(set)
        twin._var_counts, twin._operators = Counter(), {}
        twin._forget()
        return twin

    # ------------------------------------------------------------------ change tracking
    def _forget(self) -> None:
        """Drop what was derived from the facts (they were replaced wholesale)."""
        self._sorted: dict[Signature, list[Proposition]] = {}
        self._subtypes: dict[Signature, list[Signature]] = {}
        self._stamps: dict[str, int] = {}
        self._base_stamp = next(_STAMPS)

    def facts_replaced(self) -> None:
        """Call after assigning ``_facts`` directly (a snapshot restore): everything counts as changed."""
        self._forget()

    def stamp(self, predicates: Iterable[str]) -> int:
        """A number that changes whenever a fact of one of ``predicates`` is added or removed.

        Equal stamps of the same predicates mean the same facts of them (stamps are unique in the process).
        """
        stamps = self._stamps
        return max((self._base_stamp, *(stamps.get(name, 0) for name in predicates)))

    def add_fact(self, prop: Proposition) -> None:
        facts = self._facts[prop.signature]
        if prop not in facts:
            facts.add(prop)
            self._changed(prop.signature)
        for var in prop.arguments:
            self._add_variable(var)

    def remove_fact(self, prop: Proposition) -> None:
        facts = self._facts[prop.signature]
        if prop in facts:
            facts.discard(prop)
            self._changed(prop.signature)
        for var in prop.arguments:
            self._remove_variable(var)

    def _changed(self, signature: Signature) -> None:
        self._sorted.pop(signature, None)
        self._stamps[signature.name] = next(_STAMPS)

    def facts_of(self, predicates: Iterable[str]) -> Iterator[tuple[str, tuple[str, ...]]]:
        """The facts of ``predicates`` as ``(predicate, argument names)``, in no particular order."""
        wanted = frozenset(predicates)
        for signature, props in self._facts.items():
            if signature.name in wanted:
                name = signature.name
                for prop in props:
                    yield name, tuple(var.name for var in prop.arguments)

    # ------------------------------------------------------------------ queries
    def sorted_facts(self, signature: Signature) -> list[Proposition]:
        """``sorted(self.facts_with_signature(signature))``, kept until a fact of the signature changes."""
        facts = self._sorted.get(signature)
        if facts is None:
            facts = self._sorted[signature] = sorted(self._facts.get(signature, ()))
        return facts

    def _signatures(self, signature: Signature) -> list[Signature]:
        """The signatures a precondition with ``signature`` matches (its types and their subtypes)."""
        found = self._subtypes.get(signature)
        if found is None:
            types = [self._logic.types.get(name) for name in signature.types]
            found = [
                Signature(signature.name, [kind.name for kind in subtypes])
                for subtypes in self._logic.types.multi_subtypes(types)
            ]
            self._subtypes[signature] = found
        return found

    def _all_applicable_assignments(
        self,
        rule: Any,
        mapping: dict[Placeholder, Variable | None],
        used_vars: set[Variable],
        new_phs_by_depth: list[list[Placeholder]],
        depth: int,
    ) -> Iterator[Mapping[Placeholder, Variable | None]]:
        """TextWorld's search for assignments, reading :meth:`sorted_facts` instead of sorting again."""
        new_phs = new_phs_by_depth[depth]
        if depth >= len(rule.preconditions):
            yield from self._all_assignments(new_phs, mapping, used_vars, False)
            return
        pred = rule.preconditions[depth]
        for signature in self._signatures(pred.signature):
            for prop in self.sorted_facts(signature):
                for ph, var in zip(pred.parameters, prop.arguments, strict=False):
                    existing = mapping.get(ph)
                    if existing is None:
                        if var in used_vars:
                            break
                        mapping[ph] = var
                        used_vars.add(var)
                    elif existing != var:
                        break
                else:
                    yield from self._all_applicable_assignments(rule, mapping, used_vars, new_phs_by_depth, depth + 1)
                for ph in new_phs:
                    used_vars.discard(mapping.pop(ph, None))

    # ------------------------------------------------------------------ actions
    def all_applicable_actions(self) -> list[textworld.logic.Action]:
        """TextWorld's applicable actions (one per operator name, in the planner's order), bindings built once."""
        count = self.downward_lib.get_applicable_operators_count()
        operators = (fast_downward.Operator * count)()
        self.downward_lib.get_applicable_operators(operators)
        self._operators = {op.id: op for op in operators}
        actions = []
        seen = set()
        for operator in operators:
            name, mapping, operator_name = self._binding(operator)
            if operator_name in seen:
                continue
            seen.add(operator_name)
            action = textworld.logic.Action(name=name, preconditions=[], postconditions=[])
            action.id = operator.id
            action.mapping = mapping
            schema = self._logic.actions[name]
            action.command_template = schema.template
            action.feedback_rule = schema.feedback_rule
            actions.append(action)
        return actions

    def _binding(self, operator: Any) -> tuple[str, dict[Placeholder, Variable], str]:
        """The action name, parameter binding and full name of a planner operator (by id: fixed per game)."""
        binding = self._bindings.get(operator.id)
        if binding is None:
            operator_name = operator.name  # decoding the name costs more than the rest of the loop
            name, *arguments = operator_name.split()
            parameters = self._actions[name].parameters
            mapping = {
                Placeholder(p.name.strip("?"), p.type_name): Variable(arg, p.type_name)
                for p, arg in zip(parameters, arguments, strict=False)
            }
            binding = self._bindings[operator.id] = (name, mapping, operator_name)
        return binding
