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
goal-relevant part of the state, computed only when asked and cached per state), and native
snapshots (:meth:`AlfworldEngine.save` / ``restore``).

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

from agentgym_budget.tasks.alfworld.pddl_env import FastPddlEnv, PddlSnapshot
from agentgym_budget.tasks.alfworld.planner import LIBRARIES, LibraryPool, relevant_problem, solve, translate_for_search

__all__ = ["AlfworldEngine", "EngineSnapshot", "SeededAlfredDemangler", "seeded_global_random"]

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
        infos = self._entity_infos
        with seeded_global_random(seed):
            demangler = Demangler(game_infos=infos, shuffle=self.shuffle)
        for info in infos.values():
            info.name = demangler.demangle_alfred_name(info.id)
        self._named_with = key
        self.names_changed(("shuffled", seed) if self.shuffle else ("sorted",))

    def reset(self) -> GameState:
        self.rename(self._episode_seed)
        return super().reset()


@dataclass(frozen=True)
class EngineSnapshot:
    """Native state of an :class:`AlfworldEngine` (opaque)."""

    game_path: str
    seed: int
    pddl: PddlSnapshot


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
        facts = []
        for signature, props in self._pddl._pddl_state._facts.items():
            name = signature.name
            if name.startswith("not_") or (predicates is not None and name not in predicates):
                continue
            facts += [(name, tuple(v.name for v in prop.arguments)) for prop in props]
        return facts

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
            if not pddl.check_goal():
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

    def can_restore(self, snapshot: EngineSnapshot) -> bool:
        """Whether :meth:`restore` can restore ``snapshot`` natively (same planner task still loaded)."""
        return snapshot.game_path == self.game_path and self._pddl.can_restore(snapshot.pddl)

    def restore(self, snapshot: EngineSnapshot) -> GameState:
        """Restore ``snapshot`` (requires :meth:`can_restore`)."""
        self.seed = snapshot.seed
        return self._pddl.restore(snapshot.pddl)

    def close(self) -> None:
        """Release the planner libraries (idempotent)."""
        self._pddl.close()
        if self._search_lib is not None:
            self.pool.release(self._search_lib)
            self._search_lib = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
