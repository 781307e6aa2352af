"""TextVectorEnv: the native vector env behind ``gym.make_vec(id, vectorization_mode="vector_entry_point")``.

Real TextWorld games (Coin Collector level 5, tasks 0-3, cached by the suite); trajectories are
compared with Gymnasium's ``SyncVectorEnv`` over the same ids, seeds and actions.
"""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import agentgym_budget
from agentgym_budget.errors import EpisodeOverError, InvalidActionError, InvalidBudgetError, InvalidOptionError
from agentgym_budget.vector import reset_each
from agentgym_budget.vector.text_vector_env import TextVectorEnv
from agentgym_budget.wrappers import TurnBudget
from tests.test_conformance import SPECIAL_KWARGS

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"
TASKS = [0, 1, 2, 0]
SEEDS = [3, 4, 5, 6]
ACTIONS = [("go north", "look", "take coin", "go east"), ("go south", "go west", "look", "take coin")]


def _native(**kwargs) -> TextVectorEnv:
    return gym.make_vec(COIN, num_envs=4, vectorization_mode="vector_entry_point", **kwargs)


def _sync(mode: AutoresetMode, max_turns: int) -> SyncVectorEnv:
    return gym.make_vec(
        COIN,
        num_envs=4,
        vectorization_mode="sync",
        wrappers=[lambda env: TurnBudget(env, max_turns=max_turns)],
        vector_kwargs={"autoreset_mode": mode},
    )


def _same_batch(ours, theirs) -> None:
    observations, *arrays, infos = ours
    expected_observations, *expected_arrays, expected_infos = theirs
    assert observations == tuple(expected_observations)
    for got, expected in zip(arrays, expected_arrays, strict=True):
        assert got.tolist() == expected.tolist()
    assert sorted(infos) == sorted(expected_infos)
    for key, values in infos.items():
        if key != "final_info":
            assert list(values) == list(expected_infos[key]), key
    if "final_info" in infos:
        assert list(infos["final_info"]["task_id"]) == list(expected_infos["final_info"]["task_id"])


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_trajectories_match_sync_vector_env(mode):
    native, sync = _native(max_turns=2, autoreset_mode=mode), _sync(mode, 2)
    try:
        ours = native.reset(seed=SEEDS, options={"task": TASKS})
        theirs = reset_each(sync, [{"task": task} for task in TASKS], seeds=SEEDS)
        assert ours[0] == tuple(theirs[0]) and list(ours[1]["task_id"]) == list(theirs[1]["task_id"])
        ended = False
        for step in range(5):  # budget 2: every sub-env ends and autoresets (a seeded task draw)
            actions = ACTIONS[step % 2]
            ours, theirs = native.step(actions), sync.step(actions)
            _same_batch(ours, theirs)
            ended |= bool(ours[3].any())
        assert ended and native.metadata["autoreset_mode"] is mode
    finally:
        native.close()
        sync.close()


def test_disabled_autoreset_needs_a_masked_reset():
    native = _native(max_turns=1, autoreset_mode="disabled")
    try:
        native.reset(seed=SEEDS, options={"task": TASKS, "max_turns": [1, 3, 3, 3]})
        _, _, _, truncated, _ = native.step(ACTIONS[0])
        assert truncated.tolist() == [True, False, False, False]
        with pytest.raises(EpisodeOverError, match=r"sub-envs \[0\] ended and autoreset_mode is 'disabled'"):
            native.step(ACTIONS[1])
        mask = np.array([True, False, False, False])
        _, infos = native.reset(seed=[9, None, None, None], options={"task": [3, None, None, None], "reset_mask": mask})
        assert infos["_task_id"].tolist() == [True, False, False, False] and infos["task_id"][0] == "coin-l5-3"
        _, _, _, _, infos = native.step(ACTIONS[1])  # the refused step stepped nothing
        assert infos["turn"].tolist() == [1, 2, 2, 2]
    finally:
        native.close()


def test_per_env_options_and_budgets():
    native = _native(max_turns=[2, 3, 4, 5])
    try:
        _, infos = native.reset(seed=0, options={"task": np.array(TASKS), "max_turns": [1, None, 7, None]})
        assert list(infos["task_id"]) == ["coin-l5-0", "coin-l5-1", "coin-l5-2", "coin-l5-0"]
        assert infos["max_turns"].tolist() == [1, 3, 7, 5]
        _, infos = native.reset(seed=0, options={"task": 1})
        assert set(infos["task_id"]) == {"coin-l5-1"} and infos["max_turns"].tolist() == [2, 3, 4, 5]
        with pytest.raises(InvalidOptionError, match=r"options\['task'\] has 3 values; give one per sub-env \(4\)"):
            native.reset(options={"task": [0, 1, 2]})
        with pytest.raises(InvalidOptionError, match="reset_mask"):
            native.reset(options={"reset_mask": [True] * 4})
        with pytest.raises(InvalidBudgetError):
            native.reset(options={"max_turns": 0})
    finally:
        native.close()


def test_same_results_with_one_two_and_three_threads():
    runs = []
    for threads in (1, 2, 3):
        native = _native(max_turns=2, threads=threads)
        try:
            batches = [native.reset(seed=SEEDS, options={"task": TASKS})]
            batches += [native.step(ACTIONS[step % 2]) for step in range(5)]
        finally:
            native.close()
        runs.append([(batch[0], *(a.tolist() for a in batch[1:-1]), list(batch[-1]["task_id"])) for batch in batches])
    assert runs[0] == runs[1] == runs[2]


def test_spaces_metadata_and_gymnasium_plumbing():
    envs = gym.make_vec(COIN, num_envs=2)  # an id with a vector entry point: Gymnasium's default mode uses it
    try:
        assert isinstance(envs, TextVectorEnv) and envs.spec.id == COIN and envs.spec.kwargs["num_envs"] == 2
        assert envs.single_observation_space == envs.envs[0].observation_space
        assert envs.observation_space == gym.vector.utils.batch_space(envs.single_observation_space, 2)
        observations, infos = envs.reset(seed=0, options={"task": 0})
        assert observations in envs.observation_space and "turn" not in infos
        assert envs.get_attr("task_id") == ("coin-l5-0", "coin-l5-0")
        assert envs.call("task_prepared", "coin-l5-0") == (True, True)
        with pytest.raises(InvalidActionError, match=r"expected a sequence of 2 actions .* got 3 actions in a tuple"):
            envs.step(("look",) * 3)
        with pytest.raises(InvalidActionError, match="got a str"):
            envs.step("ab")
    finally:
        envs.close()
    assert isinstance(gym.make_vec(COIN, num_envs=2, vectorization_mode="sync"), SyncVectorEnv)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_envs": 0}, "num_envs must be a positive integer, got 0"),
        ({"threads": 1.5}, "threads must be a positive integer, got 1.5"),
        ({"autoreset_mode": "sometimes"}, "unknown autoreset_mode 'sometimes'"),
        ({"max_turns": [1, 2]}, r"one budget or one per sub-env \(1\), got 2 budgets"),
    ],
)
def test_bad_arguments_are_typed_errors(kwargs, message):
    with pytest.raises(InvalidOptionError, match=message):
        TextVectorEnv(COIN, **{"num_envs": 1, **kwargs})


def test_step_before_reset_is_refused():
    envs = TextVectorEnv(COIN, 2)
    try:
        with pytest.raises(EpisodeOverError, match="never reset"):
            envs.step(("look", "look"))
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", agentgym_budget.registered_ids())
def test_every_id_makes_a_native_vector_env(env_id):
    kwargs = SPECIAL_KWARGS.get(env_id, dict)()
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **kwargs)
    try:
        assert isinstance(envs, TextVectorEnv) and envs.num_envs == 2
        assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        assert envs.envs[0].unwrapped.task_ids is envs.envs[1].unwrapped.task_ids  # shared, not listed twice
    finally:
        envs.close()


@pytest.mark.slow
def test_ids_missing_an_extra_raise_the_typed_error():
    code = (
        "import sys\n"
        "sys.modules['rapidfuzz'] = None\n"
        "sys.modules['fast_downward'] = None\n"
        "sys.modules['textworld_express'] = None\n"
        "sys.modules['minigrid'] = None\n"
        "sys.modules['scienceworld'] = None\n"
        "import gymnasium as gym, agentgym_budget\n"
        "from agentgym_budget.errors import MissingDependencyError\n"
        "for env_id in agentgym_budget.registered_ids():\n"
        "    if agentgym_budget.env_info(env_id).extra is None:\n"
        "        continue\n"
        "    try:\n"
        "        gym.make_vec(env_id, num_envs=2, vectorization_mode='vector_entry_point')\n"
        "    except MissingDependencyError:\n"
        "        print('missing', env_id)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    expected = [i for i in agentgym_budget.registered_ids() if agentgym_budget.env_info(i).extra is not None]
    assert done.stdout.split() == [word for env_id in expected for word in ("missing", env_id)]


_INFO_VALUES = [
    1,
    0,
    2.5,
    True,
    "s",
    [1, 2],
    [3],
    ("t",),
    None,
    10**30,
    np.float32(1.5),
    np.int8(3),
    np.arange(2),
    {"k": 1},
]


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and (a.dtype, a.shape) == (b.dtype, b.shape) and all(map(_same, a, b))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


@pytest.mark.slow
def test_batched_infos_are_what_gymnasiums_add_info_makes() -> None:
    """Same keys, order, dtypes, values and masks as folding ``VectorEnv._add_info`` (or the same error)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    envs = _native()
    keys = st.sampled_from(["a", "b", "_a", "final_obs", "final_info"])
    info = st.dictionaries(keys, st.sampled_from(_INFO_VALUES), max_size=4)
    same_keys = st.lists(keys, unique=True, max_size=3).flatmap(
        lambda names: st.lists(
            st.fixed_dictionaries({k: st.sampled_from(_INFO_VALUES) for k in names}), min_size=4, max_size=4
        )
    )
    ragged = st.lists(st.tuples(st.integers(0, 3), info), max_size=6)

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(same_keys.map(lambda infos: list(enumerate(infos))), ragged))
    def check(entries) -> None:
        expected: dict | type = {}
        try:
            for index, one in entries:
                expected = gym.vector.VectorEnv._add_info(envs, expected, one, index)
        except Exception as err:  # whatever _add_info raises, the batch raises too
            expected = type(err)
        try:
            got = envs._batch_infos(entries)
        except Exception as err:
            got = type(err)
        assert got == expected if isinstance(expected, type) else _same(expected, got)

    check()
    envs.close()
