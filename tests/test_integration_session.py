"""The episode mapping shared by every RL-library adapter: sessions, episode fields, action parser, pools."""

from __future__ import annotations

import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentgym_budget._internal.install_hint import install_command
from agentgym_budget.agents.actions import parse_action
from agentgym_budget.dependencies import require
from agentgym_budget.errors import (
    EpisodeOverError,
    InvalidActionError,
    InvalidBudgetError,
    InvalidOptionError,
    MissingDependencyError,
    UnknownEnvIdError,
)
from agentgym_budget.integrations.pool import SessionPool
from agentgym_budget.integrations.session import EpisodeSession
from agentgym_budget.integrations.session_config import SessionConfig, episode_fields

COIN = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", max_turns=4, info_keys=("expert_plan",))
SHOP = SessionConfig("WebShop-1k-v0", max_turns=12, info_keys=("expert_action",))


@pytest.fixture
def coin():
    session = EpisodeSession(COIN)
    yield session
    session.close()


@pytest.mark.parametrize(
    ("reply", "admissible", "command", "matched"),
    [
        ("go east", ["go east"], "go east", True),
        ("Action: Go  EAST", ["go east", "look"], "go east", True),
        ("<think>no, not west</think>Action: go east", ["go east"], "go east", True),
        ("<think>unfinished thoughts\nAction: go west", ["go west"], "", False),
        ("I will look first.\nAction: look\nAction: take coin", ["look", "take coin"], "take coin", True),
        ("Action: look\nthen maybe Action: take coin", ["look", "take coin"], "look", True),
        ("- open the fridge", [], "open the fridge", False),
        ("> `take coin`.", ["take coin"], "take coin", True),
        ("", ["look"], "", False),
        ("click[Buy Now]", ["click[buy now]"], "click[buy now]", True),
        ("search[red dress]", ["search[<keywords>]"], "search[red dress]", True),
        ("search[]", ["search[<keywords>]"], "search[]", False),
    ],
)
def test_parser_reads_one_command(reply, admissible, command, matched):
    parsed = parse_action(reply, admissible)
    assert (parsed.command, parsed.matched, parsed.reply) == (command, matched, reply)
    assert "\n" not in parsed.command


@pytest.mark.parametrize("reply", [None, 3, b"look", ["look"]])
def test_parser_refuses_non_text(reply):
    with pytest.raises(InvalidActionError, match="must be str"):
        parse_action(reply)


def test_every_reply_is_one_turn_and_truncation_is_not_termination(coin):
    first = coin.reset(seed=3)
    assert (first.turn, first.max_turns, first.turns_left, first.done) == (0, 4, 4, False)
    assert first.text.startswith("Goal: ") or first.goal in first.text
    replies = ["<think>hmm</think>", "Action: look\nAction: inventory", "dance wildly", 'Action: "look"']
    turns = [coin.step(reply) for reply in replies]
    assert [t.turn for t in turns] == [1, 2, 3, 4]
    assert [t.command for t in turns] == ["", "inventory", "dance wildly", "look"]
    assert turns[-1].truncated and not turns[-1].terminated and not turns[-1].won
    assert turns[-1].text.endswith("[Episode over: out of turns (4 of 4).]")
    with pytest.raises(EpisodeOverError, match="out of turns"):
        coin.step("look")
    record = coin.record()
    assert (record["turns"], record["budget"], record["truncated"], record["won"]) == (4, 4, True, False)


def test_expert_wins_within_the_budget_and_same_seed_gives_same_episode(coin):
    def play(seed: int) -> list:
        first = coin.reset(seed=seed, max_turns=30)
        turns = [first]
        for command in first.info["expert_plan"]:
            turns.append(coin.step(f"Action: {command}"))
        return turns

    turns = play(11)
    assert turns[-1].won and turns[-1].terminated and not turns[-1].truncated
    assert sum(t.reward for t in turns) == coin.total_reward == coin.record()["return"] > 0
    again = play(11)
    assert [(t.task_id, t.observation, t.reward) for t in again] == [
        (t.task_id, t.observation, t.reward) for t in turns
    ]
    assert play(12)[0].task_id != turns[0].task_id or play(12)[0].observation != turns[0].observation


def test_task_by_id_or_index_and_budget_shown_per_episode(coin):
    task_ids = coin.env.unwrapped.task_ids
    by_index = coin.reset(task=2)
    assert by_index.task_id == task_ids[2] and not by_index.budget_shown
    shown = coin.reset(task=task_ids[2], show_budget=True, max_turns=7)
    assert shown.task_id == task_ids[2] and shown.budget_shown and "[Turns left: 7 of 7]" in shown.text
    assert not coin.reset(task=2).budget_shown  # back to the config's default


def test_budget_mix_draws_per_episode_reproducibly():
    session = EpisodeSession(SessionConfig("TextWorld-CoinCollector-v0", budgets=(2, 5, 9), budget_weights=(1, 1, 2)))
    try:
        budgets = [session.reset(seed=s).max_turns for s in range(12)]
        assert set(budgets) == {2, 5, 9}
        assert budgets == [session.reset(seed=s).max_turns for s in range(12)]
        assert session.reset(seed=0, max_turns=3).max_turns == 3  # an explicit budget overrides the draw
    finally:
        session.close()


def test_process_reward_shapes_and_keeps_the_env_reward():
    config = SessionConfig(
        "TextWorld-Cooking-v0",
        env_kwargs="difficulty=1",
        max_turns=10,
        reward="process",
        process_reward={"invalid_penalty": 0.5},
        info_keys=("expert_plan",),
    )
    session = EpisodeSession(config)
    try:
        first = session.reset(seed=0)
        bad = session.step("dance")
        assert (bad.matched, bad.reward, bad.env_reward) == (False, -0.5, 0.0)
        for command in first.info["expert_plan"]:
            last = session.step(command)
        assert last.won
        record = session.record()
        assert record["env_return"] == pytest.approx(sum([bad.env_reward, *[1.0] * len(first.info["expert_plan"])]))
        assert record["return"] == pytest.approx(record["env_return"] - first.progress - 0.5)
    finally:
        session.close()


@pytest.mark.parametrize(
    ("fields", "error", "match"),
    [
        ({"max_turn": 3}, InvalidOptionError, "Did you mean 'max_turns'"),
        ({"task": 1.5}, InvalidOptionError, "task id"),
        ({"seed": "7"}, InvalidOptionError, "'seed' must be an integer"),
        ({"seed": True}, InvalidOptionError, "'seed' must be an integer >= 0, got True"),
        ({"seed": -1}, InvalidOptionError, "'seed' must be an integer >= 0, got -1"),
        ({"task": -1}, InvalidOptionError, r"index \(int >= 0\), got -1"),
        ({"task": False}, InvalidOptionError, "task id"),
        ({"max_turns": 0}, InvalidBudgetError, "positive integer"),
        ({"show_budget": "yes"}, InvalidOptionError, "true or false"),
    ],
)
def test_bad_episode_fields_are_refused(fields, error, match):
    with pytest.raises(error, match=match):
        episode_fields(fields)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"env_id": "TextWorld-CoinColector-v0"}, UnknownEnvIdError, "Did you mean"),
        ({"env_id": "WebShop-1k-v0", "reward": "shaped"}, InvalidOptionError, "env, process"),
        ({"env_id": "WebShop-1k-v0", "process_reward": {"gamma": 0.9}}, InvalidOptionError, "reward='process'"),
        ({"env_id": "WebShop-1k-v0", "reward": "process", "process_reward": {"gama": 1}}, InvalidOptionError, "gamma"),
        ({"env_id": "WebShop-1k-v0", "budgets": (5, 0)}, InvalidBudgetError, "positive"),
        ({"env_id": "WebShop-1k-v0", "budgets": (5,), "budget_weights": (1, 1)}, InvalidBudgetError, "one weight"),
        ({"env_id": "WebShop-1k-v0", "info_keys": "expert_action"}, InvalidOptionError, "list of keys"),
        ({"env_id": "WebShop-1k-v0", "show_budget": 1}, InvalidOptionError, "true or false"),
    ],
)
def test_bad_configs_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        SessionConfig(**kwargs)


def test_config_from_mapping_and_hashing():
    config = SessionConfig.from_mapping({"env_id": "WebShop-1k-v0", "budgets": [3, 6], "info_keys": ["expert_action"]})
    assert config == SessionConfig("agentgym_budget/WebShop-1k-v0", budgets=(3, 6), info_keys=("expert_action",))
    assert hash(config) == hash(SessionConfig("WebShop-1k-v0", budgets=[3, 6], info_keys=["expert_action"]))
    with pytest.raises(InvalidOptionError, match="needs 'env_id'"):
        SessionConfig.from_mapping({"max_turns": 3})


def _play_shop(pool: SessionPool, seed: int) -> tuple[str, bool, int]:
    session = pool.acquire()
    try:
        turn = session.reset(seed=seed)
        while not turn.done:
            turn = session.step(f"Action: {turn.info['expert_action']}")
        return turn.task_id, turn.won, turn.turn
    finally:
        pool.release(session)


def test_pool_serves_sessions_to_many_threads():
    pool = SessionPool(SHOP, max_idle=8)
    try:
        with ThreadPoolExecutor(8) as executor:
            results = list(executor.map(lambda s: _play_shop(pool, s), range(16)))
        assert all(won for _, won, _ in results)
        assert pool.created <= 8
        reused = pool.acquire()
        with pytest.raises(EpisodeOverError, match="No episode is running"):
            reused.step("look")  # a reused session starts with no episode
        pool.release(reused)
        assert results == [_play_shop(pool, s) for s in range(16)]  # same seeds, same episodes, any thread
    finally:
        pool.close()
    assert threading.active_count() >= 1


def test_missing_library_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "skyrl_gym", None)
    from agentgym_budget.integrations import skyrl

    with pytest.raises(MissingDependencyError, match=re.escape(install_command("skyrl"))):
        skyrl.register_skyrl_env()
    with pytest.raises(MissingDependencyError, match=r"Python >= 3\.99"):
        require("surely_missing_module", extra="trl", feature="X", min_python=(3, 99))


def test_a_session_refuses_budgets_past_its_max_budget():
    session = EpisodeSession(COIN, max_budget=20)
    try:
        assert session.reset(seed=3, max_turns=20).max_turns == 20
        with pytest.raises(InvalidBudgetError, match=r"'max_turns' is 9,223,372,036,854,775,807.*at most 20 turns"):
            session.reset(seed=3, max_turns=2**63 - 1)
        assert session.last.max_turns == 20 and session.step("look").turn == 1  # the running episode goes on
    finally:
        session.close()


@pytest.mark.parametrize(
    ("limits", "error", "match"),
    [
        ({"max_budget": 3}, InvalidBudgetError, r"max_budget 3 is below the budget the config serves \(4\)"),
        ({"max_budget": 0}, InvalidBudgetError, "for max_budget"),
        ({"max_history_bytes": 0}, InvalidOptionError, "max_history_bytes must be a positive integer, got 0"),
        ({"max_history_bytes": True}, InvalidOptionError, "max_history_bytes must be a positive integer"),
    ],
)
def test_bad_session_limits_are_refused_before_any_env_is_built(limits, error, match):
    with pytest.raises(error, match=match):
        SessionPool(COIN, **limits)


def test_the_history_limit_refuses_a_command_that_would_pass_it_and_spends_no_turn():
    long_command = "x" * 1000  # an unknown word: the game answers, the turn is spent
    limit = 2 * sys.getsizeof(long_command) + 100
    session = EpisodeSession(COIN, max_history_bytes=limit)
    try:
        session.reset(seed=3)
        assert [session.step(long_command).turn for _ in range(2)] == [1, 2]
        with pytest.raises(InvalidActionError, match=r"would pass the limit of 2,\d{3} bytes an episode.*No turn"):
            session.step(long_command)
        assert session.last.turn == 2 and session.history_bytes == 2 * sys.getsizeof(long_command)
        assert session.step("look").turn == 3  # a command that fits is played
        assert session.record()["commands"] == [long_command, long_command, "look"]  # kept whole
        session.reset(seed=3)
        assert session.history_bytes == 0 and session.step(long_command).turn == 1  # a reset starts afresh
    finally:
        session.close()


def test_a_released_session_drops_the_envs_record_of_the_episode_at_once():
    pool = SessionPool(COIN, max_idle=1)
    try:
        session = pool.acquire()
        session.reset(seed=3)
        session.step("x" * 1000)
        base = session.env.unwrapped
        assert len(base.get_state().actions) == 1
        pool.release(session)
        with pytest.raises(EpisodeOverError):
            base.get_state()  # the env holds no episode (its commands are gone), not only the session
        with pytest.raises(EpisodeOverError, match="call reset"):
            base.step("look")
        assert pool.acquire() is session and session.reset(seed=3).turn == 0  # and is reused as before
    finally:
        pool.close()
