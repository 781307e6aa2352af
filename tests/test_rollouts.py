"""The package's own GRPO rollouts: chain and tree groups, exact branches, dynamic sampling (extra ``trl``)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest

from agentgym_budget.errors import InvalidOptionError
from tests.train_support import tiny_config

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")


def _sessions(count, **changes):
    from agentgym_budget.integrations.session import EpisodeSession

    config = replace(tiny_config("fixed").session_config(), max_turns=4, **changes)
    return [EpisodeSession(config) for _ in range(count)]


def _sampling():
    from agentgym_budget.agents.hf_generation import Sampling

    return Sampling(temperature=1.0, max_new_tokens=24)


@pytest.mark.slow
def test_chain_groups_are_whole_episodes_with_the_model_tokens_masked_in(local):
    from agentgym_budget.train.rollouts import GroupSpec, play_groups

    sessions = _sessions(4)
    specs = [GroupSpec({"task": 0, "seed": 1}, 2, seed=5), GroupSpec({"task": 1, "seed": 2}, 2, seed=6)]
    groups = play_groups(local, sessions, specs, _sampling())
    assert [len(g) for g in groups] == [2, 2]
    for g, group in enumerate(groups):
        assert len({tuple(r.prompt_ids) for r in group}) == 1  # one task, one start: one prompt
        for rollout in group:
            assert rollout.done and rollout.record is not None and rollout.group == g and rollout.start_turn == 0
            assert len(rollout.model_mask) == len(rollout.completion_ids)
            assert rollout.model_mask[0] == 1 and set(rollout.model_mask) <= {0, 1}
            assert rollout.replies >= 1 and rollout.record["turns"] <= 4
    again = play_groups(local, _sessions(4), specs, _sampling())
    assert [r.completion_ids for g in again for r in g] == [r.completion_ids for g in groups for r in g]
    for session in sessions:
        session.close()


@pytest.mark.slow
def test_a_tree_group_shares_the_exact_state_and_prefix_of_its_branch_turn(local):
    from agentgym_budget.train.rollouts import GroupSpec, play_groups, rollout_seed

    sessions = _sessions(6)
    specs = [GroupSpec({"task": t, "seed": t}, 3, seed=rollout_seed("tree", t)) for t in range(2)]
    groups = play_groups(local, sessions, specs, _sampling(), mode="tree")
    starts = set()
    for group in groups:
        trunk, *branches = group
        assert len({tuple(r.prompt_ids) for r in group}) == 1
        assert {r.start_turn for r in group} == {trunk.start_turn}
        starts.add(trunk.start_turn)
        for branch in branches:
            # Every branch played on from the trunk's turn: its turns count from there, within the same budget.
            assert branch.record["turns"] > trunk.start_turn and branch.record["budget"] == trunk.record["budget"]
            assert branch.record["commands"][: trunk.start_turn] == trunk.record["commands"][: trunk.start_turn]
            assert branch.record["task_id"] == trunk.record["task_id"]
    with pytest.raises(InvalidOptionError, match="Unknown rollout mode"):
        play_groups(local, sessions, specs, _sampling(), mode="forest")
    for session in sessions:
        session.close()


def test_a_session_restored_from_a_save_plays_on_exactly(local):
    first, second = _sessions(2)
    first.reset(task=0, seed=3)
    first.step("go north")
    saved = first.save()
    after = [first.step(c).observation for c in ("go south", "look")]
    second.restore(saved)
    assert [second.step(c).observation for c in ("go south", "look")] == after
    assert second.record()["commands"] == first.record()["commands"]
    first.close(), second.close()


def _grpo(tmp_path, **settings):
    from agentgym_budget.train.base_model import build_base_model
    from agentgym_budget.train.grpo import GRPOSettings, run_grpo
    from agentgym_budget.train.trajectories import agent_conversations

    config = tiny_config("fixed")
    session = config.session_config()
    data = agent_conversations(session, "expert", tasks=range(3), episodes_per_task=1, budget=3)
    model, tokenizer = build_base_model(data.conversations, config.tiny, chat_format=config.chat_format(), seed=0)
    start = {k: v.detach().clone() for k, v in model.state_dict().items()}
    grpo = GRPOSettings(steps=1, episodes_per_step=4, num_generations=2, tokens_per_turn=24, **settings)
    run_grpo(model, tokenizer, session, grpo, tasks=range(3), out=tmp_path, progress=False)
    moved = any(not (start[k] == v).all() for k, v in model.state_dict().items())
    metrics = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    episodes = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    return moved, metrics[0], episodes


@pytest.mark.slow
def test_dynamic_sampling_replays_flat_groups_and_skips_a_step_without_signal(tmp_path):
    pytest.importorskip("torch").set_num_threads(1)
    # The barely trained tiny base never wins a level-2 game in 3 turns: every group is flat.
    moved, metrics, episodes = _grpo(tmp_path, dynamic_sampling=True, resample_rounds=1, rollouts="tree", beta=0.0)
    assert metrics["signal_groups_first"] == 0 and metrics["groups_resampled"] == 2 and metrics["step_skipped"] == 1
    assert not moved, "a step without reward signal must not move the weights"
    assert {e["resample_round"] for e in episodes} == {1} and {e["group_id"] for e in episodes} == {0, 1}
    assert all(not e["cut_short"] for e in episodes)


def test_the_rollout_settings_are_checked():
    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.grpo import GRPOSettings

    with pytest.raises(InvalidOptionError, match="rollouts must be one of"):
        GRPOSettings(rollouts="forest")
    with pytest.raises(InvalidOptionError, match="need generation='cached'"):
        GRPOSettings(rollouts="tree", generation="trl")
    with pytest.raises(InvalidOptionError, match="credit='turn' needs TRL's rollouts"):
        GRPOSettings(dynamic_sampling=True, credit="turn").check_trl_credit()
    with pytest.raises(InvalidOptionError, match="credit='turn' needs TRL's rollouts"):
        TrainConfig("TextWorld-CoinCollector-v0", recipe="fixed", budget=4,
                    grpo=GRPOSettings(dynamic_sampling=True, credit="turn"))  # fmt: skip
    assert GRPOSettings(rollouts="tree").uses_cached_rollouts and not GRPOSettings().uses_cached_rollouts


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "env_args", "budget"),
    [("TextWorld-CoinCollector-v0", "level=2", "3"), ("ALFWorld-PickAndPlace-v0", "", "15")],
    ids=["textworld", "alfworld"],
)
def test_the_train_command_plays_tree_rollouts_with_dynamic_sampling(tmp_path, env, env_args, budget, capsys):
    pytest.importorskip("trl")
    from agentgym_budget.cli.main import main

    # The SFT demonstrations are the expert's wins within the budget: ALFWorld's need more than 3 turns.
    argv = ["train", "--env", env, "--env-args", env_args, "--recipe", "fixed", "--budget", budget, "--sft-steps", "2"]
    argv += ["--rl-tokens-per-turn", "16"]
    argv += ["--steps", "2", "--train-tasks", "2", "--tiny-size", "1x32", "--no-progress", "--out", str(tmp_path)]
    argv += ["--rollouts", "tree", "--dynamic-sampling", "--resample-rounds", "1"]
    argv += ["--rl-episodes-per-step", "4", "--rl-num-generations", "2"]
    assert main(argv) == 0, capsys.readouterr().err
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["grpo"]["rollouts"] == "tree" and run["grpo"]["dynamic_sampling"] is True
    episodes = [json.loads(line) for line in (tmp_path / "rl" / "episodes.jsonl").read_text().splitlines()]
    assert {e["step"] for e in episodes} == {1, 2} and len(episodes) == 8
    assert all({"group_id", "start_turn", "resample_round"} <= set(e) for e in episodes)
    metrics = [json.loads(line) for line in (tmp_path / "rl" / "metrics.jsonl").read_text().splitlines()]
    steps = [m for m in metrics if "signal_groups" in m]
    assert [m["step"] for m in steps] == [1, 2] and all("step_skipped" in m and "groups_resampled" in m for m in steps)
