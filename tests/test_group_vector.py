"""GroupVectorEnv: a Gymnasium vector env of groups, one real reset per start of a group, members forked."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.utils.passive_env_checker import data_shares_objects
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.errors import EpisodeOverError, InvalidActionError, InvalidOptionError
from agentgym_budget.vector.group_vector import GroupVectorEnv
from agentgym_budget.wrappers import BudgetMix, TurnBudget

COIN = "agentgym_budget/TextWorld-CoinCollector-v0"


def _coin(level: int = 1, max_turns: int = 3) -> gym.Env:
    return TurnBudget(gym.make(COIN, level=level), max_turns=max_turns)


def _mixed() -> gym.Env:
    return BudgetMix(TurnBudget(gym.make(COIN, level=1), max_turns=10), budgets=(2, 4, 6, 8))


def _count(monkeypatch: pytest.MonkeyPatch, method: str) -> list[int]:
    """Record the id of the base env on every call of its ``method``."""
    cls = type(gym.make(COIN, level=1).unwrapped)
    original = getattr(cls, method)
    calls: list[int] = []

    def counted(self, *args, **kwargs):
        calls.append(id(self))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, method, counted)
    return calls


def test_a_group_starts_alike_groups_differ_and_the_api_is_gymnasiums() -> None:
    envs = GroupVectorEnv(_mixed, group_size=2, groups=3)
    try:
        assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP and envs.num_envs == 6
        observations, infos = envs.reset(seed=11)
        assert isinstance(observations, tuple) and envs.observation_space.contains(observations)
        groups = [observations[g * 2 : g * 2 + 2] for g in range(3)]
        assert all(len(set(group)) == 1 for group in groups)
        tasks = infos["task_id"].reshape(3, 2)
        assert all(len(set(row)) == 1 for row in tasks) and len({row[0] for row in tasks}) == 3
        budgets = infos["max_turns"].reshape(3, 2)
        assert all(len(set(row)) == 1 for row in budgets)  # one BudgetMix draw per group
        assert infos["group_id"].tolist() == [0, 0, 1, 1, 2, 2] and infos["_group_id"].all()
        assert infos["group_member"].tolist() == [0, 1] * 3
        actions = envs.action_space.sample()
        assert envs.action_space.contains(actions)
        observations, rewards, terminated, truncated, infos = envs.step(actions)
        assert envs.observation_space.contains(observations)
        assert rewards.dtype == np.float64 and terminated.dtype == truncated.dtype == np.bool_
        assert rewards.shape == terminated.shape == truncated.shape == (6,)
        # same seed for the groups: same task everywhere; another seed: other tasks
        _, same = envs.reset(seed=[5, 5, 5])
        assert len(set(same["task_id"])) == 1
        _, other = envs.reset(seed=12)
        assert other["task_id"].tolist() != infos["task_id"].tolist()
    finally:
        envs.close()


def _trace(envs: GroupVectorEnv, seed: int, plan: list[tuple[str, ...]]) -> list:
    trace = [envs.reset(seed=seed)]
    trace += [envs.step(actions) for actions in plan]
    return trace


def test_a_seed_gives_the_same_run_autoresets_included() -> None:
    plan = [("take coin", "look", "look", "take coin")] + [("look", "take coin", "look", "look")] * 4
    first, second = (GroupVectorEnv(_coin, group_size=2, groups=2) for _ in range(2))
    try:
        assert data_equivalence(_trace(first, 3, plan), _trace(second, 3, plan), exact=True)
    finally:
        first.close()
        second.close()


def test_gymnasiums_vector_wrappers_see_each_members_episodes() -> None:
    envs = RecordEpisodeStatistics(GroupVectorEnv(lambda: _coin(max_turns=2), group_size=2, groups=1))
    try:
        envs.reset(seed=4)
        first = envs.step(("take coin", "look"))
        assert first[4]["_episode"].tolist() == [True, False] and first[4]["episode"]["r"][0] == 1.0
        second = envs.step(("look", "look"))  # member 0 autoresets (not an episode), member 1 runs out of turns
        assert second[4]["_episode"].tolist() == [False, True] and second[4]["episode"]["l"][1] == 2
        assert not data_shares_objects(first, second)
    finally:
        envs.close()


def test_members_are_independent_and_play_like_a_fresh_reset() -> None:
    envs = GroupVectorEnv(_coin, group_size=3, groups=1)
    try:
        envs.reset(seed=2)
        fresh = _coin()
        fresh.reset(seed=2)
        expected = [fresh.step(action)[:4] for action in ("look", "go north")]
        got = [envs.step(actions) for actions in (("look", "look", "inventory"), ("go north", "go north", "look"))]
        for index in (0, 1):  # members 0 and 1 play the same commands as the fresh env, member 2 others
            assert [tuple(part[index] for part in step[:4]) for step in got] == expected
        assert got[0][0][2] != got[0][0][0] and got[1][4]["turn"].tolist() == [2, 2, 2]
    finally:
        envs.close()


def test_an_ended_member_moves_to_its_groups_next_start_and_the_others_follow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fresh = _coin()
    fresh.reset(seed=4)
    expected = [fresh.step(action) for action in ("look", "look", "take coin")][-1]
    resets = _count(monkeypatch, "reset")
    envs = GroupVectorEnv(_coin, group_size=2, groups=1)
    try:
        _, infos = envs.reset(seed=4)
        first_task = infos["task_id"][0]
        assert len(resets) == 1 and envs.resets == 1
        _, rewards, terminated, _, _ = envs.step(("take coin", "look"))
        assert terminated.tolist() == [True, False] and rewards[0] == 1.0
        observations, rewards, terminated, _, infos = envs.step(("ignored", "look"))  # member 0: next start
        assert len(resets) == 2 and envs.resets == 2 and infos["group_id"].tolist() == [1, 0]
        next_start, next_task = observations[0], infos["task_id"][0]
        assert next_task != first_task  # the group's env now holds another game
        assert rewards[0] == 0.0 and not terminated[0] and infos["turn"].tolist() == [0, 2]
        # member 1 still plays its first start, as a fresh env would, although the group's env was reset
        observations, rewards, terminated, _, infos = envs.step(("look", "take coin"))
        assert (observations[1], rewards[1], terminated[1]) == expected[:3]
        observations, _, _, _, infos = envs.step(("look", "ignored"))  # member 1 joins the next start
        assert len(resets) == 2, "the next start is drawn once per group"
        assert observations[1] == next_start and infos["task_id"][1] == next_task
        assert infos["group_id"].tolist() == [1, 1] and infos["turn"].tolist() == [2, 0]
    finally:
        envs.close()


def test_one_real_reset_per_group() -> None:
    envs = GroupVectorEnv(_mixed, group_size=8, groups=2)
    calls: list[int] = []
    for base in envs.bases:
        original = base.unwrapped.reset

        def counted(*args, _original=original, **kwargs):
            calls.append(1)
            return _original(*args, **kwargs)

        base.unwrapped.reset = counted
    try:
        envs.reset(seed=0)
        assert len(calls) == 2 == envs.resets
        envs.reset(seed=1, options={"reset_mask": np.array([True] * 8 + [False] * 8)})
        assert len(calls) == 3 == envs.resets
    finally:
        envs.close()


def test_same_step_autoreset_returns_the_final_observation_in_info() -> None:
    envs = GroupVectorEnv(_coin, group_size=2, groups=1, autoreset_mode="same_step")
    try:
        envs.reset(seed=4)
        observations, _, terminated, _, infos = envs.step(("take coin", "look"))
        assert terminated.tolist() == [True, False] and infos["_final_obs"].tolist() == [True, False]
        final = infos["final_info"]  # Gymnasium's vector form: an array per key
        assert final["won"][0] and final["group_id"][0] == 0 and final["_won"].tolist() == [True, False]
        assert infos["group_id"].tolist() == [1, 0] and infos["turn"].tolist() == [0, 1]
        assert observations[0] != infos["final_obs"][0]
    finally:
        envs.close()


def test_disabled_autoreset_resets_whole_groups_only() -> None:
    envs = GroupVectorEnv(_coin, group_size=2, groups=2, autoreset_mode=AutoresetMode.DISABLED)
    try:
        envs.reset(seed=4)
        envs.step(("take coin", "look", "look", "look"))
        with pytest.raises(EpisodeOverError, match="member 0's episode ended"):
            envs.step(("look",) * 4)
        with pytest.raises(InvalidOptionError, match="whole groups"):
            envs.reset(options={"reset_mask": np.array([True, False, False, False])})
        options = {"reset_mask": np.array([True, True, False, False])}
        observations, infos = envs.reset(seed=[9, None], options=options)
        assert "reset_mask" in options, "the caller's options are not changed"
        assert infos["_turn"].tolist() == [True, True, False, False] and observations[0] == observations[1]
        _, _, _, _, infos = envs.step(("look",) * 4)
        assert infos["turn"].tolist() == [1, 1, 2, 2]
    finally:
        envs.close()


def test_close_closes_members_waiting_forks_and_group_envs(monkeypatch: pytest.MonkeyPatch) -> None:
    closed = _count(monkeypatch, "close")
    envs = GroupVectorEnv(_coin(), group_size=3, groups=2)  # an env: group 1 uses a clone of it
    envs.reset(seed=4)
    envs.step(("take coin", "look", "look", "look", "look", "look"))
    envs.step(("look",) * 6)  # member 0 takes a fork of the next start; two forks wait
    waiting = [env for starts in envs._starts for start in starts.values() for env in start.waiting if env]
    expected = {id(env.unwrapped) for env in [*envs.envs, *waiting, *envs.bases]}
    assert len(waiting) == 2 and len(expected) == 6 + 2 + 2
    closed.clear()
    envs.close()
    assert expected <= set(closed) and envs.closed
    envs.close()  # twice is fine


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"group_size": 0}, "group_size must be a positive integer, got 0"),
        ({"group_size": 2, "groups": True}, "groups must be a positive integer, got True"),
        ({"group_size": 2, "autoreset_mode": "later"}, "unknown autoreset_mode 'later'"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidOptionError, match=match):
        GroupVectorEnv(_coin, **kwargs)


def test_bad_seeds_and_actions_are_refused() -> None:
    envs = GroupVectorEnv(_coin, group_size=2, groups=2)
    try:
        with pytest.raises(EpisodeOverError, match="reset"):
            envs.step(("look",) * 4)
        with pytest.raises(InvalidOptionError, match=r"one seed per group \(2 groups\), got \[1, 2, 3, 4\]"):
            envs.reset(seed=[1, 2, 3, 4])
        envs.reset(seed=0)
        with pytest.raises(InvalidActionError, match=r"expected a sequence of 4 actions .* got 3 actions"):
            envs.step(("look",) * 3)
        with pytest.raises(InvalidActionError, match="got a str"):
            envs.step("look")
    finally:
        envs.close()


def test_webshop_groups() -> None:
    envs = GroupVectorEnv(
        lambda: TurnBudget(gym.make("agentgym_budget/WebShop-1k-v0"), max_turns=1), group_size=2, groups=2
    )
    try:
        observations, infos = envs.reset(seed=7)
        assert observations[0] == observations[1] != observations[2] == observations[3]
        assert infos["task_id"][0] == infos["task_id"][1] != infos["task_id"][2]
        observations, _, _, truncated, _ = envs.step(("search[red dress]",) * 4)
        assert observations[0] == observations[1] and truncated.all()
        _, _, _, _, infos = envs.step(("ignored",) * 4)
        assert infos["group_id"].tolist() == [2, 2, 3, 3] and envs.resets == 4
    finally:
        envs.close()


def test_a_group_env_is_a_vector_env_whose_starts_are_forks_with_per_env_options() -> None:
    from agentgym_budget.vector.batch import BatchVectorEnv
    from agentgym_budget.vector.text_vector_env import TextVectorEnv

    assert issubclass(GroupVectorEnv, BatchVectorEnv) and issubclass(TextVectorEnv, BatchVectorEnv)
    envs = GroupVectorEnv(_coin, group_size=2, groups=2)
    try:
        _, infos = envs.reset(seed=0, options={"task": [3, 3, 5, 5]})
        assert infos["task_id"][0] == infos["task_id"][1] != infos["task_id"][2] == infos["task_id"][3]
        with pytest.raises(InvalidOptionError, match="members of group 0 share one start"):
            envs.reset(options={"task": [3, 4, 5, 5]})
        with pytest.raises(InvalidOptionError, match=r"options\['task'\] has 2 values; give one per sub-env \(4\)"):
            envs.reset(options={"task": [3, 5]})
    finally:
        envs.close()
