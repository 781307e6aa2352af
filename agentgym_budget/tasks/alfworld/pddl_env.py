"""A faster drop-in for TextWorld's ``PddlEnv`` with native state snapshots and no leaks.

:class:`FastPddlEnv` is TextWorld's PDDL backend (``textworld.envs.pddl.PddlEnv``, the
engine under ALFWorld): the same game file, the same Fast Downward planner state, the same
``PddlState`` fact updates and the same grammar rules, so it returns the same observations,
admissible commands, rewards and infos step for step. It differs in what it does once:

* a game's PDDL-to-SAS translation and parsed grammar are computed once per machine and
  stored as data (:mod:`.parsed_game`); loaded games are kept per process in a cache bounded
  by memory (:func:`load_game`, :data:`GAME_CACHE`); the stock engine translates the problem
  twice at every ``reset`` and parses the grammar at every ``load``;
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

import os
import sys
from typing import Any

import textworld
from textworld.core import GameState
from textworld.envs.pddl.pddl import PddlEnv
from textworld.logic import Proposition, Variable

from agentgym_budget.errors import DataError
from agentgym_budget.storage.game_cache_size import GAME_CACHE_ENV_VAR as SHARED_GAME_CACHE_ENV_VAR
from agentgym_budget.storage.game_cache_size import game_cache_bytes
from agentgym_budget.storage.memory_cache import MemoryCache
from agentgym_budget.tasks.alfworld.data import read_game_data
from agentgym_budget.tasks.alfworld.game_data import GameData
from agentgym_budget.tasks.alfworld.grammar import CompiledGrammar, check_grammar
from agentgym_budget.tasks.alfworld.parsed_game import ActionSchema, Parameter, build_logic, load_parsed
from agentgym_budget.tasks.alfworld.pddl_snapshots import PddlSnapshot as PddlSnapshot
from agentgym_budget.tasks.alfworld.pddl_snapshots import PddlSnapshots
from agentgym_budget.tasks.alfworld.pddl_state import CachedPddlState
from agentgym_budget.tasks.alfworld.planner import LIBRARIES, LibraryPool
from agentgym_budget.tasks.alfworld.shared_planner import PlannerShare
from agentgym_budget.tasks.textworld.parsers import make_parsers_thread_safe

__all__ = ["GAME_CACHE", "load_game"]

make_parsers_thread_safe()

_FACT_BYTES = 400  # rough size of one Proposition in memory
_DYNAMIC_BYTES = 256 * 1024  # allowance for a game's derivation and plan caches
_INTERNED_KEPT = 50_000


def _facts(pairs: list[list[Any]], name2type: dict[str, str]) -> list[Proposition]:
    def variable(arg: str) -> Variable:  # TextWorld's Atom.get_fact spelling of the names
        return Variable(arg.upper() if arg.lower() in ("i", "p") else arg, name2type[arg])

    return [Proposition(name, [variable(arg) for arg in args]) for name, args in pairs]


def _read_game(path: str) -> GameData:
    _bound_interned_propositions()
    data = read_game_data(path)  # JSON with the game's text fields; DataError naming the file
    try:
        parsed = load_parsed(data["pddl_domain"], data["grammar"], data["pddl_problem"])
        logic = build_logic(data["pddl_domain"], parsed)
    except DataError:
        raise
    except (Exception, SystemExit) as err:  # TatSu's FailedParse, the translator's errors and sys.exit, ...
        message = " ".join(str(err).split())[:300]
        raise DataError(
            f"ALFWorld data: the game {path} cannot be parsed or translated ({type(err).__name__}: {message})."
        ) from err
    check_grammar(logic, path)  # expressions parsed and checked, never evaluated
    document = parsed.document
    name2type = document["objects"]
    actions = {
        name: ActionSchema(name, tuple(Parameter(*pair) for pair in params))
        for name, params in document["actions"].items()
    }
    game = GameData(
        path,
        data,
        logic,
        parsed.sas,
        parsed.sas_replan,
        frozenset(document["fluents"]),
        name2type,
        actions,
        [Proposition(name, [Variable(arg, name2type[arg]) for arg in args]) for name, args in document["init"]],
        _facts(document["state"], name2type),
    )
    game.command_templates = sorted({action.template for action in logic.actions.values()})
    facts = len(game.init_facts) + len(game.state_facts)
    raw_size = os.path.getsize(path)
    game.weight = raw_size * 3 + len(parsed.sas) + len(parsed.sas_replan) + facts * _FACT_BYTES + _DYNAMIC_BYTES
    return game


def _bound_interned_propositions() -> None:
    """Empty TextWorld's table of interned propositions once it holds more than :data:`_INTERNED_KEPT`.

    TextWorld makes ``Proposition`` / ``Signature`` through ``mementos``, which keeps every instance
    ever made in one process-wide dictionary, never emptied: ~300 entries (~120 KB) per ALFWorld game
    played, so a process sampling the whole train split would grow by ~3.5 GB. Their equality and
    hash are by value, so the table only saves memory; emptying it changes no result.
    """
    table = getattr(sys.modules.get("mementos.core"), "_memento_cache", None)
    if isinstance(table, dict) and len(table) > _INTERNED_KEPT:
        table.clear()


def _cache_capacity() -> int:
    return game_cache_bytes()


GAME_CACHE_ENV_VAR = SHARED_GAME_CACHE_ENV_VAR
"""Environment variable: megabytes of loaded games kept per process (default 128; shared with TextWorld,
see :mod:`agentgym_budget.storage.game_cache_size`)."""

GAME_CACHE: MemoryCache[GameData] = MemoryCache(_cache_capacity(), weigh=lambda game: game.weight)
"""The loaded games of this process, least recently used evicted past :data:`GAME_CACHE_ENV_VAR` megabytes
(by the estimate :attr:`GameData.weight`); a game missing here is read from its stored form on disk."""


def load_game(path: str) -> GameData:
    """The :class:`GameData` of a ``game.tw-pddl`` file (cached per process, reloaded if the file changes).

    A game not in :data:`GAME_CACHE` is read from the parsed form stored on disk
    (:mod:`.parsed_game`), built there the first time the game is seen on this machine.
    Threads loading the same game at once read it once.

    Raises:
        DataError: The file cannot be read or is not a consistent game (the message names it).
    """
    path = os.path.abspath(path)
    try:
        return GAME_CACHE.get((path, os.path.getmtime(path)), lambda: _read_game(path))
    except DataError:
        raise
    except Exception as err:  # e.g. the problem uses an object it does not declare
        raise DataError(f"ALFWorld data: cannot load the game {path} ({type(err).__name__}: {err}).") from err


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
        self._static_commands: dict[int, tuple[str, str]] = {}

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
        self._static_commands: dict[int, tuple[str, str]] = {}

    def names_changed(self, naming: Any = None) -> None:
        """Drop cached text after entity names changed (the demangler calls it).

        Args:
            naming: A key that identifies the new names for this game (the same key must always
                mean the same names); cached text is then shared with other envs using it.
                ``None`` keeps the cache private.
        """
        self._static_commands = {}
        if self._grammar is not None:
            if naming is None:
                self._grammar.clear_results()
            else:
                self._grammar.use_results(self._game.derivations_for(naming))

    def _new_state(self) -> CachedPddlState:
        if self._share.users > 1:  # loading a task empties the registry other envs still use
            self._share.leave(self)
            self._share = PlannerShare(self._libraries)
            self.downward_lib = self._share.lib
            self.planner_state = None
        self._path = []
        with self.claimed():
            self._share.task_loaded()
            return CachedPddlState(self.downward_lib, self._game)

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
        state["command_templates"] = list(self._game.command_templates)
        state["won"] = pddl.check_goal()
        state["lost"] = False
        state["_entity_infos"] = dict(self._entity_infos)
        state["_facts"] = list(pddl.facts)
        if self.request_infos.facts:
            state["facts"] = list(map(self._get_human_readable_fact, state["_facts"]))
        state["last_action"] = None
        state["_last_action"] = self._last_action
        state["_valid_actions"] = list(pddl.all_applicable_actions())
        state["_valid_commands"] = commands = self._commands(state["_valid_actions"])
        state["admissible_commands"] = sorted(set(commands))
        if self.request_infos.moves:
            state["moves"] = self._moves
        if self.request_infos.policy_commands:
            state["policy_commands"] = pddl.replan(self._entity_infos)

    def _commands(self, actions: list[Any]) -> list[str]:
        """The command of each action (its template derived in the current state, with entity names).

        Commands whose derivation reads only static predicates are kept per operator until names change.
        """
        static, names, commands = self._static_commands, None, []
        for action in actions:
            known = static.get(action.id)
            if known is None:
                if names is None:
                    names = {k: info.name for k, info in self._entity_infos.items()}
                template, fixed = self._grammar.derive_static(action.command_template, self._context(action.mapping))
                action.command_template = template
                known = (template, action.format_command(names))
                if fixed:
                    static[action.id] = known
            action.command_template = known[0]
            commands.append(known[1])
        return commands

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
