"""TextWorld's ``progress`` signal: the game score, or the share of the winning route already walked.

Two modes, chosen with the ``progress=`` argument of every TextWorld id:

* ``"score"``: ``score / max_score`` (``1.0`` once won when the game has no score). It moves whenever
  the game awards points, so it is a process signal on games with many rewarded steps (Cooking,
  Simple), and none on games that award their only point at the end;
* ``"plan"``: ``1 - remaining / initial``, where ``remaining`` is the length of TextWorld's winning
  policy from the current state (the ``expert_plan`` the family's solver re-plans at every turn) and
  ``initial`` its length at reset; clipped to [0, 1], exactly ``1.0`` on a win and ``0.0`` once no
  winning route is left (a lost game). It moves on every step: a step along the expert's route
  raises it by ``1 / initial``, a detour lowers it. Being a function of the game state (and the
  task's fixed start), it is a potential for :class:`~agentgym_budget.wrappers.ProcessReward`.

``TextWorld-CoinCollector-v0`` (one point, for the coin) defaults to ``"plan"``; every other id
defaults to ``"score"``. ``"plan"`` needs TextWorld's state tracking, so a lean env
(``lean=True``) in that mode tracks the game state at every step.

Example:
    >>> check_progress_mode("plan", "TextWorld-Cooking-v0")
    'plan'
    >>> plan_progress(remaining=2, initial=4, won=False)
    0.5
    >>> plan_progress(remaining=None, initial=4, won=True), plan_progress(remaining=6, initial=4, won=False)
    (1.0, 0.0)
"""

from __future__ import annotations

from textworld.generator.game import GameProgression

from agentgym_budget.errors import InvalidOptionError, did_you_mean
from agentgym_budget.tasks.textworld.engine import load_game

__all__: list[str] = []  # helpers of the TextWorld family (env.py, turns.py); the public knob is progress=

PROGRESS_MODES = ("score", "plan")
"""The values of the ``progress=`` argument (module docstring)."""


def check_progress_mode(mode: object, env_name: str) -> str:
    """Return ``mode`` if it is one of :data:`PROGRESS_MODES`.

    Raises:
        InvalidOptionError: Anything else, naming the modes.
    """
    if isinstance(mode, str) and mode in PROGRESS_MODES:
        return mode
    hint = did_you_mean(mode, PROGRESS_MODES) if isinstance(mode, str) else ""
    raise InvalidOptionError(
        f"{env_name}: progress must be one of {list(PROGRESS_MODES)} ('score': score / max_score; 'plan': "
        f"the share of the winning route walked), got {mode!r}.{hint}"
    )


def initial_plan_length(z8_path: str) -> int | None:
    """Length of the game's winning policy at its start (``None``: the game has no winning policy)."""
    policy = GameProgression(load_game(z8_path)).winning_policy
    return None if policy is None else len(policy)


def plan_progress(*, remaining: int | None, initial: int | None, won: bool) -> float:
    """``1 - remaining / initial`` in [0, 1]; ``1.0`` when ``won``; ``0.0`` with no route left or none at start."""
    if won:
        return 1.0
    if remaining is None or not initial:
        return 0.0
    return min(1.0, max(0.0, 1.0 - remaining / initial))
