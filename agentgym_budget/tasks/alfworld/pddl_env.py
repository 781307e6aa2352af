"""A faster drop-in for TextWorld's ``PddlEnv`` with native state snapshots and no leaks.

:class:`FastPddlEnv` is TextWorld's PDDL backend (``textworld.envs.pddl.PddlEnv``, the
engine under ALFWorld): the same game file, the same Fast Downward planner state, the same
``PddlState`` fact updates and the same grammar rules, so it returns the same observations,
admissible commands, rewards and infos step for step. It differs in what it does once:

* a game's JSON, its ``GameLogic`` (the parsed grammar) and its PDDL-to-SAS translation are
  cached per process (:func:`load_game`, :func:`~.planner.translate`); the stock engine
  translates the problem twice at every ``reset``;
* text is derived by :class:`~.grammar.CompiledGrammar` (parsed once, no context copies,
  static derivations cached) instead of re-parsing every template at every step;
* the planner library comes from :data:`~.planner.LIBRARIES` and goes back on :meth:`close`,
  and the game file is read with a context manager (the stock engine leaks both);
* native snapshots and forks (:mod:`.pddl_snapshots`): ``save`` / ``restore`` in microseconds
  while the planner task is loaded, ``replay_path`` elsewhere, ``fork`` sharing the planner
  library (:mod:`.shared_planner`).

It composes with TextWorld wrappers exactly like ``PddlEnv`` (ALFWorld's ``AlfredDemangler``
and ``AlfredInfos``).

Example:
    >>> import textworld
    >>> from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
    >>> game = ALFWorldEnv("pick_and_place_simple", num_games=1)._game_path("pick_and_place_simple-0")
    >>> env = FastPddlEnv(textworld.EnvInfos(admissible_commands=True, won=True))
    >>> env.load(game)
    >>> state = env.reset()
    >>> saved = env.save()
    >>> after = env.step("look")[0].feedback
    >>> _ = env.restore(saved)
    >>> env.step("look")[0].feedback == after, env.step("fly")[0].feedback
    (True, 'Nothing happens.')
    >>> env.close()
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import Any

import textworld
from textworld.core import GameState
from textworld.envs.pddl import logic as pddl_logic
from textworld.envs.pddl.pddl import PddlEnv
from textworld.logic import Proposition, Variable

from agentgym_budget.errors import DataError
from agentgym_budget.tasks.alfworld.data import read_game, translate_game
from agentgym_budget.tasks.alfworld.grammar import CompiledGrammar
from agentgym_budget.tasks.alfworld.pddl_snapshots import PddlSnapshot, PddlSnapshots
from agentgym_budget.tasks.alfworld.planner import LIBRARIES, LibraryPool, Translation
from agentgym_budget.tasks.alfworld.shared_planner import PlannerShare

__all__ = ["FastPddlEnv", "GameData", "PddlSnapshot", "load_game"]

_NAMINGS_KEPT = 8


@dataclass
class GameData:
    """Everything about one game file that does not change while it is played (shared).

    Attributes:
        path: The ``game.tw-pddl`` file.
        data: Its JSON content.
        logic: TextWorld's ``GameLogic`` (actions and grammar).
        translation: The planner's translation of the problem.
        fluents: Lower-case names of the predicates that actions change.
    """

    path: str
    data: dict[str, Any]
    logic: Any
    translation: Translation
    fluents: frozenset[str]
    name2type: dict[str, str] = field(default_factory=dict)
    actions: dict[str, Any] = field(default_factory=dict)
    init_facts: list[Proposition] = field(default_factory=list)
    state_facts: list[Proposition] | None = None
    derivations: OrderedDict[Any, dict[tuple[Any, ...], str]] = field(default_factory=OrderedDict)
    plans: OrderedDict[Any, tuple[str, ...]] = field(default_factory=OrderedDict)

    def derivations_for(self, naming: Any) -> dict[tuple[Any, ...], str]:
        """The shared cache of static derivations for one entity naming (a few namings are kept)."""
        results = self.derivations.get(naming)
        if results is None:
            results = self.derivations[naming] = {}
            if len(self.derivations) > _NAMINGS_KEPT:
                self.derivations.popitem(last=False)
        else:
            self.derivations.move_to_end(naming)
        return results

    @property
    def goal(self) -> str:
        """The problem's ``(:goal ...)`` section, up to the end of the problem."""
        problem = self.data["pddl_problem"]
        return problem[problem.lower().index("(:goal") :]


def _init_proposition(atom: Any, name2type: dict[str, str]) -> Proposition | None:
    import fast_downward

    if isinstance(atom, fast_downward.translate.pddl.conditions.Atom):
        if atom.predicate == "=":
            return None
        return Proposition(atom.predicate, [Variable(arg, name2type[arg]) for arg in atom.args])
    if isinstance(atom, fast_downward.translate.pddl.f_expression.Assign):
        if atom.fluent.symbol == "total-cost":
            return None
        name = f"{atom.expression.value}"
        if name.isdigit():
            return None
        return Proposition(name, [Variable(arg, name2type[arg]) for arg in atom.fluent.args])
    return None


@functools.lru_cache(maxsize=32)
def _load_game(path: str, modified: float) -> GameData:
    data, logic = read_game(path)  # parsed and checked, never evaluated; DataError naming the file
    translation = translate_game(path, data)
    task = translation.task
    for kind in task.types:
        with contextlib.suppress(ValueError):  # already known
            logic.types.add(textworld.logic.Type(kind.name, kind.supertype_names))
    fluents = {effect.literal.predicate.lower() for action in task.actions for effect in action.effects}
    fluents |= {axiom.name.lower() for axiom in task.axioms}
    name2type = {o.name: o.type_name for o in task.objects}
    game = GameData(path, data, logic, translation, frozenset(fluents), name2type, {a.name: a for a in task.actions})
    game.init_facts = [fact for fact in (_init_proposition(atom, name2type) for atom in task.init) if fact]
    return game


def load_game(path: str) -> GameData:
    """The :class:`GameData` of a ``game.tw-pddl`` file (cached per process, reloaded if the file changes).

    Raises:
        DataError: The file cannot be read or is not a consistent game (the message names it).
    """
    path = os.path.abspath(path)
    try:
        return _load_game(path, os.path.getmtime(path))
    except DataError:
        raise
    except Exception as err:  # e.g. the problem uses an object it does not declare
        raise DataError(f"ALFWorld data: cannot load the game {path} ({type(err).__name__}: {err}).") from err


class _CachedPddlState(pddl_logic.PddlState):
    """TextWorld's ``PddlState``, built from a cached translation instead of translating again."""

    def __init__(self, downward_lib: Any, game: GameData) -> None:
        self._facts = defaultdict(set)
        self._vars_by_name = {}
        self._vars_by_type = defaultdict(set)
        self._var_counts = Counter()
        self._logic = game.logic
        self.downward_lib = downward_lib
        self.pddl_problem = game.data["pddl_problem"]
        self.task = game.translation.task
        self.sas, self.sas_replan = game.translation.sas, game.translation.sas_replan
        self._actions = game.actions
        downward_lib.load_sas(game.translation.sas)
        downward_lib.load_sas_replan(game.translation.sas_replan)
        downward_lib.agb_has_task = True
        self.name2type = game.name2type
        self.add_facts(game.init_facts)
        if game.state_facts is None:
            atoms = (pddl_logic.Atom * downward_lib.get_state_size())()
            downward_lib.get_state(atoms)
            facts = (atom.get_fact(self.name2type) for atom in atoms)
            game.state_facts = [fact for fact in facts if not fact.is_negation]
        self.add_facts(game.state_facts)

    def twin(self) -> _CachedPddlState:
        """A state object sharing this one's game constants, with no facts (a restore fills them)."""
        twin = _CachedPddlState.__new__(_CachedPddlState)
        twin.__dict__.update(self.__dict__)
        twin._facts, twin._vars_by_name, twin._vars_by_type = defaultdict(set), {}, defaultdict(set)
        twin._var_counts, twin._operators = Counter(), {}
        return twin


class FastPddlEnv(PddlSnapshots, PddlEnv):
    """TextWorld's ``PddlEnv`` with the constant work cached (see the module docstring).

    Args:
        infos: What the game states include (``textworld.EnvInfos``).
        libraries: Where planner libraries come from (tests may pass their own pool).
    """

    def __init__(self, infos: textworld.EnvInfos | None = None, *, libraries: LibraryPool = LIBRARIES) -> None:
        textworld.Environment.__init__(self, infos)
        self._libraries = libraries
        self._share = PlannerShare(libraries)
        self.downward_lib = self._share.lib
        self.planner_state: int | None = None
        self._path: list[tuple[str, int]] = []
        self._infos_shared = False
        self._game: GameData | None = None
        self._grammar: CompiledGrammar | None = None

    # ------------------------------------------------------------------ game
    @property
    def game(self) -> GameData | None:
        """The loaded game (``None`` before :meth:`load`)."""
        return self._game

    def load(self, filename_or_data: str) -> None:
        game = load_game(filename_or_data)
        self._game = game
        self._game_file = filename_or_data
        self._game_data = game.data
        self.walkthrough = game.data.get("walkthrough", None)
        self._logic = game.logic
        self._pddl_state = self._new_state()
        self._entity_infos = self._get_entity_infos()
        self._infos_shared = False
        self._grammar = CompiledGrammar(game.logic.grammar, game.fluents)

    def names_changed(self, naming: Any = None) -> None:
        """Drop cached text after entity names changed (the demangler calls it).

        Args:
            naming: A key that identifies the new names for this game (the same key must always
                mean the same names); cached text is then shared with other envs using it.
                ``None`` keeps the cache private.
        """
        if self._grammar is not None:
            if naming is None:
                self._grammar.clear_results()
            else:
                self._grammar.use_results(self._game.derivations_for(naming))

    def _new_state(self) -> _CachedPddlState:
        if self._share.users > 1:  # loading a task empties the registry other envs still use
            self._share.leave(self)
            self._share = PlannerShare(self._libraries)
            self.downward_lib = self._share.lib
            self.planner_state = None
        self._path = []
        with self.claimed():
            self._share.task_loaded()
            return _CachedPddlState(self.downward_lib, self._game)

    def _context(self, mapping: dict[Any, Any]) -> dict[str, Any]:
        infos = self._entity_infos
        return {
            "state": self._pddl_state,
            "variables": {ph.name: infos[var.name] for ph, var in mapping.items()},
            "mapping": mapping,
            "entity_infos": infos,
        }

    # ------------------------------------------------------------------ play
    def _gather_infos(self) -> None:
        state, pddl = self.state, self._pddl_state
        state["command_templates"] = sorted({action.template for action in self._logic.actions.values()})
        state["won"] = pddl.check_goal()
        state["lost"] = False
        state["_entity_infos"] = dict(self._entity_infos)
        state["_facts"] = list(pddl.facts)
        if self.request_infos.facts:
            state["facts"] = list(map(self._get_human_readable_fact, state["_facts"]))
        state["last_action"] = None
        state["_last_action"] = self._last_action
        state["_valid_actions"] = list(pddl.all_applicable_actions())
        names = {k: info.name for k, info in self._entity_infos.items()}
        commands = []
        for action in state["_valid_actions"]:
            action.command_template = self._grammar.derive_cached(
                action.command_template, self._context(action.mapping)
            )
            commands.append(action.format_command(names))
        state["_valid_commands"] = commands
        state["admissible_commands"] = sorted(set(commands))
        if self.request_infos.moves:
            state["moves"] = self._moves
        if self.request_infos.policy_commands:
            state["policy_commands"] = pddl.replan(self._entity_infos)

    def reset(self) -> GameState:
        self._pddl_state = self._new_state()
        with self.claimed():
            return self._reset()

    def _reset(self) -> GameState:
        self.prev_state = None
        self.state = GameState()
        self._last_action = None
        self._moves = 0
        self.state.feedback = self._grammar.derive("#intro#", self._context({}))
        self.state.raw = self.state.feedback
        self._gather_infos()
        if "walkthrough" in self.request_infos.extras:
            self.state["extra.walkthrough"] = self.walkthrough or self._pddl_state.replan(self._entity_infos)
        return self.state

    def step(self, command: str) -> tuple[GameState, int, bool]:
        with self.claimed():
            return self._step(command)

    def _step(self, command: str) -> tuple[GameState, int, bool]:
        command = command.strip()
        self.prev_state = self.state
        self.state = GameState()
        self.state.last_command = command
        self._last_action = None
        try:  # the same scope as the stock engine: any ValueError means "nothing happens"
            index = self.prev_state["_valid_commands"].index(command)
            self._last_action = self.prev_state["_valid_actions"][index]
            operator = self._pddl_state._operators[self._last_action.id]
            self._pddl_state.apply(self._last_action)
            self._path.append((operator.name, operator.nb_effect_atoms))
            context = self._context(self._last_action.mapping)
            self.state.feedback = self._grammar.derive(self._last_action.feedback_rule, context)
            self._moves += 1
        except ValueError:
            self.state.feedback = "Nothing happens."
        self.state.raw = self.state.feedback
        self._gather_infos()
        if "walkthrough" in self.request_infos.extras:
            self.state["extra.walkthrough"] = self.prev_state["extra.walkthrough"]
        self.state["score"] = 1 if self.state["won"] else 0
        self.state["done"] = self.state["won"] or self.state["lost"]
        return self.state, self.state["score"], self.state["done"]

    # ------------------------------------------------------------------ resources
    def close(self) -> None:
        """Leave the planner library, which goes back to its pool after its last user (idempotent)."""
        share = self.__dict__.pop("_share", None)
        self.__dict__.pop("downward_lib", None)
        if share is not None:
            share.leave(self)
