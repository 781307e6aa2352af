"""The conformance suite, run on every registered id."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import pytest

import agentgym_budget
from agentgym_budget.tasks.textworld import games
from agentgym_budget.tasks.webshop import data as webshop_data
from agentgym_budget.testing import EnvConformance

SPECIAL_KWARGS: dict[str, Any] = {
    "agentgym_budget/TextWorld-File-v0": lambda: {
        "path": str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    },
    # the 100k-product catalog is exercised by benchmarks/webshop_speed.py; the suite uses a small one
    "agentgym_budget/WebShop-100k-v0": lambda: {"num_products": 2_000},
    "agentgym_budget/WebShop-Data-v0": lambda: {"data_dir": str(webshop_data.example_data_dir())},
    # ALFWorld: one generated game per task type (games take ~2 s each to generate and check)
    **{env_id: lambda: {"num_games": 1} for env_id in agentgym_budget.registered_ids("alfworld")},
}


class _RegisteredIdConformance(EnvConformance):
    env_id: ClassVar[str] = ""

    def make_env(self, **kwargs: Any) -> gym.Env:
        extra = SPECIAL_KWARGS.get(self.env_id, dict)()
        return gym.make(self.env_id, **{**extra, **kwargs})


def _class_name(env_id: str) -> str:
    return "TestConformance_" + env_id.split("/", 1)[1].replace("-", "_")


for _env_id in agentgym_budget.registered_ids():
    globals()[_class_name(_env_id)] = type(_class_name(_env_id), (_RegisteredIdConformance,), {"env_id": _env_id})


def test_every_registered_id_has_a_conformance_class() -> None:
    ids = agentgym_budget.registered_ids()
    assert ids, "no ids registered"
    missing = [i for i in ids if _class_name(i) not in globals()]
    assert not missing
    assert pytest is not None
