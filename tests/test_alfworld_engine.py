"""The ALFWorld engine: identical to ALFWorld's stock engine, native snapshots, planner expert, hygiene."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
import textworld

pytest.importorskip("alfworld")

from agentgym_budget.tasks.alfworld import planner
from agentgym_budget.tasks.alfworld.engine import AlfworldEngine
from agentgym_budget.tasks.alfworld.grammar import CompiledGrammar
from tests.alfworld_support import TYPES, choose, game_paths, stock_env

KEYS = ("feedback", "admissible_commands", "won", "lost", "score", "done", "moves", "extra.gamefile", "last_command")


def _key(state, *, facts: bool = False):
    key = tuple(state.get(name) for name in KEYS)
    return (*key, sorted(str(f) for f in state["facts"])) if facts else key  # their order follows the hash seed


def _compare_trajectories(
    path: str, seeds: range, steps: int, *, facts: bool = False, shuffle: bool = False, expert: bool = True
) -> int:
    infos = textworld.EnvInfos(
        admissible_commands=True, won=True, lost=True, moves=True, facts=facts, extras=["gamefile"]
    )
    if shuffle:
        random.seed(seeds[0])
    stock = stock_env(path, infos, shuffle=shuffle)
    ours = AlfworldEngine(shuffle_names=shuffle, facts=facts)
    ours.load(path)
    compared = 0
    try:
        for seed in seeds:
            rng = random.Random(seed)
            expected, got = stock.reset(), ours.reset(seeds[0])
            assert _key(expected, facts=facts) == _key(got, facts=facts), "first states differ"
            plan = ours.plan() if expert and seed == seeds[0] else []
            for step in range(steps):
                command = plan[step] if step < len(plan) else choose(expected, rng)
                expected, got = stock.step(command)[0], ours.step(command)
                assert _key(expected, facts=facts) == _key(got, facts=facts), f"seed {seed} step {step} {command!r}"
                compared += 1
                if expected["done"]:
                    break
    finally:
        ours.close()
    return compared


@pytest.mark.slow
@pytest.mark.parametrize("task_type", TYPES)
def test_identical_to_stock_engine(task_type):
    """Seeded trajectories (the expert's plan, then biased random commands, some not admissible) through
    ALFWorld's stock engine and ours give identical observations, admissible commands, rewards and infos."""
    compared = _compare_trajectories(game_paths()[task_type], range(3), 15)
    assert compared >= 30


@pytest.mark.slow
def test_identical_to_stock_engine_with_facts_and_shuffled_names():
    path = game_paths()["pick_heat_then_place_in_recep"]
    assert _compare_trajectories(path, range(11, 12), 12, facts=True, shuffle=True, expert=False) == 12


@pytest.mark.slow
def test_plan_wins_every_task_type():
    for task_type, path in game_paths().items():
        engine = AlfworldEngine()
        try:
            engine.load(path)
            state = engine.reset(0)
            plan = engine.plan()
            assert plan, task_type
            for command in plan:
                assert not state["won"]
                state = engine.step(command)
            assert state["won"] and state["score"] == 1 and engine.plan() == []
        finally:
            engine.close()


def test_native_snapshot_restores_exactly_and_plans_agree():
    path = game_paths()["pick_clean_then_place_in_recep"]
    engine = AlfworldEngine()
    try:
        engine.load(path)
        state = engine.reset(0)
        rng = random.Random(2)
        for _ in range(6):
            state = engine.step(choose(state, rng))
        snapshot = engine.save()
        plan_here = engine.plan()
        continuation = []
        for _ in range(10):
            command = choose(state, rng)
            state = engine.step(command)
            continuation.append((command, _key(state)))
        for _ in range(2):
            assert engine.can_restore(snapshot)
            engine.restore(snapshot)
            assert engine.plan() == plan_here
            assert [(command, _key(engine.step(command))) for command, _ in continuation] == continuation
        engine.reset(0)
        assert not engine.can_restore(snapshot), "planner state ids do not survive a reset"
    finally:
        engine.close()


def test_snapshot_does_not_restore_into_another_engine():
    path = game_paths()["pick_and_place_simple"]
    first, second = AlfworldEngine(), AlfworldEngine()
    try:
        for engine in (first, second):
            engine.load(path)
            engine.reset(0)
        assert not second.can_restore(first.save())
    finally:
        first.close()
        second.close()


def test_shuffled_names_follow_the_seed_and_leave_global_random_alone():
    path = game_paths()["pick_two_obj_and_place"]
    engine = AlfworldEngine(shuffle_names=True)
    try:
        engine.load(path)
        random.seed(123)
        before = random.getstate()
        intros = {seed: engine.reset(seed)["feedback"] for seed in (1, 2, 1)}
        assert random.getstate() == before
        assert engine.reset(1)["feedback"] == intros[1]
        orders = {engine.reset(seed)["feedback"] for seed in range(5)}
        assert len(orders) > 1, "shuffled names never changed"
    finally:
        engine.close()


@pytest.mark.slow
def test_translation_equals_fast_downwards_and_leaves_sys_argv_and_stdout_alone(capsys):
    import fast_downward

    argv = list(sys.argv)
    game = json.loads(Path(game_paths()["look_at_obj_in_light"]).read_text())
    domain, problem = game["pddl_domain"], game["pddl_problem"]
    translation = planner.translate(domain, problem)
    assert translation.sas.startswith(b"begin_version")
    assert planner.translate_for_search(domain, problem) == translation.sas_replan
    assert sys.argv == argv
    assert capsys.readouterr().out == ""
    expected = [fast_downward.pddl2sas(domain, problem, optimize=flag)[1].encode() for flag in (False, True)]
    sys.argv = argv
    assert [translation.sas, translation.sas_replan] == expected


def test_relevant_problem_keeps_what_the_goal_needs():
    facts = [
        ("objecttype", ("apple_1", "appletype")),
        ("objecttype", ("mug_1", "mugtype")),
        ("objecttype", ("cup_1", "cuptype")),
        ("receptacletype", ("fridge_1", "fridgetype")),
        ("receptacletype", ("shelf_1", "shelftype")),
        ("receptacletype", ("drawer_1", "drawertype")),
        ("receptacletype", ("sink_1", "sinkbasintype")),
        ("inreceptacle", ("apple_1", "drawer_1")),
        ("inreceptacle", ("mug_1", "shelf_1")),
        ("holds", ("agent1", "cup_1")),
        ("atlocation", ("agent1", "loc_1")),
    ]
    kinds = {"agent1": "agent", "loc_1": "location", "appletype": "otype", "mugtype": "otype", "cuptype": "otype"}
    kinds |= {r: "receptacle" for r in ("fridge_1", "shelf_1", "drawer_1", "sink_1")}
    kinds |= {"apple_1": "object", "mug_1": "object", "cup_1": "object"}
    goal = "(:goal (exists (?o - object) (and (objectType ?o AppleType) (isHot ?o)))))"
    domain = "(:action clean ... (receptacleType ?r SinkBasinType))"
    problem = planner.relevant_problem(facts, kinds, goal, domain)
    assert "apple_1 - object" in problem and "cup_1 - object" in problem  # goal type, held object
    assert "mug_1" not in problem and "shelf_1" not in problem  # distractor and its receptacle
    assert "drawer_1 - receptacle" in problem and "sink_1 - receptacle" in problem  # holds the apple; an appliance
    assert "fridge_1" not in problem
    assert problem.endswith(goal)


def test_compiled_grammar_matches_textworld_on_conditions_and_lists():
    from textworld.envs.pddl.textgen import ContextSensitiveGrammar

    rules = """{
        "start": [{"rhs": "I see [{#item#|fruit(x:thing)}]. #mood#"}],
        "item": [{"rhs": "a {x}"}],
        "mood": [{"condition": "fruit(x:thing)", "rhs": "Yum"}, {"rhs": "Meh"}],
        "list_empty": [{"rhs": "nothing"}], "list_separator": [{"rhs": ", "}], "list_last_separator": [{"rhs": " and "}]
    }"""
    grammar = ContextSensitiveGrammar.parse(rules)
    from textworld.logic import Proposition, Variable

    class State:
        def __init__(self, names):
            self.facts = [Proposition("fruit", [Variable(n, "thing")]) for n in names]

        def all_assignments(self, rule, mapping):
            from textworld.logic import Placeholder

            for fact in self.facts:
                yield {**mapping, Placeholder("x", "thing"): fact.arguments[0]}

    class Info:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return self.name

    for names in ([], ["apple"], ["apple", "pear", "fig"]):
        context = {
            "state": State(names),
            "facts": [],
            "variables": {},
            "mapping": {},
            "entity_infos": {n: Info(n) for n in names},
        }
        assert CompiledGrammar(grammar).derive("#start#", context) == grammar.derive("#start#", context)
