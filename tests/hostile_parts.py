"""Forged snapshot parts run in a child process (a crash of the C interpreter fails a test, not pytest).

``python -m tests.hostile_parts pcs`` restores into a Coin Collector stack snapshots whose program counter
was moved to other addresses inside the story (each under a valid unkeyed digest), steps after each, then
restores the genuine snapshot and replays it. It prints one JSON line: ``{"refused": [...], "same": bool}``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import warnings
from typing import Any

import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.errors import AgentGymBudgetError
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

__all__ = ["PCS", "coin_stack", "forge_part", "main"]

PCS = (182257, 13766, 72949, 67942)
"""Program counters inside a level-3 Coin Collector story that crashed or hung the process (issue 38)."""


def coin_stack(max_turns: int = 8) -> gym.Env:
    """A Coin Collector level-3 stack with a turn budget, snapshots in native mode."""
    base = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3)
    return StateSnapshot(TurnBudget(base, max_turns=max_turns))


def forge_part(data: bytes, index: int, edit: Any) -> EnvState:
    """The snapshot ``data`` with part ``index`` replaced by ``edit(part)``, re-encoded under a valid digest."""
    snap = EnvState.from_bytes(data)
    parts = list(snap.parts)
    parts[index] = edit(parts[index])
    return EnvState.from_bytes(dataclasses.replace(snap, parts=tuple(parts)).to_bytes())


def _moved_pc(pc: int) -> Any:
    def edit(base: Any) -> Any:
        engine = dataclasses.replace(base.engine, registers=(pc, *base.engine.registers[1:]))
        return dataclasses.replace(base, engine=engine)

    return edit


def pcs() -> dict[str, Any]:
    """Restore and step each moved program counter, then the genuine snapshot (see the module docstring)."""
    env = coin_stack()
    env.reset(seed=1)
    env.step("look")
    genuine = env.snapshot().to_bytes()
    env.restore(EnvState.from_bytes(genuine))
    before = [env.step(action)[0] for action in ("inventory", "look")]
    refused = []
    for pc in PCS:
        try:
            env.restore(forge_part(genuine, -1, _moved_pc(pc)))
        except AgentGymBudgetError:
            refused.append(pc)
            continue
        for action in ("look", "inventory", "go north"):
            try:
                env.step(action)
            except AgentGymBudgetError:
                break
    env.restore(EnvState.from_bytes(genuine))
    return {"refused": refused, "same": [env.step(action)[0] for action in ("inventory", "look")] == before}


def main() -> None:
    """``python -m tests.hostile_parts pcs``."""
    warnings.simplefilter("ignore")
    print(json.dumps({"pcs": pcs}[sys.argv[1]]()))


if __name__ == "__main__":
    main()
