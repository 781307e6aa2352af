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
* :meth:`save` / :meth:`restore` capture the planner's state id plus the PDDL facts and the
  last game state (microseconds), valid while the planner task is loaded (until the next
  ``load``/``reset``: see :meth:`can_restore`); elsewhere (another episode, another env,
  another process) :meth:`replay_path` rebuilds a state by applying the planner operators
  that led to it (no text is derived on the way);
* :meth:`fork` makes an env sharing the loaded game and the planner library
  (:mod:`.shared_planner`), into which a snapshot of this env restores natively.

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
import copy
import ctypes
import functools
import json
import os
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import textworld
from textworld.core import GameState
from textworld.envs.pddl import logic as pddl_logic
from textworld.envs.pddl.pddl import PddlEnv
from textworld.logic import Proposition, Variable

from agentgym_budget.tasks.alfworld.grammar import CompiledGrammar
from agentgym_budget.tasks.alfworld.planner import LIBRARIES, LibraryPool, Translation, translate
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
    with open(path) as file:
        data = json.load(file)
    logic = pddl_logic.GameLogic(domain=data["pddl_domain"], grammar=data["grammar"])
    translation = translate(data["pddl_domain"], data["pddl_problem"])
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
    """The :class:`GameData` of a ``game.tw-pddl`` file (cached per process, reloaded if the file changes)."""
    path = os.path.abspath(path)
    return _load_game(path, os.path.getmtime(path))


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


def _twin_state(state: _CachedPddlState) -> _CachedPddlState:
    """A PDDL state object sharing ``state``'s game constants, with no facts (a restore fills them)."""
    twin = _CachedPddlState.__new__(_CachedPddlState)
    twin.__dict__.update(state.__dict__)
    twin._facts, twin._vars_by_name, twin._vars_by_type = defaultdict(set), {}, defaultdict(set)
    twin._var_counts, twin._operators = Counter(), {}
    return twin


@dataclass(frozen=True)
class PddlSnapshot:
    """Native state of a :class:`FastPddlEnv` (opaque; restoring it never mutates it).

    ``path`` lists the planner operators applied since the task was loaded, as ``(name, number of
    effect atoms)``: applying them again rebuilds the state on any library holding the same task.
    """

    token: int
    epoch: int
    state_id: int
    path: tuple[tuple[str, int], ...]
    facts: tuple[tuple[Any, frozenset[Proposition]], ...]
    vars_by_name: dict[str, Variable]
    vars_by_type: tuple[tuple[str, frozenset[Variable]], ...]
    var_counts: Counter
    operators: dict[int, Any]
    state: GameState
    prev_state: GameState | None
    last_action: Any
    moves: int


class FastPddlEnv(PddlEnv):
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

    def own_entity_infos(self) -> dict[str, Any]:
        """The entity infos, copied first if a fork shares them (call it before renaming entities)."""
        if self._infos_shared:
            self._entity_infos = {key: copy.copy(info) for key, info in self._entity_infos.items()}
            self._infos_shared = False
        return self._entity_infos

    @contextlib.contextmanager
    def claimed(self) -> Iterator[Any]:
        """Hold the planner library, in this env's state, for the duration (yields the library)."""
        share = self._share
        with share.lock:
            share.claim(self)
            yield share.lib

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

    # ------------------------------------------------------------------ snapshots
    def save(self) -> PddlSnapshot:
        """Capture the current game state (see :meth:`can_restore` for where it restores natively)."""
        pddl = self._pddl_state
        with self.claimed() as lib:
            state_id = lib.get_state_id()
        return PddlSnapshot(
            token=self._share.token,
            epoch=self._share.generation,
            state_id=state_id,
            path=tuple(self._path),
            facts=tuple((sig, frozenset(facts)) for sig, facts in pddl._facts.items()),
            vars_by_name=dict(pddl._vars_by_name),
            vars_by_type=tuple((kind, frozenset(names)) for kind, names in pddl._vars_by_type.items()),
            var_counts=Counter(pddl._var_counts),
            operators=dict(pddl._operators),
            state=GameState(self.state),
            prev_state=GameState(self.prev_state) if self.prev_state is not None else None,
            last_action=self._last_action,
            moves=self._moves,
        )

    def can_restore(self, snapshot: PddlSnapshot) -> bool:
        """Whether ``snapshot`` restores natively: taken on this planner library since its task was last loaded
        (by this env or by an env it was forked from or forked)."""
        return snapshot.token == self._share.token and snapshot.epoch == self._share.generation

    def restore(self, snapshot: PddlSnapshot) -> GameState:
        """Put the game back in ``snapshot`` (requires :meth:`can_restore`; else use :meth:`replay_path`)."""
        if not self.can_restore(snapshot):
            raise ValueError("This snapshot belongs to another planner task; use replay_path() instead.")
        with self.claimed() as lib:
            lib.set_state_id(snapshot.state_id)
        self._path = list(snapshot.path)
        return self._restore_python(snapshot)

    def _restore_python(self, snapshot: PddlSnapshot) -> GameState:
        pddl = self._pddl_state
        pddl._facts = defaultdict(set, ((sig, set(facts)) for sig, facts in snapshot.facts))
        pddl._vars_by_name = dict(snapshot.vars_by_name)
        pddl._vars_by_type = defaultdict(set, ((kind, set(names)) for kind, names in snapshot.vars_by_type))
        pddl._var_counts = Counter(snapshot.var_counts)
        pddl._operators = dict(snapshot.operators)
        self.state = GameState(snapshot.state)
        self.prev_state = GameState(snapshot.prev_state) if snapshot.prev_state is not None else None
        self._last_action = snapshot.last_action
        self._moves = snapshot.moves
        return self.state

    def replay_path(
        self,
        path: Sequence[tuple[str, int]],
        *,
        snapshot: PddlSnapshot | None = None,
        moves: int = 0,
        feedback: str = "",
        last_command: str | None = None,
    ) -> GameState:
        """Rebuild a state of the loaded game from the planner operators that led to it.

        The task is loaded afresh and ``path`` (``(operator name, number of effect atoms)`` pairs, as in
        :attr:`PddlSnapshot.path`) applied to it. The rest comes from ``snapshot`` when given (a native
        snapshot of this process); otherwise the game state is derived again at the reached state, with
        ``moves``, ``feedback`` and ``last_command`` as given.

        Raises:
            ValueError: An operator of ``path`` does not exist in the loaded task.
        """
        self._pddl_state = self._new_state()
        pddl = self._pddl_state
        with self.claimed() as lib:
            operator_id = lib.get_operator_id_from_name
            operator_id.argtypes, operator_id.restype = [ctypes.c_char_p], ctypes.c_int
            for name, atoms in path:
                op = operator_id(name.encode("cp1252"))
                if op < 0:
                    raise ValueError(f"The planner task has no operator {name!r}.")
                effects = (pddl_logic.Atom * int(atoms))()
                lib.apply_operator(op, effects)
                for effect in effects:
                    fact = effect.get_fact(pddl.name2type)
                    pddl.remove_fact(fact.negate())
                    pddl.add_fact(fact)
            self._path = [(str(name), int(atoms)) for name, atoms in path]
            if snapshot is not None:
                return self._restore_python(snapshot)
            self.prev_state = None
            self.state = GameState()
            self.state.feedback = self.state.raw = feedback
            if last_command is not None:
                self.state.last_command = last_command
            self._last_action = None
            self._moves = moves
            self._gather_infos()
            self.state["score"] = 1 if self.state["won"] else 0
            self.state["done"] = self.state["won"] or self.state["lost"]
            return self.state

    def fork(self) -> FastPddlEnv:
        """A new env on the same game sharing this env's planner library (see :mod:`.shared_planner`).

        It holds no state until one of this env's snapshots is restored into it (natively: no replay).
        """
        twin = FastPddlEnv.__new__(FastPddlEnv)
        twin.request_infos = self.request_infos
        twin._libraries, twin._share, twin.downward_lib = self._libraries, self._share, self.downward_lib
        self._share.join()
        twin.planner_state, twin._path = None, []
        twin._game, twin._game_file, twin._game_data = self._game, self._game_file, self._game_data
        twin.walkthrough, twin._logic = self.walkthrough, self._logic
        twin._pddl_state = _twin_state(self._pddl_state)
        twin._entity_infos, twin._infos_shared, self._infos_shared = self._entity_infos, True, True
        twin._grammar = object.__new__(CompiledGrammar)  # shares the parsed rules and the caches
        twin._grammar.__dict__.update(self._grammar.__dict__)
        twin.state, twin.prev_state, twin._last_action, twin._moves = self.state, None, None, 0
        return twin

    # ------------------------------------------------------------------ resources
    def close(self) -> None:
        """Leave the planner library, which goes back to its pool after its last user (idempotent)."""
        share = self.__dict__.pop("_share", None)
        self.__dict__.pop("downward_lib", None)
        if share is not None:
            share.leave(self)
