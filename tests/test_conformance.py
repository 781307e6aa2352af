"""The conformance suite, run on every registered id."""

from __future__ import annotations

import functools
from collections.abc import Callable
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


KEEPING_ACTIONS = {"alfworld": "help"}
"""An action that keeps the engine state, per family whose ``inventory`` does not (ALFWorld marks the agent checked)."""

ROOMLESS = frozenset(
    f"agentgym_budget/TWX-{game}-v0" for game in ("Arithmetic", "PeckingOrder", "SimonSays", "Sorting")
)
"""Ids whose world offers no round trip (one room, nothing to undo) to check ``state_digest`` with."""


GAMES_SHARING_OBJECTS = {
    "agentgym_budget/TWX-Sorting-v0": "a known bug: two TWX Sorting games of one seed in one JVM share objects "
    "(a fork's room loses what another game of the seed holds), so forks of a Sorting state disagree",
}
"""Ids whose forks are known to interfere (the digest check catches it; strict xfail: it fails when fixed)."""


class _RegisteredIdConformance(EnvConformance):
    env_id: ClassVar[str] = ""

    def make_env(self, **kwargs: Any) -> gym.Env:
        extra = SPECIAL_KWARGS.get(self.env_id, dict)()
        return gym.make(self.env_id, **{**extra, **kwargs})


def _class_name(env_id: str) -> str:
    return "TestConformance_" + env_id.split("/", 1)[1].replace("-", "_")


# gymnasium's check_env resets several tasks, and every task of a generated TextWorld id is a game to
# load (or generate): seconds per id. The ids' other checks stay in the quick loop (tests/README.md).
SLOW_CHECK_ENV = frozenset(agentgym_budget.registered_ids("textworld")) - {"agentgym_budget/TextWorld-File-v0"}

QUICK_LOOP_IDS = frozenset(
    {
        "agentgym_budget/TextWorld-CoinCollector-v0",
        "agentgym_budget/ALFWorld-v0",
        "agentgym_budget/WebShop-v0",
        "agentgym_budget/TWX-CoinCollector-v0",
        "agentgym_budget/BabyAI-GoToLocal-v0",
    }
)
"""One id per family that keeps every conformance check in the quick loop (``-m "not slow"``)."""

CHECKS_THAT_PLAY = (
    "test_fuzz_actions",
    "test_state_digest",
    "test_nasty_actions_are_normal_turns",
    "test_replay_snapshot_equals_replay",
    "test_same_seed_same_trajectory",
    "test_snapshot_restore_equals_replay",
    "test_serialised_snapshot_restores_into_a_new_stack",
    "test_standard_info",
    "test_optional_info_keys",
    "test_check_env",
)
"""Checks that play many turns or tasks: for the other ids of a family they run in the full suite only."""


def _slow_copy(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def test(self: Any) -> None:
        method(self)

    return pytest.mark.slow(test)


def _slow_checks(env_id: str) -> tuple[str, ...]:
    if env_id not in QUICK_LOOP_IDS:
        return CHECKS_THAT_PLAY
    return ("test_check_env",) if env_id in SLOW_CHECK_ENV else ()


for _env_id in agentgym_budget.registered_ids():
    _namespace: dict[str, Any] = {"env_id": _env_id, "round_trip_required": _env_id not in ROOMLESS}
    _namespace["keeping_action"] = KEEPING_ACTIONS.get(agentgym_budget.env_info(_env_id).family, "inventory")
    for _check in _slow_checks(_env_id):
        _namespace[_check] = _slow_copy(getattr(EnvConformance, _check))
    if _env_id in GAMES_SHARING_OBJECTS:
        _namespace["test_state_digest"] = pytest.mark.xfail(strict=True, reason=GAMES_SHARING_OBJECTS[_env_id])(
            _slow_copy(EnvConformance.test_state_digest)
        )
    globals()[_class_name(_env_id)] = type(_class_name(_env_id), (_RegisteredIdConformance,), _namespace)


def test_every_registered_id_has_a_conformance_class() -> None:
    ids = agentgym_budget.registered_ids()
    assert ids, "no ids registered"
    missing = [i for i in ids if _class_name(i) not in globals()]
    assert not missing
    assert pytest is not None


def _marked_slow(obj: object) -> bool:
    marks = getattr(obj, "pytestmark", [])
    return any(mark.name == "slow" for mark in (marks if isinstance(marks, list) else [marks]))


def test_the_quick_loop_covers_every_family() -> None:
    """Slow marks must leave every family conformance checks that run in ``-m "not slow"`` (tests/README.md)."""
    quick = {
        agentgym_budget.env_info(cls.env_id).family
        for cls in globals().values()
        if isinstance(cls, type) and issubclass(cls, _RegisteredIdConformance) and cls.env_id and not _marked_slow(cls)
        for name in dir(cls)
        if name.startswith("test_") and not _marked_slow(getattr(cls, name))
    }
    families = {agentgym_budget.env_info(env_id).family for env_id in agentgym_budget.registered_ids()}
    assert quick == families, f"families left without quick conformance checks: {sorted(families - quick)}"
    played = {agentgym_budget.env_info(env_id).family for env_id in QUICK_LOOP_IDS}
    assert played == families, f"families without an id playing every check quickly: {sorted(families - played)}"
    for env_id in QUICK_LOOP_IDS:
        cls = globals()[_class_name(env_id)]
        slow = {check for check in CHECKS_THAT_PLAY if _marked_slow(getattr(cls, check))}
        assert slow <= {"test_check_env"}, f"{env_id} plays {sorted(slow)} only in the full suite"
    assert _marked_slow(TestConformance_TextWorld_Cooking_v0.test_check_env)  # noqa: F821 (made above)
    assert not _marked_slow(EnvConformance.test_check_env)
