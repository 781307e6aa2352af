"""The BabyAI ids through the rest of the library: budgets, vector envs, the server, the CLIs and the plug-ins."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gymnasium as gym
import pytest

from agentgym_budget.cli.main import main
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.wrappers import BudgetMix, StateSnapshot, TurnBudget

pytest.importorskip("minigrid")

LOCAL = "agentgym_budget/BabyAI-GoToLocal-v0"


def test_turn_budget_shows_and_budget_mix_draws():
    env = TurnBudget(gym.make(LOCAL, progress="sparse"), max_turns=2, show_budget=True)
    obs, info = env.reset(seed=0)
    assert obs.endswith("[Turns left: 2 of 2]") and info["turns_left"] == 2
    env.step("wait")
    obs, _, terminated, truncated, info = env.step("wait")
    assert truncated and not terminated and obs.endswith("[Turns left: 0 of 2]")
    mix = BudgetMix(TurnBudget(gym.make(LOCAL, progress="sparse"), max_turns=99), budgets=[3, 7])
    assert {mix.reset(seed=seed)[1]["max_turns"] for seed in range(12)} == {3, 7}


def test_vector_env_plays_the_expert_and_is_seeded():
    runs = []
    for _ in range(2):
        envs = gym.make_vec("agentgym_budget/BabyAI-PutNextLocal-v0", num_envs=4, info_keys={"expert_action"})
        obs, info = envs.reset(seed=3)
        trajectory = [tuple(obs)]
        for _ in range(5):
            obs, reward, terminated, _, info = envs.step(list(info["expert_action"]))
            trajectory.append((tuple(obs), tuple(reward), tuple(terminated)))
        envs.close()
        runs.append(trajectory)
    assert runs[0] == runs[1] and len(set(runs[0][0])) > 1  # same seed, same episodes; four different tasks


def test_forks_play_on_independently():
    env = StateSnapshot(gym.make(LOCAL, progress="sparse"))
    env.reset(seed=1)
    env.step("turn left")
    forks = env.fork(3)
    outcomes = [
        fork.step(action)[0] for fork, action in zip(forks, ("turn right", "turn left", "turn right"), strict=True)
    ]
    assert outcomes[0] == outcomes[2] != outcomes[1]
    assert env.step("turn right")[0] == outcomes[0]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")
def test_trl_tool_env_plays_a_babyai_id():
    from agentgym_budget.integrations.trl import BudgetToolEnv

    env = BudgetToolEnv(SessionConfig("BabyAI-PutNextLocal-v0", info_keys=("expert_plan",)))
    env.reset(seed=0, max_turns=40)
    for command in env.session.last.info["expert_plan"]:
        answer = env.act(command)
    assert env.record["won"] and env.get_reward() == 1.0 and answer.endswith("]")


def test_skyrl_env_plays_a_babyai_id():
    skyrl_gym = pytest.importorskip("skyrl_gym")
    from agentgym_budget.integrations.skyrl import register_skyrl_env

    config = {"env_id": "BabyAI-OpenDoor-v0", "max_turns": 30, "info_keys": ["expert_action"]}
    env = skyrl_gym.make(register_skyrl_env(), env_config=config, extras={"extra_info": {"seed": 4}, "max_turns": 99})
    try:
        env.init([{"role": "system", "content": "Play."}, {"role": "user", "content": ""}])
        while True:
            output = env.step(f"Action: {env.session.last.info['expert_action']}")
            if output["done"]:
                break
        assert output["reward"] == 1.0 and env.get_metrics()["won"] == 1.0
    finally:
        env.close()


def test_verl_rows_play_babyai_episodes():
    from agentgym_budget.integrations.session import EpisodeSession
    from agentgym_budget.integrations.verl_data import row_episode, verl_rows

    config = SessionConfig("BabyAI-MixedTestLocal-v0", budgets=(20, 30))
    rows = verl_rows(config, episodes=3, seed=2)
    for i, row in enumerate(rows):
        again, episode = row_episode(row["extra_info"])
        assert again == config and episode["seed"] == 2 + i
        session = EpisodeSession(again)
        first = session.reset(**episode)
        assert first.task_id.startswith("MixedTestLocal-") and first.max_turns in (20, 30)
        session.close()


@pytest.mark.slow
def test_the_server_plays_babyai_and_prints_nothing_where_minigrid_would(capfd):
    from agentgym_budget.integrations.openenv import RemoteSession, serve_in_thread

    raw = gym.make("BabyAI-PickupLoc-v0").unwrapped
    raw.reset(seed=4)
    assert "Sampling rejected" in capfd.readouterr().out  # minigrid prints while generating this task
    config = SessionConfig("BabyAI-PickupLoc-v0", max_turns=30, info_keys=("expert_action",))
    with serve_in_thread(config, max_sessions=2) as url, RemoteSession(url) as session:
        for task in (4, 15, 16, 17):  # tasks minigrid prints for
            obs = session.reset(task=task)
            while not obs.done:
                obs = session.step(f"Action: {obs.info['expert_action']}")
            assert obs.won and obs.task_id == f"PickupLoc-{task}"
    assert capfd.readouterr().out == ""


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="verifiers needs Python >= 3.11")
def test_the_expert_wins_through_verifiers():
    import asyncio

    from agentgym_budget.agents import ExpertAgent
    from agentgym_budget.integrations.openenv import serve_in_thread
    from agentgym_budget.integrations.verifiers import play

    config = SessionConfig("BabyAI-MixedTrainLocal-v0", max_turns=40, info_keys=("expert_action",))
    with serve_in_thread(config, max_sessions=2) as url:
        won, truncated = asyncio.run(play(url, [{"seed": 0}, {"seed": 0, "max_turns": 1}], ExpertAgent()))
    assert won.rewards == {"openenv_reward": 1.0} and truncated.last_observation["truncated"] is True


@pytest.mark.slow
def test_passkt_probe_and_recovery_run_with_the_bot_as_reference(tmp_path: Path) -> None:
    common = ["--env", "BabyAI-PutNextLocal-v0", "--workers", "1", "--no-plots", "--no-progress"]
    assert main(["passkt", *common, "--agent", "expert", "--agent", "noisy-expert-recover", "--agent", "noisy-expert-norecover", "--k", "1", "--t", "40",
                 "--n", "1", "--tasks", "3", "--out", str(tmp_path / "pk")]) == 0  # fmt: skip
    episodes = [json.loads(line) for line in (tmp_path / "pk" / "episodes.jsonl").read_text().splitlines()]
    assert {e["agent"] for e in episodes} == {
        "expert",
        "noisy-expert-recover:eps=0.3",
        "noisy-expert-norecover:eps=0.3",
    }
    assert all(episode["won"] for episode in episodes if episode["agent"] == "expert")
    assert main(["probe", *common, "--agent", "random", "--states", "3", "--m", "2",
                 "--out", str(tmp_path / "probe")]) == 0  # fmt: skip
    summary = json.loads((tmp_path / "probe" / "summary.json").read_text())
    assert summary
    assert main(["recovery", *common, "--agent", "random", "--states", "2", "--k", "0,1", "--budgets", "30",
                 "--n", "1", "--natural", "1", "--out", str(tmp_path / "rec")]) == 0  # fmt: skip
    assert (tmp_path / "rec" / "summary.json").is_file()


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")
def test_train_runs_sft_on_the_bot_then_grpo_on_a_babyai_id(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    argv = ["train", "--env", "BabyAI-GoToLocal-v0", "--recipe", "fixed", "--budget", "12"]
    argv += ["--sft-steps", "1", "--steps", "1", "--train-tasks", "2", "--tiny-size", "1x32"]
    argv += ["--rl-episodes-per-step", "2", "--rl-num-generations", "2", "--rl-tokens-per-turn", "8"]
    threads = torch.get_num_threads()
    try:
        assert main([*argv, "--no-progress", "--no-plots", "--out", str(tmp_path)]) == 0
    finally:
        torch.set_num_threads(threads)
    demonstrations = json.loads((tmp_path / "sft" / "demonstrations.json").read_text())
    assert all(record["won"] for record in demonstrations["records"])
    episodes = [json.loads(line) for line in (tmp_path / "rl" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 2 and all(e["task_id"].startswith("GoToLocal-") and e["turns"] <= 12 for e in episodes)
    assert (tmp_path / "final" / "model.safetensors").stat().st_size > 0
