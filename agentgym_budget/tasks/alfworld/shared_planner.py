"""A planner library shared by the forks of an ALFWorld game, each env with its own planner state.

The ALFWorld engine keeps its game state in Fast Downward's library (:mod:`.planner`): the loaded
task, a registry of the states reached so far, and the current state. A state is known by its id
in the registry, which only that library instance holds, and loading a task (every ``reset``)
empties the registry. Forks of an env play the same task from states of the same episode, so
they share the library instead of loading the task again (about 2 ms plus a library from the
pool per fork) and replaying the episode: a :class:`PlannerShare` records which env the library
currently holds, and :meth:`PlannerShare.claim` parks that env's state id and sets the
claimant's before it calls the library (a few microseconds).

A state id stays valid while the registry is not emptied: :attr:`PlannerShare.token` and
:attr:`PlannerShare.generation` identify the registry, and an env that must load a task (a new
game or a reset) while others share its library first takes a library of its own.

Example:
    >>> from agentgym_budget.tasks.alfworld.planner import LibraryPool
    >>> pool = LibraryPool()
    >>> share = PlannerShare(pool)
    >>> share.join(), share.users
    (None, 2)
    >>> share.leave("a fork"), share.leave("the env"), pool.idle
    (False, True, 1)
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from agentgym_budget.tasks.alfworld.planner import LibraryPool

__all__: list[str] = []

_TOKENS = itertools.count(1)


class PlannerShare:
    """A planner library from ``pool`` and the envs that share it (see the module docstring).

    Args:
        pool: Where the library comes from and goes back to when its last user leaves.
    """

    def __init__(self, pool: LibraryPool) -> None:
        self.pool = pool
        self.lib = pool.acquire()
        self.lock = threading.RLock()
        self.token = next(_TOKENS)
        self.generation = 0
        self.users = 1
        self.holder: Any = None

    def join(self) -> None:
        """Add a user (a fork)."""
        with self.lock:
            self.users += 1

    def leave(self, user: Any) -> bool:
        """Remove ``user``; the library goes back to the pool after the last one. Returns whether it did."""
        with self.lock:
            if self.holder is user:
                self.holder = None
            self.users -= 1
            last = self.users == 0
        if last:
            self.pool.release(self.lib)
        return last

    def claim(self, user: Any) -> None:
        """Make the library hold ``user``'s state (call with :attr:`lock` held).

        ``user`` has a ``planner_state`` attribute: the id of its state while another user holds
        the library, or ``None`` for a user that takes the library as it is.
        """
        holder = self.holder
        if holder is user:
            return
        if holder is not None:
            holder.planner_state = self.lib.get_state_id()
        if user.planner_state is not None:
            self.lib.set_state_id(user.planner_state)
            user.planner_state = None
        self.holder = user

    def task_loaded(self) -> None:
        """Record that a task was (re)loaded: every state id of the old registry is void."""
        self.generation += 1
