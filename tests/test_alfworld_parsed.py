"""The parsed form of ALFWorld games stored on disk, and the per-process game cache bounded by memory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.tasks.alfworld import parsed_game, pddl_env, planner
from agentgym_budget.tasks.alfworld.engine import AlfworldEngine
from tests.alfworld_support import game_paths


def play(path: str, commands: int = 6) -> list[tuple[str, list[str], bool]]:
    engine = AlfworldEngine()
    try:
        engine.load(path)
        state = engine.reset(3)
        states = [(state["feedback"], state["admissible_commands"], state["won"])]
        for index in range(commands):
            command = state["admissible_commands"][index * 7 % len(state["admissible_commands"])]
            state = engine.step(command)
            states.append((state["feedback"], state["admissible_commands"], state["won"]))
        return states
    finally:
        engine.close()


def test_a_game_missing_from_memory_loads_from_its_stored_form_without_translating_or_parsing(monkeypatch):
    path = game_paths()["pick_heat_then_place_in_recep"]
    before = play(path)
    pddl_env.GAME_CACHE.clear()
    parsed_game._symbols.cache_clear()

    def refuse(*args, **kwargs):
        raise AssertionError("the stored form should have been used")

    monkeypatch.setattr(planner, "translate", refuse)
    monkeypatch.setattr(parsed_game, "_grammar_document", refuse)
    assert play(path) == before


def test_the_stored_form_is_plain_data_keyed_by_the_game_content(tmp_path):
    path = Path(game_paths()["pick_and_place_simple"])
    game = json.loads(path.read_text())
    stored = parsed_game.load_parsed(game["pddl_domain"], game["grammar"], game["pddl_problem"])
    assert stored.sas.startswith(b"begin_version") and stored.sas_replan.startswith(b"begin_version")
    assert json.loads(json.dumps(stored.document)) == stored.document
    assert stored.document["format"] == parsed_game.PARSED_FORMAT

    copy = tmp_path / "game.tw-pddl"
    shutil.copy(path.with_name("traj_data.json"), tmp_path / "traj_data.json")
    marker = "Your task is to: "
    game["grammar"] = game["grammar"].replace(marker, marker + "zorblaxly ", 1)
    copy.write_text(json.dumps(game))
    assert "zorblaxly" not in play(str(path), 0)[0][0]
    assert f"{marker}zorblaxly " in play(str(copy), 0)[0][0]


@pytest.mark.slow
def test_the_stored_form_gives_the_facts_and_grammar_textworld_computes():
    from textworld.envs.pddl import logic as pddl_logic

    path = game_paths()["look_at_obj_in_light"]
    data = json.loads(Path(path).read_text())
    stock_logic = pddl_logic.GameLogic(domain=data["pddl_domain"], grammar=data["grammar"])
    lib = planner.LIBRARIES.acquire()
    try:
        stock_state = pddl_logic.PddlState(lib, data["pddl_problem"], stock_logic)
        lib.agb_has_task = True
        stock_facts = set(stock_state.facts)
    finally:
        planner.LIBRARIES.release(lib)
    engine = AlfworldEngine()
    try:
        engine.load(path)
        assert set(engine.pddl_env._pddl_state.facts) == stock_facts
        ours = engine.pddl_env.game.logic
    finally:
        engine.close()
    assert {k: (a.template, a.feedback_rule) for k, a in ours.actions.items()} == {
        k: (a.template, a.feedback_rule) for k, a in stock_logic.actions.items()
    }
    assert {k: [(str(r.rhs), r.condition) for r in rules] for k, rules in ours.grammar._rules.items()} == {
        k: [(str(r.rhs), r.condition) for r in rules] for k, rules in stock_logic.grammar._rules.items()
    }
    assert sorted(t.name for t in ours.types) == sorted(t.name for t in stock_state._logic.types)


def test_the_game_cache_is_bounded_by_its_estimated_weight(monkeypatch):
    paths = [game_paths()[name] for name in ("pick_and_place_simple", "pick_clean_then_place_in_recep")]
    paths.append(game_paths()["pick_cool_then_place_in_recep"])
    weights = []
    for path in paths:
        pddl_env.GAME_CACHE.clear()
        weights.append(pddl_env.load_game(path).weight)
    assert all(weight > 100_000 for weight in weights)
    monkeypatch.setattr(pddl_env.GAME_CACHE, "capacity", 2 * min(weights) - 1)  # any two games exceed it
    pddl_env.GAME_CACHE.clear()
    for path in paths:
        pddl_env.load_game(path)
    assert len(pddl_env.GAME_CACHE) == 1
    assert pddl_env.GAME_CACHE.weight == weights[-1]
    pddl_env.GAME_CACHE.clear()


def test_the_game_cache_size_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(pddl_env.GAME_CACHE_ENV_VAR, "64")
    assert pddl_env._cache_capacity() == 64 * 2**20
    monkeypatch.setenv(pddl_env.GAME_CACHE_ENV_VAR, "a lot")
    with pytest.raises(InvalidOptionError, match="megabytes, got 'a lot'"):
        pddl_env._cache_capacity()


def test_textworlds_interned_propositions_stay_bounded(monkeypatch):
    import mementos.core

    first, second = (game_paths()[name] for name in ("pick_and_place_simple", "pick_two_obj_and_place"))
    expected = [play(first), play(second)]
    monkeypatch.setattr(pddl_env, "_INTERNED_KEPT", 100)
    pddl_env.GAME_CACHE.clear()
    assert play(first) == expected[0]
    after_first = set(mementos.core._memento_cache)
    pddl_env.GAME_CACHE.clear()
    assert play(second) == expected[1]
    assert not after_first <= set(mementos.core._memento_cache), "the table was not emptied"
