"""Native snapshots and forks of :class:`~.pddl_env.FastPddlEnv` (the ALFWorld PDDL backend).

:class:`PddlSnapshots` is the part of ``FastPddlEnv`` that saves and restores game states:

* :meth:`~PddlSnapshots.save` / :meth:`~PddlSnapshots.restore` capture the planner's state id plus
  the PDDL facts and the last game state (microseconds), valid while the planner task is loaded
  (until the next ``load``/``reset``, see :meth:`~PddlSnapshots.can_restore`), also in the envs
  forked from this one or that it was forked from, which share the planner library
  (:mod:`.shared_planner`);
* elsewhere (another episode, another env, another process) :meth:`~PddlSnapshots.replay_path`
  rebuilds a state by applying the planner operators that led to it to a fresh load of the task
  (no text is derived on the way);
* :meth:`~PddlSnapshots.fork` makes an env sharing the loaded game, its caches and the planner
  library, into which a snapshot restores natively.

Example:
    >>> import textworld
    >>> from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
    >>> from agentgym_budget.tasks.alfworld.pddl_env import FastPddlEnv
    >>> game = ALFWorldEnv("pick_and_place_simple", num_games=1)._game_path("pick_and_place_simple-0")
    >>> env = FastPddlEnv(textworld.EnvInfos(admissible_commands=True, won=True))
    >>> env.load(game)
    >>> first = env.reset()
    >>> command = first["admissible_commands"][0]
    >>> saved, twin = env.save(), env.fork()
    >>> after = env.step(command)[0].feedback
    >>> twin.can_restore(saved), twin.restore(saved) is not None, twin.step(command)[0].feedback == after
    (True, True, True)
    >>> again = env.replay_path(saved.path, snapshot=saved)  # as after a reset: re-applies the operators
    >>> env.step(command)[0].feedback == after
    True
    >>> twin.close(); env.close()
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import fast_downward
from textworld.core import GameState
from textworld.envs.pddl import logic as pddl_logic
from textworld.logic import Proposition, Variable

__all__: list[str] = []


def _effect_atoms(lib: Any, operator: int) -> int | None:
    """The number of effect atoms of ``operator`` if it is applicable in the library's state, else ``None``."""
    count = lib.get_applicable_operators_count()
    operators = (fast_downward.Operator * count)()
    lib.get_applicable_operators(operators)
    return next((int(op.nb_effect_atoms) for op in operators if op.id == operator), None)


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


class PddlSnapshots:
    """Snapshot and fork methods of :class:`~.pddl_env.FastPddlEnv` (see the module docstring)."""

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
        pddl.facts_replaced()
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
                if _effect_atoms(lib, op) != atoms:  # the C library writes that many atoms: check before
                    raise ValueError(
                        f"The operator {name!r} is not applicable here with {atoms!r} effect atoms "
                        f"(it has {_effect_atoms(lib, op)}; None: not applicable)."
                    )
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

    def fork(self) -> Any:
        """A new env on the same game sharing this env's planner library (see :mod:`.shared_planner`).

        It holds no state until one of this env's snapshots is restored into it (natively: no replay).
        """
        twin = type(self).__new__(type(self))
        twin.request_infos = self.request_infos
        twin._libraries, twin._share, twin.downward_lib = self._libraries, self._share, self.downward_lib
        self._share.join()
        twin.planner_state, twin._path = None, []
        twin._game, twin._game_file, twin._game_data = self._game, self._game_file, self._game_data
        twin.walkthrough, twin._logic = self.walkthrough, self._logic
        twin._pddl_state = self._pddl_state.twin()
        twin._entity_infos, twin._infos_shared, self._infos_shared = self._entity_infos, True, True
        twin._grammar = object.__new__(type(self._grammar))  # shares the parsed rules and the caches
        twin._grammar.__dict__.update(self._grammar.__dict__)
        twin._static_commands = {}
        twin.state, twin.prev_state, twin._last_action, twin._moves = self.state, None, None, 0
        return twin
