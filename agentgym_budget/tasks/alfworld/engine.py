"""The ALFWorld engine: ALFWorld's text stack on :class:`~.pddl_env.FastPddlEnv`, plus experts and snapshots.

:class:`AlfworldEngine` composes exactly what ALFWorld's ``AlfredTWEnv`` composes, in the
same order (``textworld.start(game, infos, wrappers=[AlfredDemangler(...), AlfredInfos])``):

* the PDDL backend (:class:`~.pddl_env.FastPddlEnv`, TextWorld's ``PddlEnv`` with the constant
  work cached);
* :class:`SeededAlfredDemangler`, ALFWorld's ``AlfredDemangler`` (entity names such as
  ``"cabinet 3"``, from ``alfworld.agents.utils.misc.Demangler``) whose optional shuffling of
  the numbering is seeded by the episode seed instead of the global ``random``;
* ALFWorld's ``AlfredInfos`` (the game file in ``extra.gamefile``).

On top of it: the planner's plan (:meth:`AlfworldEngine.plan`: Fast Downward on the
goal-relevant part of the state, computed only when asked and cached per state), native
snapshots (:meth:`AlfworldEngine.save` / ``restore``) with a portable form
(:meth:`EngineSnapshot.portable`, :mod:`~.alfworld.portable`), and forks sharing the loaded game and
planner library (:meth:`AlfworldEngine.fork`).

Example:
    >>> engine = AlfworldEngine()
    >>> engine.pool is not None
    True
    >>> engine.close()
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import threading
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

import textworld
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
from alfworld.agents.utils.misc import Demangler
from textworld.core import GameState

from agentgym_budget.errors import SnapshotMismatchError
from agentgym_budget.tasks.alfworld.pddl_env import FastPddlEnv, PddlSnapshot
from agentgym_budget.tasks.alfworld.planner import LIBRARIES, LibraryPool, relevant_problem, solve, translate_for_search
from agentgym_budget.tasks.alfworld.portable import PortableAlfworldState, game_digest

__all__ = ["AlfworldEngine"]

_GLOBAL_RANDOM_LOCK = threading.RLock()


@contextlib.contextmanager
def seeded_global_random(state: Any) -> Iterator[list[Any]]:
    """Run code that uses the global ``random`` from ``state`` (a seed or a ``getstate()``), leaving
    the caller's global random stream untouched; yields a one-item list receiving the final state.

    Blocks of different threads run one at a time (the global stream is one per process), so
    engines in many threads draw the same numbers as in one. Code outside these blocks that uses
    the global ``random`` from another thread at the same time can still shift the draws.

    Example:
        >>> before = random.random
        >>> with seeded_global_random(3) as final:
        ...     a = random.random()
        >>> a == random.Random(3).random(), len(final)
        (True, 1)
    """
    with _GLOBAL_RANDOM_LOCK:
        outer = random.getstate()
        if isinstance(state, tuple):
            random.setstate(state)
        else:
            random.seed(state)
        final: list[Any] = []
        try:
            yield final
        finally:
            final.append(random.getstate())
            random.setstate(outer)


class SeededAlfredDemangler(AlfredDemangler):
    """ALFWorld's ``AlfredDemangler`` with the shuffle seeded from the episode seed.

    ``shuffle=False`` (ALFWorld's default) numbers same-type entities in id order, as the
    stock wrapper does. ``shuffle=True`` (ALFWorld's "domain randomization") renumbers them
    at each reset from the seed given to :meth:`seed`: same seed, same names.
    """

    def __init__(self, *args: Any, shuffle: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, shuffle=shuffle, **kwargs)
        self._episode_seed = 0
        self._named_with: Any = ()

    def load(self, *args: Any, **kwargs: Any) -> None:
        textworld.core.Wrapper.load(self, *args, **kwargs)
        self._named_with = ()

    def seed(self, seed: int | None = None) -> Any:
        self._episode_seed = seed or 0
        return super().seed(seed)

    def rename(self, seed: int) -> None:
        """Name the entities as the episode of ``seed`` names them (no-op if they already are)."""
        key = seed if self.shuffle else None
        if key == self._named_with:
            return
        own = getattr(self._wrapped_env, "own_entity_infos", None)
        infos = own() if own is not None else self._entity_infos
        with seeded_global_random(seed):
            demangler = Demangler(game_infos=infos, shuffle=self.shuffle)
        for info in infos.values():
            info.name = demangler.demangle_alfred_name(info.id)
        self._named_with = key
        self.names_changed(("shuffled", seed) if self.shuffle else ("sorted",))

    def reset(self) -> GameState:
        self.rename(self._episode_seed)
        return super().reset()


def _copy_wrapper(wrapper: Any, inner: Any) -> Any:
    """A copy of a TextWorld wrapper whose attributes are plain values, around ``inner``."""
    twin = object.__new__(type(wrapper))
    twin.__dict__.update(wrapper.__dict__)
    twin._wrapped_env = inner
    return twin


@dataclass(frozen=True)
class EngineSnapshot:
    """Native state of an :class:`AlfworldEngine` (opaque)."""

    game_path: str
    seed: int
    pddl: PddlSnapshot

    def portable(self) -> PortableAlfworldState:
        """This state as plain data, restorable in any process (:mod:`~.alfworld.portable`)."""
        state = self.pddl.state
        return PortableAlfworldState(
            game_digest=game_digest(self.game_path),
            seed=int(self.seed),
            path=self.pddl.path,
            moves=int(self.pddl.moves),
            feedback=str(state.get("feedback") or ""),
            last_command=state.get("last_command"),
        )


class AlfworldEngine:
    """One running ALFWorld game (see the module docstring).

    Args:
        shuffle_names: Renumber same-type entities at each reset, seeded by the episode seed.
        facts: Include the human-readable PDDL facts in game states (needed by the handcoded expert).
        libraries: The planner library pool.
    """

    def __init__(self, *, shuffle_names: bool = False, facts: bool = False, libraries: LibraryPool = LIBRARIES) -> None:
        infos = textworld.EnvInfos(
            admissible_commands=True, won=True, lost=True, moves=True, facts=facts, extras=["gamefile"]
        )
        self.pool = libraries
        self._pddl = FastPddlEnv(infos, libraries=libraries)
        self._demangler = SeededAlfredDemangler(shuffle=shuffle_names)
        self._env = AlfredInfos(self._demangler(self._pddl))
        self.game_path: str | None = None
        self.seed = 0
        self._search_lib: Any = None

    @property
    def state(self) -> GameState:
        """The current game state."""
        return self._pddl.state

    @property
    def pddl_env(self) -> FastPddlEnv:
        """The PDDL backend."""
        return self._pddl

    def load(self, game_path: str) -> None:
        """Load ``game_path`` (no-op if it is the loaded game)."""
        game_path = os.path.abspath(game_path)
        if game_path != self.game_path:
            self._env.load(game_path)
            self.game_path = game_path

    def reset(self, seed: int) -> GameState:
        """Start the loaded game; ``seed`` drives the entity naming when names are shuffled."""
        self.seed = seed
        self._env.seed(seed)
        return self._env.reset()

    def step(self, command: str) -> GameState:
        """Send ``command``; return the new game state (``score`` is 1 once the goal holds)."""
        state, _, _ = self._env.step(command)
        return state

    def facts(self, predicates: Collection[str] | None = None) -> list[tuple[str, tuple[str, ...]]]:
        """The true (positive) facts, as ``(predicate, argument ids)``; only ``predicates`` if given."""
        state = self._pddl._pddl_state
        if predicates is not None:
            return list(state.facts_of(name for name in predicates if not name.startswith("not_")))
        facts = []
        for signature, props in state._facts.items():
            name = signature.name
            if not name.startswith("not_"):
                facts += [(name, tuple(v.name for v in prop.arguments)) for prop in props]
        return facts

    def fact_stamp(self, predicates: Collection[str]) -> int:
        """A number that changes whenever a fact of ``predicates`` changes (equal: same facts of them)."""
        return self._pddl._pddl_state.stamp(predicates)

    def named_facts(self) -> list[str]:
        """The true facts with entity names, e.g. ``"inreceptacle(apple 1, fridge 1)"``, sorted."""
        infos = self._pddl._entity_infos
        return sorted(
            f"{name}({', '.join(infos[arg].name.strip() if arg in infos else arg for arg in args)})"
            for name, args in self.facts()
        )

    def plan(self) -> list[str]:
        """The planner's plan from the current state (``[]`` once won or when there is none).

        Fast Downward (ALFWorld's planner, same search) solves the goal-relevant part of the
        current state (:func:`~.planner.relevant_problem`) on a library of its own; the plan
        is returned as commands with the game's entity names. Computed only when called and
        cached per game state, naming and game (the search is deterministic, so a cached
        plan is the plan).
        """
        pddl = self._pddl._pddl_state
        game = self._pddl.game
        facts = self.facts()
        fluent = sorted(fact for fact in facts if fact[0] in game.fluents)
        key = (self._demangler._named_with, hashlib.blake2b(repr(fluent).encode(), digest_size=16).digest())
        plan = game.cached_plan(key)
        if plan is None:
            plan = ()
            with self._pddl.claimed():
                won = pddl.check_goal()
            if not won:
                domain = game.data["pddl_domain"]
                problem = relevant_problem(facts, game.name2type, game.goal, domain)
                if self._search_lib is None:
                    self._search_lib = self.pool.acquire()
                operators = solve(self._search_lib, translate_for_search(domain, problem))
                if operators:
                    plan = tuple(pddl.plan_to_templated_actions(operators, self._pddl._entity_infos))
            game.store_plan(key, plan)
        return list(plan)

    def save(self) -> EngineSnapshot:
        """Capture the current state."""
        return EngineSnapshot(self.game_path, self.seed, self._pddl.save())

    def can_restore(self, snapshot: EngineSnapshot | PortableAlfworldState) -> bool:
        """Whether :meth:`restore` restores ``snapshot`` natively: a snapshot of this engine's planner task
        (of this engine, or of an engine it was forked from or forked) that is still loaded."""
        return (
            isinstance(snapshot, EngineSnapshot)
            and snapshot.game_path == self.game_path
            and self._pddl.can_restore(snapshot.pddl)
        )

    def restore(self, snapshot: EngineSnapshot | PortableAlfworldState, game_path: str | None = None) -> GameState:
        """Restore ``snapshot``: natively when :meth:`can_restore`, else by applying its planner operators
        again on a fresh load of the game (a few milliseconds; no text derived on the way).

        Args:
            snapshot: A state from :meth:`save`, or its portable form (then ``game_path`` is required).
            game_path: The game file of this process the state belongs to.

        Raises:
            SnapshotMismatchError: A portable state of another game (its digest differs).
        """
        if isinstance(snapshot, PortableAlfworldState):
            if game_path is None:
                raise ValueError("Restoring a portable ALFWorld state needs the path of its game file.")
            digest = game_digest(game_path)
            if digest != snapshot.game_digest:
                raise SnapshotMismatchError(
                    f"The snapshot was taken on an ALFWorld game with digest {snapshot.game_digest}, but this env's "
                    f"game file {game_path} has digest {digest}: the games differ."
                )
            self._name_for(game_path, snapshot.seed)
            try:
                return self._pddl.replay_path(
                    snapshot.path, moves=snapshot.moves, feedback=snapshot.feedback, last_command=snapshot.last_command
                )
            except ValueError as err:
                raise SnapshotMismatchError(f"The snapshot does not fit the game {game_path}: {err}") from err
        if self.can_restore(snapshot):
            self.seed = snapshot.seed
            return self._pddl.restore(snapshot.pddl)
        self._name_for(snapshot.game_path, snapshot.seed)
        return self._pddl.replay_path(snapshot.pddl.path, snapshot=snapshot.pddl)

    def _name_for(self, game_path: str, seed: int) -> None:
        """Load ``game_path`` and name its entities as the episode of ``seed`` does."""
        self.load(game_path)
        self.seed = seed
        self._env.seed(seed)
        self._demangler.rename(self._demangler._episode_seed)

    def fork(self) -> AlfworldEngine:
        """A new engine on the loaded game, sharing this engine's planner library and caches.

        A snapshot of this engine restores into the fork natively (no replay); each engine's planner
        state is swapped in when it acts (:mod:`.shared_planner`).
        """
        twin = AlfworldEngine.__new__(AlfworldEngine)
        twin.pool, twin.game_path, twin.seed, twin._search_lib = self.pool, self.game_path, self.seed, None
        twin._pddl = self._pddl.fork()
        twin._demangler = _copy_wrapper(self._demangler, twin._pddl)  # naming, seed, shuffle flag
        twin._env = _copy_wrapper(self._env, twin._demangler)  # the game file
        return twin

    def close(self) -> None:
        """Release the planner libraries (idempotent)."""
        self._pddl.close()
        if self._search_lib is not None:
            self.pool.release(self._search_lib)
            self._search_lib = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
