"""One game action per turn (issue 9 §1), checked against the real z-machine interpreter.

Every line the interpreter receives is recorded (``jericho.FrotzEnv.step``) with its raw output,
where TextWorld's action tracing prints ``[action]`` for every action Inform starts and the extra
``<moves>`` tag once per Inform turn: a turn is one game action when the step sent at most one
line and that line started at most one top-level action.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import gymnasium as gym
import jericho
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentgym_budget  # noqa: F401
from agentgym_budget.tasks.textworld.commands import (
    MAX_COMMAND_LENGTH,
    MULTIPLE_OBJECTS_FEEDBACK,
    UNKNOWN_VERB_FEEDBACK,
    check_command,
    dictionary_key,
    sanitize_command,
)
from agentgym_budget.wrappers import TurnBudget

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"
COOKING = "agentgym_budget/TextWorld-Cooking-v0"
KEYS = {"expert_plan", "expert_action", "moves"}

_ACTION_STARTED = re.compile(r"^\[(?!\()([^\]\n]*)\]$", re.MULTILINE)
_OUT_OF_WORLD = (
    "quitting",
    "saving",
    "restoring",
    "restarting",
    "verifying",
    "switching",
    "requesting",
    "preferring",
    "printing the entire state",
    "turning on",
    "turning off",
    "tracing",
    "reporting",
    "printing the id",
)
SEPARATORS = (", ", ",", " ,", ". ", ".", " then ", " THEN ", "; ", ", then ", "! ", "? ", " and ")
META = (
    "restart",
    "restore",
    "save",
    "quit",
    "q",
    "script",
    "transcripts",
    "undo",
    "again",
    "g",
    "oops look",
    "score",
    "verbose",
    "notify off",
    "version",
    "tw-trace-actions",
    "print_stuff",
    "enable print state option",
    "restrict commands",
)
ORDERS = ("", "me, ", "myself, ", "self, ", "me. ", "yourself, ")


def game_actions(raw: str) -> list[str]:
    """Top-level actions Inform started in ``raw`` interpreter output (nested ``(1) ...`` ones excluded)."""
    return [name for name in _ACTION_STARTED.findall(raw) if " - " not in name]


@pytest.fixture(scope="module")
def interpreter():
    """The lines the interpreter receives, as ``(line, raw output)``; clear it before a step."""
    log: list[tuple[str, str]] = []
    original = jericho.FrotzEnv.step

    def step(self, command):
        result = original(self, command)
        log.append((command, result[0]))
        return result

    jericho.FrotzEnv.step = step
    try:
        yield log
    finally:
        jericho.FrotzEnv.step = original


@pytest.fixture(scope="module")
def scratch_cwd(tmp_path_factory):
    """Run the module's tests in an empty working directory (where the interpreter would write files)."""
    folder = tmp_path_factory.mktemp("cwd")
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(previous)


def step_once(env, interpreter, line):
    """``env.step(line)``, checking that the interpreter ran at most one game action and nothing else."""
    interpreter.clear()
    result = env.step(line)
    sent = [command for command, _ in interpreter]
    assert len(sent) <= 1, f"{line!r} sent {sent}"
    if sent:
        assert sent == [sanitize_command(line)]
        raw = interpreter[0][1]
        actions = game_actions(raw)
        assert len(actions) <= 1 and raw.count("</moves>") <= 1, f"{line!r} ran {actions}"
        assert not any(action.startswith(_OUT_OF_WORLD) for action in actions), f"{line!r} ran {actions}"
        assert "Are you sure" not in raw
    return result


def expert_wins(env, info) -> bool:
    """Play the expert (re-planned every step) from the current state; whether it wins in its plan's length."""
    for _ in range(len(info["expert_plan"])):
        _, _, terminated, _, info = env.step(info["expert_action"])
        if terminated:
            return info["won"]
    return False


# ---------------------------------------------------------------------------------------- the rule
@pytest.mark.parametrize(
    ("action", "command"),
    [
        ("look, look", "look"),
        ("look,look", "look"),
        ("look ,look", "look"),
        ("look.look", "look"),
        ("LOOK THEN LOOK", "look"),
        ("west, north, east, take coin", "west"),
        ("me, look", "me"),
        ("self. look", "self"),
        ("look, restart", "look"),
        ("look,script", "look"),
        ("go west then", "go west"),
        ('say "hello, look"', 'say "hello'),
        ("take type 0 latchkey from type 0 locker", "take type 0 latchkey from type 0 locker"),
        ("unlock type K box with type K key", "unlock type k box with type k key"),
        ("answer yes", "answer yes"),
        ("restarting", "restarting"),
        ("scores", "scores"),
        ("go north", "go north"),
    ],
)
def test_chained_lines_are_cut_to_their_first_command(action, command):
    assert check_command(action).command == command


@pytest.mark.parametrize(
    "action",
    ["restart", "Restore", "save game", "q", "quit", "undo", "again", "g", "oops look", "o west", "script on",
     "transcripts", "superbriefly", "brief", "verbose", "notify off", "score", "full score", "pronouns",
     "version", "verify", "tw-extra-infos moves", "tw-printzz max_score", "print_state", "print_stuff",
     "enable print state option", "disable print state option", "restrict commands", "\\q", "  UNDO. look"],
)  # fmt: skip
def test_meta_commands_are_refused_in_first_position(action):
    assert check_command(action).refusal == UNKNOWN_VERB_FEEDBACK and sanitize_command(action) is None


@pytest.mark.parametrize(
    "action",
    ["take all", "take knife and cookbook", "take both", "drop all but binder", "drop all except binder",
     "drop everything", "drop each", "drop every", "insert 2 into safe", "insert two into safe",
     "take the 3 keys", "pick up 2", "take twenty-one", "two", "take things"],
)  # fmt: skip
def test_multi_object_commands_are_refused(action):
    assert check_command(action).refusal == MULTIPLE_OBJECTS_FEEDBACK and sanitize_command(action) is None


def test_dictionary_keys_follow_the_story_files_nine_z_characters():
    assert dictionary_key("transcript") == dictionary_key("transcriptz") == "transcrip"
    assert dictionary_key("tw-extra-infos") == dictionary_key("tw-extraXYZ") == "tw-extra"
    assert dictionary_key("restart") != dictionary_key("restarting")
    assert len(sanitize_command("take " + "apple " * 100)) <= MAX_COMMAND_LENGTH


# ------------------------------------------------------------------ against the real interpreter
@pytest.mark.parametrize("separator", [", ", ",", ". ", " then ", " THEN "])
def test_the_whole_route_in_one_line_is_one_turn(separator):
    """Issue 9: on CoinCollector level 110 the route typed as one line won on turn 1 of a 3-turn budget."""
    env = TurnBudget(gym.make(COIN, level=110, info_keys=KEYS), max_turns=3)
    _, info = env.reset(seed=0, options={"task": 0})
    plan = info["expert_plan"]
    assert len(plan) > 3
    _, reward, terminated, truncated, after = env.step(separator.join(plan))
    assert not (terminated or truncated or after["won"]) and reward == 0.0
    assert after["expert_plan"] == plan[1:] and after["moves"] == 1


@pytest.mark.parametrize(
    "line",
    ["look, look", "look.look", "look then look", "me, look", "myself, look", "self, look", "look. me, look",
     "look, restart", "look, save", "look,script", "look. g", "look, again", "look, undo", "look then quit",
     "g", "again", "transcripts", "print_stuff", "enable print state option", "look, notify off",
     'say "look, look"', "go west, go north"],
)  # fmt: skip
def test_every_line_reaches_the_interpreter_as_at_most_one_action(line, interpreter, scratch_cwd):
    env = gym.make(COIN, info_keys=KEYS)
    env.reset(seed=0, options={"task": 0})
    _, _, _, _, after = step_once(env, interpreter, line)
    assert after["moves"] <= 1
    assert expert_wins(env, after)
    assert list(scratch_cwd.iterdir()) == []


def test_restart_in_a_later_clause_never_restarts_the_game(interpreter, scratch_cwd):
    """Issue 9: ``look, restart`` + ``yes`` restarted the interpreter behind TextWorld's trackers."""
    env = gym.make(COIN, level=10, info_keys=KEYS)
    _, info = env.reset(seed=0, options={"task": 0})
    env.step(info["expert_action"])
    step_once(env, interpreter, "look, restart")
    _, _, _, _, info = step_once(env, interpreter, "yes")
    assert expert_wins(env, info)


def test_the_interpreter_never_writes_files(interpreter, scratch_cwd):
    env = gym.make(COIN, info_keys=KEYS)
    env.reset(seed=0, options={"task": 0})
    game_folder = Path(env.unwrapped._game_path(env.unwrapped.task_id)).parent
    before = sorted(game_folder.iterdir())
    for line in ("look, save", "look,script", "save", "script", "transcripts", "look. me, save", "look then script"):
        step_once(env, interpreter, line)
    assert list(scratch_cwd.iterdir()) == [] and sorted(game_folder.iterdir()) == before


def test_refused_commands_show_the_games_message_and_change_nothing(interpreter):
    env = gym.make(COOKING, difficulty=3, info_keys=KEYS)
    _, info = env.reset(seed=0, options={"task": 0})
    takes = [command for command in info["admissible_actions"] if command.startswith("take ")]
    objects = [command.split(" from ")[0][len("take ") :] for command in takes]
    assert len(objects) >= 2
    for line, feedback in [
        (f"take {objects[0]} and {objects[1]}", MULTIPLE_OBJECTS_FEEDBACK),
        ("take both", MULTIPLE_OBJECTS_FEEDBACK),
        (f"take all but {objects[0]}", MULTIPLE_OBJECTS_FEEDBACK),
        ("restart", UNKNOWN_VERB_FEEDBACK),
        ("undo", UNKNOWN_VERB_FEEDBACK),
    ]:
        interpreter.clear()
        obs, reward, terminated, truncated, after = env.step(line)
        assert interpreter == [] and (obs, reward, terminated, truncated) == (feedback, 0.0, False, False)
        assert after["expert_plan"] == info["expert_plan"] and after["moves"] == 0


# ----------------------------------------------------------------------------- property test
GAMES = {"coin": (COIN, {"level": 5}), "cooking": (COOKING, {"difficulty": 3})}


@pytest.fixture(scope="module")
def fuzz_envs():
    envs = {name: gym.make(env_id, info_keys=KEYS, **kwargs) for name, (env_id, kwargs) in GAMES.items()}
    yield envs
    for env in envs.values():
        env.close()


@st.composite
def clauses(draw, admissible):
    """A clause: an admissible command, maybe with a multi-object word after its verb, or a meta-command."""
    kind = draw(st.sampled_from(["admissible", "admissible", "meta", "multi"]))
    if kind == "meta":
        return draw(st.sampled_from(META))
    command = draw(st.sampled_from(admissible))
    if kind == "multi" and " " in command:
        verb, rest = command.split(" ", 1)
        word = draw(st.sampled_from(["all", "both", "2", "two", "everything", "all but"]))
        return f"{verb} {word} {rest}"
    return command


@pytest.mark.slow
@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
@pytest.mark.parametrize("game", sorted(GAMES))
def test_any_line_is_at_most_one_action_and_the_expert_still_wins(game, data, fuzz_envs, interpreter, scratch_cwd):
    env = fuzz_envs[game]
    task = data.draw(st.integers(0, 2), label="task")
    _, info = env.reset(seed=task, options={"task": task})
    for _ in range(data.draw(st.integers(0, len(info["expert_plan"]) - 1), label="expert steps first")):
        _, _, _, _, info = env.step(info["expert_action"])
    parts = data.draw(st.lists(clauses(list(info["admissible_actions"])), min_size=1, max_size=4), label="clauses")
    separators = data.draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(parts) - 1, max_size=len(parts) - 1))
    line = data.draw(st.sampled_from(ORDERS), label="order") + parts[0]
    line += "".join(separator + part for separator, part in zip(separators, parts[1:], strict=True))
    moves = info["moves"]
    _, _, terminated, _, after = step_once(env, interpreter, line)
    assert after["moves"] - moves <= 1
    assert list(scratch_cwd.iterdir()) == []
    if terminated:
        assert after["won"] or after["lost"]
    elif after["expert_plan"]:  # empty when an admissible command (e.g. eating an ingredient) spoilt the recipe
        assert expert_wins(env, after)
