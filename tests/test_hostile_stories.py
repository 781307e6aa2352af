"""Hostile story files with valid checksums: a self-jump is stopped by the watchdog, a halt is a typed error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.errors import InterpreterHaltedError
from agentgym_budget.tasks.textworld.watchdog import GuardedFrotzEnv, Watchdog
from tests.hostile_helpers import hostile_story


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_a_story_that_jumps_to_itself_is_stopped_at_the_time_limit(tmp_path):
    path = hostile_story("loop", tmp_path)
    started = time.monotonic()
    with pytest.raises(InterpreterHaltedError, match=r"for over 0.3 s of CPU time and was stopped"):
        GuardedFrotzEnv(str(path), seed=1, time_limit=0.3)
    assert time.monotonic() - started < 60  # it returned at all: no hang


def test_a_loop_inside_one_instruction_is_ended_too(tmp_path):
    """``@remove_obj`` of an object its parent does not list: frotz's child-list walk never reads the halt flag."""
    path = hostile_story("unlink", tmp_path)
    started = time.monotonic()
    with pytest.raises(InterpreterHaltedError, match=r"for over 0.3 s of CPU time and was stopped"):
        GuardedFrotzEnv(str(path), seed=1, time_limit=0.3)
    assert time.monotonic() - started < 60  # ended at all: the walk was broken (BREAK_AFTER), no hang
    env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3)
    assert "halted" not in env.reset(seed=0)[0]  # the process and other games go on
    env.close()


def test_a_call_waiting_for_a_core_is_not_stopped_one_using_its_cpu_time_is():
    """The limit counts the calling thread's CPU time: a busy machine that delays a call does not halt it."""
    import ctypes

    watchdog, flag = Watchdog(), ctypes.c_int(0)
    ticket, fired = watchdog.arm(lib=None, flag=flag, seconds=0.1)
    time.sleep(0.4)  # four limits of wall time, almost no CPU time: as if the thread waited for a core
    assert not fired[0] and flag.value == 0
    started = time.monotonic()
    while not fired[0] and time.monotonic() - started < 30:
        pass  # burns this thread's CPU time
    watchdog.disarm(ticket)
    assert fired[0] and flag.value == 1


@pytest.mark.parametrize(
    ("kind", "error"),
    [("div0", "division by zero"), ("mod0", "division by zero"), ("window", ""), ("call", "")],
)
def test_a_runtime_error_frotz_carries_on_from_is_a_halt_not_a_crash(tmp_path, kind, error):
    """In a child process: frotz itself would end it (SIGFPE, SIGSEGV, SIGSEGV)."""
    code = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "from pathlib import Path\n"
        "from agentgym_budget.errors import InterpreterHaltedError\n"
        "from agentgym_budget.tasks.textworld.watchdog import GuardedFrotzEnv\n"
        "from tests.hostile_helpers import hostile_story\n"
        f"path = hostile_story({kind!r}, Path({str(tmp_path)!r}))\n"
        "try:\n    GuardedFrotzEnv(str(path), seed=1)\n"
        "except InterpreterHaltedError as err:\n    print('halted:', err)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-2000:]}"
    assert "halted: " in result.stdout and error in result.stdout, result.stdout


def test_an_illegal_opcode_is_a_typed_error_not_an_observation(tmp_path):
    path = hostile_story("illegal", tmp_path)
    with pytest.raises(InterpreterHaltedError, match="runtime error"):
        GuardedFrotzEnv(str(path), seed=1)
    env = gym.make("agentgym_budget/TextWorld-File-v0", path=str(path))
    with pytest.raises(InterpreterHaltedError, match="illegal opcode"):
        env.reset(seed=0)
    with pytest.raises(InterpreterHaltedError):
        env.reset(seed=1)
    env.close()


def test_genuine_games_play_on_after_a_stopped_call(tmp_path):
    with pytest.raises(InterpreterHaltedError):
        GuardedFrotzEnv(str(hostile_story("loop", tmp_path)), seed=1, time_limit=0.2)
    env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3)
    observation, _ = env.reset(seed=0)
    assert "halted" not in observation
    assert "halted" not in env.step("look")[0]
    env.close()


@pytest.mark.slow
def test_fuzzed_stories_play_or_raise_typed_errors(tmp_path):
    """Mutated stories with fixed checksums (``python -m tests.story_fuzz 1000 FOLDER`` for the long run)."""
    result = subprocess.run(
        [sys.executable, "-m", "tests.story_fuzz", "40", str(tmp_path)],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert result.returncode == 0, f"child exited with {result.returncode}: {result.stderr[-3000:]}"
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert counts["played"] + counts["halted"] + counts["refused"] == counts["cases"] >= 40
    assert counts["halted"] > 0  # the mutations reached code the interpreter runs
