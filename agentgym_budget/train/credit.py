"""Credit assignment for multi-turn GRPO: one advantage per episode, per turn, or per turn and state (GiGPO).

A GRPO group is ``num_generations`` rollouts of one task under one budget. Each rollout is a
:class:`RolloutTurns`: its per-turn rewards and, for ``gigpo``, a digest of the environment state
each turn acted from. The modes (:data:`CREDIT_MODES`):

``episode``
    TRL's GRPO: every turn of a rollout gets ``(R - mean_g R) / (std_g R + eps)`` with ``R`` the
    episode's return. A potential-based process reward ``F_t = c (gamma_s Phi(s_{t+1}) - Phi(s_t))``
    with ``gamma_s = 1`` and zero terminal potential sums to ``-c Phi(s_0)`` over any episode: the same
    for every rollout of a group (they start from one state), so it cancels in the advantage. Under
    this mode ``--process-reward`` changes nothing (:func:`episode_advantages` shows it on a batch).
``turn``
    Turn ``t`` gets the discounted return from ``t`` on, ``G_t = sum_k gamma^(k-t) r_k``, normalised
    against the returns of every turn of every rollout of its group. ``G_t`` depends on the state
    the turn acted from, so process rewards reach the turns (also with ``gamma = 1``).
``gigpo``
    GiGPO (Feng et al., 2025): the episode advantage plus ``step_weight`` times a step advantage:
    ``G_t`` normalised against the turns of the group that acted from the same environment state
    (equal state digests). A turn whose state no other turn of the group shares gets no step term.

Example:
    >>> group = [RolloutTurns((0.0, 1.0)), RolloutTurns((0.0, 0.0, 0.0))]
    >>> [[round(a, 3) for a in turns] for turns in turn_advantages(group, "episode")]
    [[0.707, 0.707], [-0.707, -0.707, -0.707]]
    >>> [[round(a, 2) for a in turns] for turns in turn_advantages(group, "turn", gamma=0.5)]
    [[0.45, 1.56], [-0.67, -0.67, -0.67]]
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from agentgym_budget.errors import InvalidOptionError

__all__ = ["RolloutTurns"]

CREDIT_MODES = ("episode", "turn", "gigpo")
"""Credit assignment modes (see the module docstring)."""

EPSILON = 1e-4
"""Added to a standard deviation before dividing (TRL's constant)."""


@dataclass(frozen=True)
class RolloutTurns:
    """What credit assignment needs of one rollout.

    Attributes:
        rewards: The reward of each turn, in order (shaped ones under ``--process-reward``).
        states: A digest of the state each turn acted from (``gigpo`` only), one per turn.
    """

    rewards: tuple[float, ...]
    states: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.states and len(self.states) != len(self.rewards):
            raise InvalidOptionError(
                f"RolloutTurns: {len(self.rewards)} rewards but {len(self.states)} state digests; one of each per turn."
            )
        if not all(math.isfinite(r) for r in self.rewards):
            raise InvalidOptionError(f"RolloutTurns: rewards must be finite, got {self.rewards}.")


def check_credit(credit: str, gamma: float, step_weight: float = 1.0) -> None:
    """Refuse an unknown mode or a discount outside ``(0, 1]``.

    Example:
        >>> check_credit("turns", 1.0)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: Unknown credit 'turns'. Did you mean 'turn'? Expected one of: episode, turn, gigpo.
    """
    from agentgym_budget.errors import did_you_mean

    if credit not in CREDIT_MODES:
        raise InvalidOptionError(
            f"Unknown credit {credit!r}.{did_you_mean(str(credit), CREDIT_MODES)} Expected one of: "
            f"{', '.join(CREDIT_MODES)}."
        )
    if isinstance(gamma, bool) or not isinstance(gamma, int | float) or not 0 < gamma <= 1:
        raise InvalidOptionError(f"gamma must be in (0, 1], got {gamma!r}.")
    if isinstance(step_weight, bool) or not isinstance(step_weight, int | float) or step_weight < 0:
        raise InvalidOptionError(f"step_weight must be >= 0, got {step_weight!r}.")


def discounted_returns(rewards: Sequence[float], gamma: float) -> list[float]:
    """``G_t = r_t + gamma G_{t+1}`` for every turn ``t``.

    Example:
        >>> discounted_returns([1.0, 0.0, 2.0], 0.5)
        [1.5, 1.0, 2.0]
    """
    returns, following = [], 0.0
    for reward in reversed(rewards):
        following = float(reward) + gamma * following
        returns.append(following)
    return returns[::-1]


def _normalised(values: Sequence[float]) -> list[float]:
    if len(values) < 2:
        return [0.0] * len(values)
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))  # torch.std's unbiased estimate
    return [(v - mean) / (std + EPSILON) for v in values]


def episode_advantages(group: Sequence[RolloutTurns]) -> list[float]:
    """One advantage per rollout: its return normalised within the group (TRL's GRPO).

    Example (a potential-based process reward cancels): two rollouts from one start state, the
    environment's rewards and the same rewards shaped with potentials ``Phi`` (``Phi(s_0) = 0.2``,
    terminal potential 0):

    >>> plain = [RolloutTurns((0.0, 1.0)), RolloutTurns((0.0, 0.0))]
    >>> shaped = [RolloutTurns((0.0 + 0.3, 1.0 - 0.5)), RolloutTurns((0.0 + 0.1, 0.0 - 0.3))]
    >>> episode_advantages(plain) == episode_advantages(shaped)
    True
    """
    return _normalised([sum(rollout.rewards) for rollout in group])


def state_groups(group: Sequence[RolloutTurns]) -> dict[str, list[tuple[int, int]]]:
    """The turns of ``group`` by the state they acted from: digest -> ``[(rollout, turn), ...]``.

    Example:
        >>> state_groups([RolloutTurns((0, 0), ("a", "b")), RolloutTurns((1,), ("a",))])
        {'a': [(0, 0), (1, 0)], 'b': [(0, 1)]}
    """
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for i, rollout in enumerate(group):
        for t, digest in enumerate(rollout.states):
            found[digest].append((i, t))
    return dict(found)


def turn_advantages(
    group: Sequence[RolloutTurns], credit: str, *, gamma: float = 1.0, step_weight: float = 1.0
) -> list[list[float]]:
    """The advantage of every turn of every rollout of one GRPO group (see the module docstring).

    Raises:
        InvalidOptionError: Unknown ``credit``, ``gamma`` outside ``(0, 1]``, or ``gigpo`` without state digests.
    """
    check_credit(credit, gamma, step_weight)
    if credit == "episode":
        return [[a] * len(r.rewards) for a, r in zip(episode_advantages(group), group, strict=True)]
    returns = [discounted_returns(r.rewards, gamma) for r in group]
    if credit == "turn":
        flat = _normalised([g for rollout in returns for g in rollout])
        out, start = [], 0
        for rollout in returns:
            out.append(flat[start : start + len(rollout)])
            start += len(rollout)
        return out
    if any(r.rewards and not r.states for r in group):
        raise InvalidOptionError("credit='gigpo' needs a state digest for every turn (RolloutTurns.states).")
    out = [[a] * len(r.rewards) for a, r in zip(episode_advantages(group), group, strict=True)]
    for members in state_groups(group).values():
        step = _normalised([returns[i][t] for i, t in members])
        for (i, t), value in zip(members, step, strict=True):
            out[i][t] += step_weight * value
    return out


def useful_fraction(groups: Sequence[Sequence[Sequence[float]]]) -> float:
    """The fraction of groups where some turn has a non-zero advantage (a zero-variance group trains nothing).

    Example:
        >>> useful_fraction([[[0.0, 0.0], [0.0]], [[0.5], [-0.5]]])
        0.5
    """
    if not groups:
        return 0.0
    useful = sum(any(abs(a) > 1e-9 for rollout in group for a in rollout) for group in groups)
    return useful / len(groups)
