"""Discriminating probe states: keep a state only where the candidate actions differ in value.

A probe state where every admissible action leads to the same outcome cannot tell agents apart: on
such a state every agent's step value is the same, and a step-value metric averaged over many of
them saturates (near 1 when the budget is loose, near 0 when it is lost anyway). With
``min_value_gap > 0`` a probe run first estimates, at each chosen state, the value of **every**
admissible action (at most ``max_candidates`` of them, in the order the environment lists them): the
share of ``rollouts`` continuations by the run's continuation policy (default ``expert``) that win
after the action, each continuation restored from the state's
:class:`~agentgym_budget.wrappers.StateSnapshot` snapshot with the turns the episode has left. The
state is kept when ``max(values) - min(values) >= min_value_gap``; otherwise no agent is probed there.

Every examined state is logged once as a ``kind: "state"`` record (``agent`` ``""``, ``sample``
``-1``) with ``candidate_values``, ``value_gap`` and ``discriminating``, so a resumed run skips the
states it already rejected and a summary can say how many states were examined and kept.

Example:
    >>> value_gap({"go east": 1.0, "go west": 0.0, "look": 1.0}), value_gap({})
    (1.0, 0.0)
    >>> discriminating({"go east": 1.0, "look": 1.0}, 0.5), discriminating({"go east": 1.0, "go west": 0.0}, 0.5)
    (False, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentgym_budget.agents.registry import AgentSpec
from agentgym_budget.eval.probes.judge import StateJudge
from agentgym_budget.eval.probes.states import ProbePoint
from agentgym_budget.runner.seeds import episode_seed

__all__ = ["discriminating", "value_gap"]

STATE_KIND = "state"
"""``kind`` of the record logged for every examined state."""

STATE_AGENT, STATE_SAMPLE = "", -1
"""``agent`` and ``sample`` of a state record (no agent acted; keeps the log's record key well defined)."""


def value_gap(values: Mapping[str, float]) -> float:
    """``max - min`` of the candidate values (0 with fewer than two candidates)."""
    return float(max(values.values()) - min(values.values())) if len(values) > 1 else 0.0


def discriminating(values: Mapping[str, float], min_gap: float) -> bool:
    """Whether the candidates' values differ by at least ``min_gap``."""
    return len(values) > 1 and value_gap(values) >= min_gap - 1e-12


async def candidate_values(
    judge: StateJudge, point: ProbePoint, continuation: AgentSpec, *, rollouts: int, seed: int, limit: int
) -> dict[str, float]:
    """The continuation value of each admissible action of ``point`` (its first ``limit`` ones).

    The continuation seeds are those the probes use for the same action, so an agent's probed action
    reuses the cached value.
    """
    values: dict[str, float] = {}
    for action in list(point.info.get("admissible_actions") or ())[:limit]:
        seeds = [episode_seed(seed, f"{point.state_id}|{action}", r) for r in range(rollouts)]
        wins = await judge.value(action, continuation, rollouts=rollouts, seeds=seeds)
        values[action] = sum(wins) / len(wins)
    return values


def state_record(env_json: Mapping[str, Any], point: ProbePoint, continuation: str, values: Mapping[str, float],
                 min_gap: float) -> dict[str, Any]:  # fmt: skip
    """The ``kind: "state"`` record of one examined state (see the module docstring)."""
    return {
        "kind": STATE_KIND,
        "agent": STATE_AGENT,
        "sample": STATE_SAMPLE,
        **env_json,
        **point.record_fields(),
        "continuation": continuation,
        "candidate_values": {action: round(value, 6) for action, value in values.items()},
        "value_gap": round(value_gap(values), 6),
        "discriminating": discriminating(values, min_gap),
    }
