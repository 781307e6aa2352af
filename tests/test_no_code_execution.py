"""Nothing the library reads runs code: ALFWorld grammars are parsed, never given to ``eval``.

TextWorld's PDDL backend evaluates the ``{...}`` of a game's grammar with Python's ``eval``, so a
``game.tw-pddl`` could run ``os.system`` when it was reset. These tests plant such games in an
ALFWorld ``data_dir`` and in the cache and check that nothing runs and a typed error names the file.
"""

from __future__ import annotations

import builtins
import json
import random
import shutil
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("alfworld")

from textworld.generator.game import EntityInfo

from agentgym_budget.errors import DataError
from agentgym_budget.storage import cache
from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
from agentgym_budget.tasks.alfworld.expressions import ENTITY_FIELDS, compile_expression
from tests.alfworld_support import choose, game_paths

TASK = "pick_and_place_simple"
INTRO = "-= Welcome to TextWorld, ALFRED! =-"


def _payloads(marker: Path) -> dict[str, tuple[str, str]]:
    """Malicious grammar edits: name -> (text replaced in the grammar, replacement)."""
    touch = f"__import__('os').system('touch {marker}')"
    return {
        "intro call": (INTRO, "{" + touch + "}"),
        "open() in a feedback": ("You open the {r.name}.", "{open('" + str(marker) + "', 'w').write('x')}"),
        "call in a list expression": ("{o.indefinite + ' ' + o.name | holds", "{" + touch + " | holds"),
        "dunder attribute chain": (INTRO, "{r.__class__.__init__.__globals__}"),
        "command template": ('template :: "open {r}"', 'template :: "open {' + touch + '}"'),
        "lambda": (INTRO, "{(lambda: " + touch + ")()}"),
    }


def _data_dir(root: Path, edit) -> Path:
    """An ALFWorld data_dir holding one trial whose game file went through ``edit``."""
    source = Path(game_paths()[TASK])
    trial = root / "json_2.1.1" / "train" / f"{TASK}-Apple-None-Fridge-1" / "trial_T1"
    trial.mkdir(parents=True)
    (trial / "game.tw-pddl").write_text(edit(source.read_text()))
    shutil.copy(source.with_name("traj_data.json"), trial / "traj_data.json")
    return root


def _edit_grammar(old: str, new: str):
    def edit(text: str) -> str:
        game = json.loads(text)
        assert old in game["grammar"], old
        game["grammar"] = game["grammar"].replace(old, new, 1)
        return json.dumps(game)

    return edit


@pytest.mark.slow
@pytest.mark.parametrize("payload", list(_payloads(Path("/x"))))
def test_malicious_grammar_in_a_data_dir_runs_nothing(tmp_path, payload):
    marker = tmp_path / "pwned"
    old, new = _payloads(marker)[payload]
    root = _data_dir(tmp_path / "data", _edit_grammar(old, new))
    env = ALFWorldEnv(data_dir=root)  # the task list is read without parsing grammars
    try:
        with pytest.raises(DataError) as err:
            env.reset(seed=0)
    finally:
        env.close()
    game_file = str(root / "json_2.1.1" / "train" / f"{TASK}-Apple-None-Fridge-1" / "trial_T1" / "game.tw-pddl")
    assert game_file in str(err.value) and "not allowed" in str(err.value)
    assert not marker.exists()


def _planted_cache(tmp_path: Path, monkeypatch, marker: Path, *, update_manifest: bool) -> Path:
    """The cache entry of a generated game, copied into a fresh cache and given a malicious grammar."""
    source = Path(game_paths()[TASK]).parent
    entry = tmp_path / "cache" / "alfworld" / source.name
    shutil.copytree(source, entry)
    game = entry / "game.tw-pddl"
    game.write_text(_edit_grammar(INTRO, "{__import__('os').system('touch " + str(marker) + "')}")(game.read_text()))
    if update_manifest:  # a planter who also rewrites the manifest
        cache._write_manifest(entry)
    monkeypatch.setenv(cache.CACHE_ENV_VAR, str(tmp_path / "cache"))
    return game


@pytest.mark.slow
def test_malicious_grammar_planted_in_the_cache_with_its_manifest_runs_nothing(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    game = _planted_cache(tmp_path, monkeypatch, marker, update_manifest=True)
    env = ALFWorldEnv(TASK, num_games=1)
    try:
        with pytest.raises(DataError, match="not allowed") as err:
            env.reset(seed=0)
    finally:
        env.close()
    assert str(game) in str(err.value) and not marker.exists()


@pytest.mark.slow
def test_malicious_grammar_planted_in_the_cache_without_its_manifest_is_rebuilt(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    game = _planted_cache(tmp_path, monkeypatch, marker, update_manifest=False)
    env = ALFWorldEnv(TASK, num_games=1, info_keys={"expert_plan"})
    try:
        with pytest.warns(cache.CacheRepairWarning, match="game.tw-pddl differs"):
            obs, info = env.reset(seed=0)
        assert obs.startswith(INTRO) and info["expert_plan"]
    finally:
        env.close()
    assert game.read_text() == Path(game_paths()[TASK]).read_text() and not marker.exists()


@pytest.mark.slow
def test_a_whole_episode_never_calls_eval(monkeypatch):
    """Reset, steps, planner and handcoded experts, facts, snapshots: no route reaches Python's eval."""

    def no_eval(*args, **kwargs):
        raise AssertionError(f"eval called with {args[:1]!r}")

    envs = [
        ALFWorldEnv(TASK, num_games=1, info_keys={"expert_plan", "facts"}),
        ALFWorldEnv(TASK, num_games=1, info_keys={"expert_plan"}, expert="handcoded", shuffle_names=True),
    ]
    for env in envs:
        env.reset(seed=1)  # the game is generated (and cached) with eval still available
    monkeypatch.setattr(builtins, "eval", no_eval)
    for env in envs:
        try:
            _, info = env.reset(seed=3)
            rng = random.Random(0)
            snapshot = None
            for turn in range(12):
                command = choose({"admissible_commands": info["admissible_actions"]}, rng)
                _, _, terminated, _, info = env.step(command)
                if turn == 4:
                    snapshot = env.get_state()
                if terminated:
                    break
            env.set_state(snapshot)
            env.step("look")
        finally:
            env.close()


# ---------------------------------------------------------------------- the expression language
def _entity(name: str, indefinite: str | None = "a") -> EntityInfo:
    info = EntityInfo(name.replace(" ", "_"), "thing")
    info.name, info.indefinite, info.definite = name, indefinite, "the"
    return info


@pytest.mark.parametrize(
    "expression",
    [
        "r.name",
        "r.name ",
        " r",
        "o.indefinite + ' ' + o.name ",
        "r.name or r.id",
        "o.noun or (o.adj and o.name) or 'thing'",
        '"quoted \\" text" + r.definite',
    ],
)
def test_expressions_of_the_language_evaluate_like_python(expression):
    variables = {"r": _entity("fridge 1"), "o": _entity("apple 2", "an")}
    assert compile_expression(expression)(variables) == eval(expression.strip(), {}, dict(variables))


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('id')",
        "r.name.upper()",
        "r.__class__",
        "r.name.__class__",
        "getattr(r, 'name')",
        "(lambda: 1)()",
        "r.name if r else r.id",
        "r.name * 3",
        "r.synonyms[0]",
        "f'{r.name}'",
        "(x := r)",
        "r.name == 'x'",
        "1",
        "b'bytes'",
        "r.name; import os",
        "(" * 300 + "r" + ")" * 300,
        "r." + "name" * 200,
    ],
)
def test_anything_else_is_refused(expression):
    with pytest.raises(DataError, match="is not allowed"):
        compile_expression(expression)


def test_unbound_names_never_reach_globals_or_builtins():
    for name in ("__builtins__", "__import__", "open", "self", "context", "json"):
        with pytest.raises(DataError, match=f"{name!r} is not bound"):
            compile_expression(name)({"r": _entity("fridge 1")})


_atoms = st.one_of(
    st.sampled_from(["r", "o"]),
    st.builds(lambda v, f: f"{v}.{f}", st.sampled_from(["r", "o"]), st.sampled_from(sorted(ENTITY_FIELDS))),
    st.text(alphabet="abc xyz'\"", max_size=6).map(repr),
)


@st.composite
def _expressions(draw, depth: int = 0) -> str:
    if depth > 2 or draw(st.booleans()):
        return draw(_atoms)
    left, right = draw(_expressions(depth + 1)), draw(_expressions(depth + 1))
    operator = draw(st.sampled_from([" + ", " or ", " and "]))
    text = left + operator + right
    return f"({text})" if draw(st.booleans()) else text


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_expressions())
def test_random_expressions_agree_with_python(expression):
    """Same value or same exception type as Python's eval, for any expression of the language."""
    fridge, apple = _entity("fridge 1"), _entity("apple 2", None)
    apple.synonyms, fridge.noun = ["fruit"], "fridge"
    variables = {"r": fridge, "o": apple}
    compiled = compile_expression(expression)
    try:
        expected = eval(expression, {"__builtins__": {}}, dict(variables))
    except TypeError:
        with pytest.raises(TypeError):
            compiled(variables)
    else:
        assert compiled(variables) == expected


def test_the_shipped_grammar_is_accepted():
    """Every expression of alfworld's alfred.twl2 is in the language (the engine tests check the text matches)."""
    from importlib import resources

    from textworld.envs.pddl import logic as pddl_logic

    from agentgym_budget.tasks.alfworld.grammar import check_grammar

    folder = resources.files("alfworld") / "data"
    logic = pddl_logic.GameLogic(
        domain=(folder / "alfred.pddl").read_text(), grammar=(folder / "alfred.twl2").read_text()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_grammar(logic, "alfred.twl2")
