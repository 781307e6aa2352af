"""Forks share the loaded engine (TextWorld interpreter, ALFWorld planner library) and stay independent."""

from __future__ import annotations

import subprocess
import sys
import threading

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
from agentgym_budget.tasks.alfworld.planner import LIBRARIES
from agentgym_budget.tasks.textworld.interpreter import InterpreterLease
from agentgym_budget.testing import transition_key
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

COOKING = "agentgym_budget/TextWorld-Cooking-v0"
ALFWORLD = "agentgym_budget/ALFWorld-v0"


def _stack(family: str, **kwargs) -> StateSnapshot:
    if family == "textworld":
        base = gym.make(COOKING, difficulty=3, info_keys={"expert_plan"}, **kwargs)
    else:
        base = gym.make(ALFWORLD, num_games=1, info_keys={"expert_plan"}, **kwargs)
    return StateSnapshot(TurnBudget(base, max_turns=60))


def _started(family: str, **kwargs) -> tuple[StateSnapshot, list[str]]:
    env = _stack(family, **kwargs)
    _, info = env.reset(seed=4, options={"task": 3})
    plan = info["expert_plan"]
    for action in plan[:2]:
        env.step(action)
    return env, ["look", "inventory", *plan[2:]]


def _play(env: gym.Env, actions: list[str]) -> list[tuple]:
    """Step ``actions`` until the episode ends; return the transitions."""
    played = []
    for action in actions:
        result = env.step(action)
        played.append(transition_key(result))
        if result[2] or result[3]:
            break
    return played


def _users(env: StateSnapshot, family: str) -> int:
    engine = env.unwrapped._engine
    return engine._layers()[2]._jericho.users if family == "textworld" else engine._pddl._share.users


@pytest.mark.slow
@pytest.mark.parametrize("family", ["textworld", "alfworld"])
def test_forks_share_the_engine_and_start_none(family, monkeypatch):
    env, continuation = _started(family)
    snap = env.snapshot()
    expected = _play(env, continuation)
    env.restore(snap)
    libraries = LIBRARIES.loaded

    def no_new_engine(*args, **kwargs):
        raise AssertionError("a fork started an engine of its own")

    monkeypatch.setattr(InterpreterLease, "start", no_new_engine)
    monkeypatch.setattr(ALFWorldEnv, "_act", no_new_engine)  # a replay would step the engine
    forks = env.fork(4)
    monkeypatch.undo()
    assert _users(env, family) == 5 and LIBRARIES.loaded == libraries
    for fork in forks:
        assert _play(fork, continuation) == expected
    assert _play(env, continuation) == expected, "the forks moved the original env"
    for fork in forks:
        fork.close()
    assert _users(env, family) == 1


@pytest.mark.slow
@pytest.mark.parametrize("family", ["textworld", "alfworld"])
def test_forks_outlive_a_reset_or_close_of_the_original(family):
    env, continuation = _started(family)
    snap = env.snapshot()
    expected = _play(env, continuation)
    env.restore(snap)
    forks = env.fork(2)
    _play(forks[0], continuation[:2])
    env.reset(seed=9, options={"task": 0})
    env.step("look")
    assert _play(forks[1], continuation) == expected
    env.close()
    forks[0].restore(snap)
    assert _play(forks[0], continuation) == expected
    forks[1].reset(seed=9, options={"task": 1})
    forks[1].restore(snap)
    assert _play(forks[1], continuation) == expected, "a state of another episode restores (by its planner path)"
    for fork in forks:
        fork.close()


@pytest.mark.slow
def test_alfworld_forks_with_shuffled_names_rename_without_touching_the_original():
    env, continuation = _started("alfworld", shuffle_names=True)
    snap = env.snapshot()
    expected = _play(env, continuation)
    env.restore(snap)
    (fork,) = env.fork(1)
    _, info = fork.reset(seed=123, options={"task": 3})  # another seed: other entity names
    fork.step(info["admissible_actions"][0])
    assert _play(env, continuation) == expected, "the fork's renaming changed the original's entity names"
    fork.restore(snap)
    assert _play(fork, continuation) == expected
    fork.close()


@pytest.mark.parametrize("family", ["textworld", "alfworld"])
def test_forks_step_correctly_from_several_threads(family):
    env, continuation = _started(family)
    snap = env.snapshot()
    expected = _play(env, continuation)
    env.restore(snap)
    forks = env.fork(4)
    results: dict[int, list[tuple]] = {}
    errors: list[BaseException] = []

    def play(index: int) -> None:
        try:
            results[index] = _play(forks[index], continuation)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=play, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    assert [results[i] for i in range(4)] == [expected] * 4
    for fork in forks:
        fork.close()


def test_forked_wrappers_are_independent_of_each_other_and_of_the_original():
    from agentgym_budget.wrappers import BudgetMix, ProcessReward

    base = gym.make(COOKING, difficulty=3, info_keys={"expert_plan"}, max_episode_steps=50)
    stack = TurnBudget(gym.wrappers.RecordEpisodeStatistics(base), max_turns=60)
    env = StateSnapshot(ProcessReward(BudgetMix(stack, budgets=[30, 40]), coefficient=1.0))
    _, info = env.reset(seed=4, options={"task": 3})
    env.step(info["expert_plan"][0])

    def wrapper_state(e: gym.Env) -> tuple:
        return (
            e.get_wrapper_attr("turn"),
            e.get_wrapper_attr("sampled_budget"),
            e.get_wrapper_attr("_potential"),
            e.get_wrapper_attr("episode_lengths"),
            e.get_wrapper_attr("_elapsed_steps"),
        )

    before = wrapper_state(env)
    forks = env.fork(2)
    assert [wrapper_state(fork) for fork in forks] == [before, before]
    for action in info["expert_plan"][1:3]:
        forks[0].step(action)
    assert wrapper_state(forks[0]) != before
    assert wrapper_state(forks[1]) == before and wrapper_state(env) == before
    rng_state = env.get_wrapper_attr("_rng").bit_generator.state
    forks[1].reset()  # draws its budget from BudgetMix's generator: the fork's own
    assert wrapper_state(env) == before and env.get_wrapper_attr("_rng").bit_generator.state == rng_state
    for fork in forks:
        fork.close()


_CYCLES = """
import gc, warnings
import gymnasium as gym
import agentgym_budget
from agentgym_budget.errors import InterpreterHaltedError
from agentgym_budget.tasks.textworld import games
from agentgym_budget.tasks.textworld.interpreter import InterpreterLease
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

SESSION = '''
env = StateSnapshot(TurnBudget(gym.make(env_id, **kwargs), max_turns=20))
env.reset(seed=0)
forks = env.fork(4)
forks[1].step('look')
make = lambda: env  # refers back to the session: the session is a reference cycle
'''
for env_id, kwargs in [("agentgym_budget/TextWorld-CoinCollector-v0", {"level": 3}), ("agentgym_budget/ALFWorld-v0", {"num_games": 1})]:
    for round in range(3):
        exec(SESSION, {"gym": gym, "StateSnapshot": StateSnapshot, "TurnBudget": TurnBudget, "env_id": env_id, "kwargs": kwargs})
        gc.collect()  # every finalizer of the unreachable stack runs, in the collector's order
print("collected the sessions", flush=True)

path = str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    lease = InterpreterLease.start(path, seed=1)
lease.reset()
frotz = lease._shared.frotz
frotz.__del__()  # the interpreter finalized before the env that closes it
try:
    frotz.step("look")
except InterpreterHaltedError as error:
    assert "unloaded" in str(error), error
else:
    raise AssertionError("a step after the library was unloaded did not raise")
lease.close()
print("collected")
"""


@pytest.mark.slow
def test_stacks_left_in_reference_cycles_are_collected_without_crashing():
    """A garbage collection finalizes an unreachable stack's objects in any order; none may touch freed memory.

    Run in a child process: the failure this guards against (TextWorld's ``JerichoEnv.__del__`` closing an
    interpreter whose library jericho's own ``__del__`` had already unloaded) is a segmentation fault.
    """
    done = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", _CYCLES], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("collected"), done.stderr[-3000:]


def test_interpreters_finalized_at_interpreter_exit_close_without_errors(monkeypatch):
    """At interpreter exit Python clears module globals before the last finalizers run: closing an env then
    printed ``TypeError: isinstance() arg 2 must be a type`` ("Exception ignored in ... __del__")."""
    import warnings

    from agentgym_budget.errors import InterpreterHaltedError
    from agentgym_budget.tasks.textworld import games, watchdog

    path = str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lease = InterpreterLease.start(path, seed=1)
    lease.reset()
    frotz = lease._shared.frotz
    with monkeypatch.context() as exiting:
        for name in ("_UnloadedLibrary", "jericho", "ctypes"):
            exiting.setattr(watchdog, name, None)
        frotz.__del__()
        lease.close()
    with pytest.raises(InterpreterHaltedError, match="unloaded"):
        frotz.step("look")
