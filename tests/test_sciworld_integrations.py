"""The ScienceWorld id through the rest of the library: budgets, the process signal, vector envs, the CLIs, plug-ins."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gymnasium as gym
import pytest

from agentgym_budget.cli.main import main
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.tasks.sciworld import engine
from agentgym_budget.wrappers import BudgetMix, ProcessReward, StateSnapshot, TurnBudget

SCIWORLD = "agentgym_budget/ScienceWorld-v0"
ARGS = "task=find-animal"


@pytest.fixture(autouse=True, scope="module")
def _jvm_started() -> None:
    engine.World().close()


def test_turn_budget_shows_and_truncates_and_budget_mix_draws() -> None:
    env = TurnBudget(gym.make(SCIWORLD, task="4-4"), max_turns=2, show_budget=True)
    obs, info = env.reset(seed=0)
    assert obs.endswith("[Turns left: 2 of 2]") and info["turns_left"] == 2
    env.step("zzqx")
    obs, _, terminated, truncated, info = env.step("look around")
    assert truncated and not terminated and obs.endswith("[Turns left: 0 of 2]")
    mixed = BudgetMix(TurnBudget(gym.make(SCIWORLD, task="4-4"), max_turns=99), budgets=[3, 7])
    assert {mixed.reset(seed=seed)[1]["max_turns"] for seed in range(4)} == {3, 7}


def test_process_reward_shapes_with_the_score_before_the_end() -> None:
    """progress = score / 100 moves at every sub-goal: the process signal Coin Collector lacks."""
    base = gym.make(SCIWORLD, task="find-animal", info_keys={"expert_plan"})
    env = ProcessReward(TurnBudget(base, max_turns=40), coefficient=1.0)
    _, info = env.reset(seed=7)  # the conformance checks' variation: its gold path is in the caches
    start, shaped, original, potentials = info["potential"], [], [], []
    for action in ["zzqx", *info["expert_plan"]]:
        _, reward, terminated, _, info = env.step(action)
        shaped.append(reward)
        original.append(info["env_reward"])
        potentials.append(info["potential"])
    assert terminated and info["won"]
    assert len({p for p in potentials[:-1] if p > 0}) >= 3  # partial credit on the way
    assert sum(shaped) == pytest.approx(sum(original) - start)  # G' = G - c * Phi(s_0) (terminal potential 0)
    assert sum(original) == pytest.approx(1.0 - start)  # the return is the progress made since the reset


@pytest.mark.slow
def test_vector_env_and_forks_play_in_the_shared_jvm() -> None:
    envs = gym.make_vec(SCIWORLD, num_envs=2, task="find-animal")
    observations, infos = envs.reset(seed=[3, 4])
    assert [task.startswith("find-animal-") for task in infos["task_id"]] == [True, True]
    observations, _, terminated, _, infos = envs.step(["open door to hallway", "zzqx"])
    assert observations[1] == "No known action matches that input." and not terminated.any()
    envs.close()
    env = StateSnapshot(TurnBudget(gym.make(SCIWORLD, task="find-animal"), max_turns=20))
    env.reset(seed=1)
    env.step("open door to hallway")
    forks = env.fork(2)
    assert forks[0].step("go to hallway")[0] == "You move to the hallway."
    assert forks[1].step("zzqx")[0] == "No known action matches that input."
    assert env.step("go to hallway")[0] == "You move to the hallway."


def test_the_id_is_listed_as_usable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--family", "sciworld", "--envs"]) == 0
    listed = capsys.readouterr().out
    assert f"{SCIWORLD} " in listed and "no: needs" not in listed


@pytest.mark.slow
def test_passkt_probe_and_recovery_run_on_sciworld(tmp_path: Path) -> None:
    """A short candidate list (max_admissible=8): the forced-error search steps each candidate from a restored
    state, and each such step reloads the variation (the engine has no save), about twice the CPU with 64."""
    args = f"{ARGS},max_admissible=8"
    common = ["--env", "ScienceWorld-v0", "--env-args", args, "--workers", "1", "--no-plots", "--no-progress"]
    assert main(["passkt", *common, "--agent", "expert", "--k", "1", "--t", "30", "--n", "1", "--tasks", "2",
                 "--out", str(tmp_path / "pk")]) == 0  # fmt: skip
    episodes = [json.loads(line) for line in (tmp_path / "pk" / "episodes.jsonl").read_text().splitlines()]
    assert episodes and all(episode["won"] for episode in episodes)
    assert main(["probe", *common, "--agent", "noisy-expert-recover:eps=0.5", "--states", "2", "--m", "1",
                 "--out", str(tmp_path / "probe")]) == 0  # fmt: skip
    assert (tmp_path / "probe" / "summary.json").is_file()
    assert main(["recovery", *common, "--agent", "expert", "--states", "1", "--k", "0,1", "--budgets", "30",
                 "--n", "1", "--natural", "1", "--out", str(tmp_path / "rec")]) == 0  # fmt: skip
    assert (tmp_path / "rec" / "summary.json").is_file()


@pytest.mark.slow
def test_openenv_server_serves_sciworld() -> None:
    from agentgym_budget.integrations.openenv import RemoteSession, serve_in_thread

    config = SessionConfig("ScienceWorld-v0", env_kwargs=ARGS, info_keys=("expert_action",), max_turns=40)
    with serve_in_thread(config) as url, RemoteSession(url) as env:
        obs = env.reset(seed=0)
        while not obs.done:
            obs = env.step(f"Action: {obs.info['expert_action']}")
        assert obs.won and obs.terminated and not obs.truncated
        assert env.state().won and env.state().total_reward == pytest.approx(1.0)


@pytest.mark.slow
def test_verl_rows_play_in_the_loops_executor_threads(tmp_path: Path) -> None:
    """The verl agent loop's own part, which needs no verl (as tests/test_twx_integrations.py does for TWX)."""
    pq = pytest.importorskip("pyarrow.parquet", reason="writing parquet needs pyarrow (the verl extra)")
    from agentgym_budget.integrations.pool import shared_pool
    from agentgym_budget.integrations.verl import _fields
    from agentgym_budget.integrations.verl_data import row_episode

    path = tmp_path / "sciworld.parquet"
    argv = ["export-dataset", "ScienceWorld-v0", "--env-args", ARGS, "--episodes", "2", "--seed", "7"]
    assert main([*argv, "--budget", "40", "--output", str(path)]) == 0
    rows = pq.read_table(path).to_pandas().to_dict("records")
    expert = gym.make(SCIWORLD, task="find-animal", info_keys={"expert_plan"})
    plans, starts = {}, []
    for row in rows:
        _, info = expert.reset(seed=int(row["extra_info"]["seed"]))
        plans[info["task_id"]] = info["expert_plan"]
        starts.append(info["progress"])  # some variations score a first sub-goal at the start

    def play(row: dict) -> dict:
        config, episode = row_episode(row["extra_info"])
        pool = shared_pool(config)
        session = pool.acquire()
        try:
            first = session.reset(**episode)
            for command in plans[first.task_id]:
                if session.step(f"I act.\nAction: {command}").done:
                    break
            return _fields(session, False)
        finally:
            pool.release(session)

    with ThreadPoolExecutor(2) as pool:
        played = list(pool.map(play, rows))
    assert [fields["won"] for fields in played] == [True, True]
    assert [fields["env_return"] for fields in played] == pytest.approx([1.0 - start for start in starts])
