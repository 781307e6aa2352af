"""Helpers shared by the ALFWorld tests: the generated games they play, ALFWorld's stock engine, trajectories."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("alfworld")

import textworld
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES

TYPES: tuple[str, ...] = tuple(TASK_TYPES)
INTERESTING = ("take", "move", "heat", "cool", "clean", "use", "open", "close", "examine", "inventory")


@functools.cache
def game_paths() -> dict[str, str]:
    """One generated game per task type: seed 0 of the train split (the conformance suite plays the same ones)."""
    env = ALFWorldEnv(num_games=1)
    try:
        return {task_type: env._game_path(f"{task_type}-0") for task_type in TYPES}
    finally:
        env.close()


def stock_env(path: str, infos: textworld.EnvInfos, *, shuffle: bool = False) -> textworld.Environment:
    """ALFWorld's own engine on ``path``, composed as ``AlfredTWEnv`` composes it."""
    return textworld.start(path, infos, wrappers=[AlfredDemangler(shuffle=shuffle), AlfredInfos])


def choose(state: Any, rng: random.Random) -> str:
    """A random command biased towards object interactions, sometimes not admissible at all."""
    draw = rng.random()
    if draw < 0.06:
        return rng.choice(["dance", "take", "go to the moon", "", "  look  "])
    admissible = list(state["admissible_commands"])
    interesting = [c for c in admissible if c.startswith(INTERESTING)]
    if interesting and draw < 0.6:
        return rng.choice(interesting)
    return rng.choice(admissible)


def play(step: Callable[[str], Any], first: Any, commands: list[str]) -> list[Any]:
    """Send ``commands`` through ``step``; return the states."""
    states, state = [first], first
    for command in commands:
        state = step(command)
        states.append(state)
    return states
