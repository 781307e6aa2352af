"""The ScienceWorld expert: the engine's gold path, re-planned after a detour from the last gold step taken.

ScienceWorld has no planner that starts from an arbitrary state; what it has is a gold action
sequence per task variation (generated with the task, cached by :func:`~agentgym_budget.tasks.sciworld.engine.gold_path`). The
expert's plan is the part of it not yet played: :class:`GoldTracker` advances along the path each time
the episode's action is the path's next step, and ignores every other action. So after a detour the
plan is the rest of the gold path from the last gold step taken (the nearest gold-path prefix): a
detour that changed nothing the task needs (looking, reading, an unknown command, an action the gold
path does not depend on) leaves a plan that still wins; one that did (a wrong ``focus on`` loses at
once; moving, pouring or eating what the task needs) may leave a plan that no longer does. How often
it still wins is measured in ``benchmarks/sciworld_gold.py`` (ScienceWorld docs page).

The plan never gets longer, so the probes' judge sees an error only when the task is lost or the score
falls (see the docs page for what each probe means on this family).

Example:
    >>> tracker = GoldTracker()
    >>> tracker.start(("open door to kitchen", "go to kitchen", "focus on water"))
    >>> tracker.advance("look around"); tracker.advance("open door to kitchen")
    >>> tracker.plan
    ('go to kitchen', 'focus on water')
"""

from __future__ import annotations

__all__: list[str] = []  # the env's part


class GoldTracker:
    """Where an episode is on its task's gold path (see the module docstring)."""

    def __init__(self) -> None:
        self.path: tuple[str, ...] = ()
        self.position = 0

    def start(self, path: tuple[str, ...]) -> None:
        """A new episode on the task whose gold path is ``path``."""
        self.path, self.position = path, 0

    def advance(self, action: str) -> None:
        """The episode played ``action``: one gold step further if it was the next one."""
        if self.position < len(self.path) and action == self.path[self.position]:
            self.position += 1

    @property
    def plan(self) -> tuple[str, ...]:
        """The rest of the gold path."""
        return self.path[self.position :]
