"""The TWX ids through the rest of the library: budgets, snapshots across processes, the CLIs and the plug-ins."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_budget
from agentgym_budget.cli.main import main
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.wrappers import BudgetMix, StateSnapshot, TurnBudget
from tests.ray_support import ray_cluster

__all__ = ["ray_cluster"]

COIN = "agentgym_budget/TWX-CoinCollector-v0"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def _jvm_started() -> None:
    """Start the process's JVM once (about a second), outside the timed tests."""
    from agentgym_budget.tasks.twx import gateway

    gateway.new_game_interface()


def test_turn_budget_shows_and_truncates() -> None:
    env = TurnBudget(gym.make(COIN, num_locations=11), max_turns=2, show_budget=True)
    obs, info = env.reset(seed=0)
    assert obs.endswith("[Turns left: 2 of 2]") and info["turns_left"] == 2
    env.step("inventory")
    obs, _, terminated, truncated, info = env.step("look around")
    assert truncated and not terminated and info["turns_left"] == 0 and obs.endswith("[Turns left: 0 of 2]")


def test_budget_mix_draws_its_budgets() -> None:
    env = BudgetMix(TurnBudget(gym.make("agentgym_budget/TWX-Sorting-v0"), max_turns=99), budgets=[3, 7])
    budgets = {env.reset(seed=seed)[1]["max_turns"] for seed in range(12)}
    assert budgets == {3, 7}


@pytest.mark.slow
def test_a_serialised_snapshot_restores_in_another_process() -> None:
    env = StateSnapshot(gym.make("agentgym_budget/TWX-Cooking-v0", num_locations=3))
    _, info = env.reset(seed=4)
    for action in info["admissible_actions"][:3]:
        env.step(action)
    data = env.snapshot().to_bytes()
    expected = [env.step(action)[0] for action in ("look around", "inventory")]
    code = (
        "import sys, json, gymnasium as gym, agentgym_budget\n"
        "from agentgym_budget.snapshots.state import EnvState\n"
        "from agentgym_budget.wrappers import StateSnapshot\n"
        "env = StateSnapshot(gym.make('agentgym_budget/TWX-Cooking-v0', num_locations=3))\n"
        "env.restore(EnvState.from_bytes(sys.stdin.buffer.read()))\n"
        "print(json.dumps([env.step(a)[0] for a in ('look around', 'inventory')]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=data, capture_output=True, cwd=ROOT, timeout=120, check=True
    )
    assert json.loads(done.stdout) == expected


def test_fork_members_play_on_independently() -> None:
    env = StateSnapshot(gym.make(COIN, num_locations=5))
    _, info = env.reset(seed=1)
    env.step(info["admissible_actions"][0])
    forks = env.fork(3)
    outcomes = [
        fork.step(action)[0] for fork, action in zip(forks, ("inventory", "look around", "inventory"), strict=True)
    ]
    assert outcomes[0] == outcomes[2] != outcomes[1]
    assert env.step("inventory")[0] == outcomes[0]


@pytest.mark.slow
def test_passkt_probe_and_recovery_run_on_a_twx_id(tmp_path: Path) -> None:
    common = ["--env", "TWX-CoinCollector-v0", "--env-args", "num_locations=3", "--workers", "1", "--no-plots"]
    assert main(["passkt", *common, "--agent", "expert", "--k", "1", "--t", "20", "--n", "1", "--tasks", "2",
                 "--out", str(tmp_path / "pk"), "--no-progress"]) == 0  # fmt: skip
    summary = json.loads((tmp_path / "pk" / "summary.json").read_text())
    assert "expert" in json.dumps(summary)
    episodes = [json.loads(line) for line in (tmp_path / "pk" / "episodes.jsonl").read_text().splitlines()]
    assert episodes and all(episode["won"] for episode in episodes if episode.get("agent") == "expert")
    assert main(["probe", *common, "--agent", "random", "--states", "2", "--m", "1",
                 "--out", str(tmp_path / "probe"), "--no-progress"]) == 0  # fmt: skip
    assert (tmp_path / "probe" / "summary.json").is_file()
    assert main(["recovery", *common, "--agent", "random", "--states", "1", "--k", "0,1", "--budgets", "10",
                 "--n", "1", "--natural", "1", "--out", str(tmp_path / "rec"), "--no-progress"]) == 0  # fmt: skip
    assert (tmp_path / "rec" / "summary.json").is_file()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")
def test_trl_tool_env_plays_a_twx_id() -> None:
    from agentgym_budget.integrations.trl import BudgetToolEnv

    config = SessionConfig("TWX-CoinCollector-v0", env_kwargs="num_locations=3", info_keys=("expert_plan",))
    env = BudgetToolEnv(config)
    env.reset(seed=0, max_turns=30)
    for command in env.session.last.info["expert_plan"]:
        answer = env.act(command)
    assert env.record["won"] and env.get_reward() == 1.0 and answer.endswith("]")


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")
def test_train_runs_sft_on_the_gold_path_then_grpo_on_a_twx_id(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    from agentgym_budget.chat.format import ChatFormat

    argv = ["train", "--env", "TWX-CoinCollector-v0", "--env-args", "num_locations=4", "--recipe", "fixed"]
    argv += ["--budget", "30", "--sft-steps", "2", "--steps", "2", "--train-tasks", "2", "--tiny-size", "1x32"]
    argv += ["--rl-episodes-per-step", "4", "--rl-num-generations", "2", "--rl-tokens-per-turn", "16"]
    threads = torch.get_num_threads()
    try:
        assert main([*argv, "--no-progress", "--no-plots", "--out", str(tmp_path)]) == 0
    finally:
        torch.set_num_threads(threads)
    run = json.loads((tmp_path / "run.json").read_text())
    assert (run["sft_agent"], run["sft_mask_errors"]) == ("expert", False)  # its expert cannot recover: clean
    demonstrations = json.loads((tmp_path / "sft" / "demonstrations.json").read_text())
    env = gym.make(COIN, num_locations=4, info_keys={"expert_plan"})
    for record in demonstrations["records"]:  # every demonstration is its task's gold path, won
        plan = env.reset(seed=0, options={"task": record["task_id"]})[1]["expert_plan"]
        assert record["won"] and record["commands"] == plan and record["off_expert_turns"] == []
    assert len(demonstrations["conversations"]) == 4
    sft = [json.loads(line) for line in (tmp_path / "sft" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in sft if "loss" in r] == [1, 2]
    episodes = [json.loads(line) for line in (tmp_path / "rl" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 8 and {e["step"] for e in episodes} == {1, 2}
    assert all(e["task_id"] in {"coin-0", "coin-1"} and e["budget"] == 30 and e["turns"] <= 30 for e in episodes)
    rl = [json.loads(line) for line in (tmp_path / "rl" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rl if "reward" in r] == [1, 2]
    assert ChatFormat.load(tmp_path / "final").env == "TWX-CoinCollector-v0(num_locations=4)"
    assert (tmp_path / "final" / "model.safetensors").stat().st_size > 0


def test_train_says_when_no_demonstration_was_won(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("trl")
    argv = ["train", "--env", "TWX-CoinCollector-v0", "--env-args", "num_locations=4", "--recipe", "sft"]
    argv += ["--budget", "1", "--train-tasks", "1", "--demonstrations", "masked", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert "None of the 2 demonstration episodes of noisy-expert-recover:eps=0.2" in capsys.readouterr().err


def test_verl_rows_play_in_the_loops_executor_threads(tmp_path: Path) -> None:
    """The verl agent loop's own part, which needs no verl: rows read back as verl reads them, the shared
    session pool, and ``reset`` / ``step`` in executor threads (tests/test_integration_verl.py plays the
    same rows through verl's loop where the ``verl`` extra is installed)."""
    pq = pytest.importorskip("pyarrow.parquet", reason="writing parquet needs pyarrow (the verl extra)")
    from agentgym_budget.integrations.pool import shared_pool
    from agentgym_budget.integrations.verl import _fields, _first_messages
    from agentgym_budget.integrations.verl_data import row_episode

    path = tmp_path / "twx.parquet"
    argv = ["export-dataset", "TWX-CoinCollector-v0", "--env-args", "num_locations=3", "--episodes", "4"]
    assert main([*argv, "--seed", "7", "--budget", "30", "--output", str(path)]) == 0
    rows = pq.read_table(path).to_pandas().to_dict("records")
    expert = gym.make(COIN, num_locations=3, info_keys={"expert_plan"})

    def play(row: dict) -> tuple[dict, str]:
        config, episode = row_episode(row["extra_info"])
        pool = shared_pool(config)
        session = pool.acquire()
        try:
            first = session.reset(**episode)
            prompt = _first_messages(row["prompt"], first)[-1]["content"]
            for command in expert_plans[first.task_id]:
                if session.step(f"I go.\nAction: {command}").done:
                    break
            return _fields(session, False), prompt
        finally:
            pool.release(session)

    seeds = [int(row["extra_info"]["seed"]) for row in rows]
    task_ids, expert_plans = [], {}
    for seed in seeds:
        _, info = expert.reset(seed=seed)
        task_ids.append(info["task_id"])
        expert_plans[info["task_id"]] = info["expert_plan"]
    with ThreadPoolExecutor(2) as pool:  # as the loop's run_in_executor(None, ...)
        played = list(pool.map(play, rows))
    assert seeds == [7, 8, 9, 10]
    for (fields, prompt), task_id in zip(played, task_ids, strict=True):
        assert fields["task_id"] == task_id and fields["won"] and fields["terminated"] and not fields["truncated"]
        turns = len(expert_plans[task_id])
        assert (fields["budget"], fields["env_turns"], fields["admissible_rate"]) == (30, turns, 1.0)
        assert fields["env_return"] == 1.0 and prompt.startswith("Your task is to search the environment")


@pytest.mark.slow
def test_skyrl_trajectories_in_threads() -> None:
    import skyrl_gym

    from agentgym_budget.integrations.skyrl import register_skyrl_env

    config = {"env_id": "TWX-Arithmetic-v0", "max_turns": 12, "info_keys": ["expert_action"]}

    def trajectory(seed: int) -> float:
        env = skyrl_gym.make(register_skyrl_env(), env_config=config, extras={"extra_info": {"seed": seed}})
        try:
            env.init([{"role": "user", "content": ""}])
            total = 0.0
            while True:
                output = env.step(f"Action: {env.session.last.info['expert_action']}")
                total += output["reward"]
                if output["done"]:
                    assert output["metadata"]["won"]
                    return total
        finally:
            env.close()

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(trajectory, range(6))) == [1.0] * 6


@pytest.mark.slow
def test_openenv_server_serves_a_twx_id() -> None:
    from agentgym_budget.integrations.openenv import RemoteSession, serve_in_thread

    config = SessionConfig("TWX-SimonSays-v0", info_keys=("expert_action",), max_turns=20)
    with serve_in_thread(config) as url, RemoteSession(url) as env:
        obs = env.reset(seed=0)
        while not obs.done:
            obs = env.step(f"Action: {obs.info['expert_action']}")
        assert obs.won and obs.terminated and not obs.truncated
        assert env.state().won and env.state().total_reward == pytest.approx(1.0)


def test_every_twx_id_is_listed_as_usable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--family", "twx", "--envs"]) == 0
    listed = capsys.readouterr().out
    for env_id in agentgym_budget.registered_ids("twx"):
        assert f"{env_id} " in listed
    assert "no: needs" not in listed


@pytest.mark.slow
def test_ray_actors_play_forks_of_a_twx_state(ray_cluster) -> None:
    from agentgym_budget.integrations.ray_rollouts import Continuation, ForkPoint, RolloutConfig, play_forks

    config = RolloutConfig(
        "TWX-CoinCollector-v0", env_kwargs="num_locations=5", max_turns=30, info_keys=("expert_action", "expert_plan")
    )
    env = config.make()
    observation, info = env.reset(seed=1)
    observation, _, _, _, info = env.step(info["expert_action"])
    point = ForkPoint.take(env, observation, info)
    continuations = [Continuation(agent="expert"), Continuation(actions=("inventory", "look around"))]
    expert, scripted = play_forks(config, point, continuations, actors=2)
    assert expert.won and expert.start_turn == 1 and expert.actions == info["expert_plan"]
    assert scripted.actions == ["inventory", "look around"] and not scripted.won
    env.close()
