"""Turn-level credit for GRPO: process rewards reach the turns, GiGPO's equal-state groups, training with it."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace

import pytest

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.train.credit import RolloutTurns, turn_advantages
from agentgym_budget.train.turn_grpo import TurnToolEnv, model_spans, token_advantages

COOKING = ("TextWorld-Cooking-v0", "difficulty=1")


def _play(config: SessionConfig, plans: list[list[str]], *, record_states: bool = False) -> list[RolloutTurns]:
    """One rollout per plan, all on task 0 (one GRPO group)."""
    env = TurnToolEnv(config, record_states=record_states)
    rollouts = []
    try:
        for plan in plans:
            env.reset(task=0, seed=0)
            for command in plan:
                env.act(command)
            rollouts.append(env.turns)
    finally:
        env.session.close()
    return rollouts


def _cooking_group(reward: str, record_states: bool = False) -> list[RolloutTurns]:
    config = SessionConfig(*COOKING, max_turns=6, reward=reward, info_keys=("expert_plan",))
    probe = TurnToolEnv(config)
    probe.reset(task=0, seed=0)
    plan = list(probe.session.last.info["expert_plan"])
    probe.session.close()
    assert len(plan) >= 2
    plans = [plan, plan[:1] + ["look"] * 5, ["look"] * 6, plan[:2] + ["inventory"] * 4]
    return _play(config, plans, record_states=record_states)


def _token_advantages(group: list[RolloutTurns], credit: str) -> list[list[float]]:
    """Per-token advantages of a batch where every reply is 2 tokens and every tool answer 1."""
    rows = []
    for rollout, advantages in zip(group, turn_advantages(group, credit, gamma=0.9), strict=True):
        n = len(rollout.rewards)
        tool = ([1, 1, 0] * n) + [1, 1]
        spans = model_spans([1] * len(tool), tool)
        assert len(spans) == n + 1  # one reply per turn plus the one that stops
        rows.append(token_advantages(spans, advantages, len(tool), fallback=0.0))
    return rows


@pytest.mark.slow
def test_process_reward_changes_turn_advantages_but_not_episode_ones():
    plain, shaped = _cooking_group("env", record_states=True), _cooking_group("process", record_states=True)
    assert [r.rewards for r in plain] != [r.rewards for r in shaped]  # the shaping is there, per turn
    # Sequence-level GRPO: the shaping telescopes to -c * Phi(s_0), one constant for the group: no change.
    for a, b in zip(_token_advantages(plain, "episode"), _token_advantages(shaped, "episode"), strict=True):
        assert a == pytest.approx(b, abs=1e-6)
    # Per-turn returns depend on the state each turn acted from: the process signal reaches the tokens.
    for credit in ("turn", "gigpo"):
        a, b = _token_advantages(plain, credit), _token_advantages(shaped, credit)
        changed = [
            x != pytest.approx(y, abs=1e-3) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True)
        ]
        assert any(changed), credit
        assert all(math.isfinite(x) for row in a + b for x in row)


def test_equal_state_groups_find_the_shared_states_of_forked_rollouts():
    from agentgym_budget.train.credit import state_groups

    config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", max_turns=4)
    # Rollouts 0 and 1 fork after "go west"; rollout 2 walks into a wall (no exit north): it stays at the start.
    group = _play(
        config,
        [["go west", "go east", "look"], ["go west", "look", "look"], ["go north", "look"]],
        record_states=True,
    )
    groups = {tuple(members) for members in state_groups(group).values()}
    assert ((0, 0), (1, 0), (2, 0)) in groups  # the start state
    assert ((0, 1), (1, 1)) in groups  # the state after "go west", turn 1
    assert all(len(m) == 1 for m in groups if m not in {((0, 0), (1, 0), (2, 0)), ((0, 1), (1, 1))})
    # Had rollout 0 won on its last turn: its shared turns gain a step term, its unshared last turn none.
    won = [RolloutTurns((0.0, 0.0, 1.0), group[0].states), *group[1:]]
    episode, gigpo = turn_advantages(won, "episode"), turn_advantages(won, "gigpo", gamma=0.9)
    assert gigpo[0][2] == pytest.approx(episode[0][2])
    assert gigpo[0][1] > episode[0][1] and gigpo[1][1] < episode[1][1]
    assert gigpo[2][1] == pytest.approx(episode[2][1])


def test_gigpo_groups_two_paths_to_one_state_at_the_same_turns_left():
    """The env's state_digest, not the path: a loop back to the start meets a rollout that stayed there."""
    from agentgym_budget.train.credit import state_groups

    config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", max_turns=4)
    group = _play(config, [["go west", "go east", "look"], ["look", "look", "look"]], record_states=True)
    groups = {tuple(members) for members in state_groups(group).values()}
    assert ((0, 0), (1, 0)) in groups  # the start, 4 turns left
    assert ((0, 2), (1, 2)) in groups  # back at the start (go west, go east) and still there (look, look): 2 left
    assert ((0, 1),) in groups and ((1, 1),) in groups  # the shower and the start, 3 turns left


def test_credit_options_are_checked():
    from agentgym_budget.train.grpo import GRPOSettings

    with pytest.raises(InvalidOptionError, match="gamma must be in"):
        GRPOSettings(credit="turn", gamma=0.0)
    with pytest.raises(InvalidOptionError, match="Did you mean 'gigpo'"):
        GRPOSettings(credit="gipo")
    with pytest.raises(InvalidOptionError, match="state digest"):
        turn_advantages([RolloutTurns((1.0,)), RolloutTurns((0.0,))], "gigpo")


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")
@pytest.mark.parametrize("credit", ["turn", "gigpo"])
def test_grpo_with_turn_credit_trains_without_nan(tmp_path, credit):
    torch = pytest.importorskip("torch")
    from agentgym_budget.agents.hf_model import load_causal_lm
    from agentgym_budget.train.recipe import run_training
    from tests.train_support import tiny_config

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        config = tiny_config("fixed", process_reward=True)
        config = replace(config, grpo=replace(config.grpo, credit=credit, gamma=0.9, steps=3))
        run_training(config, tmp_path, progress=False, plots=False)
    finally:
        torch.set_num_threads(threads)
    rl = [r for r in map(json.loads, (tmp_path / "rl" / "metrics.jsonl").read_text().splitlines()) if "loss" in r]
    assert [r["step"] for r in rl] == [1, 2, 3]
    assert all(math.isfinite(r["loss"]) and 0 <= r["credit/useful_groups"] <= 1 for r in rl)
    assert all(r["credit/misaligned"] == 0 for r in rl)
    if credit == "gigpo":
        assert all(0 <= r["credit/shared_state_turns"] <= 1 for r in rl)
    model, _ = load_causal_lm(tmp_path / "final")
    assert all(torch.isfinite(p).all() for p in model.parameters())


def _rows(path):
    timing = {"elapsed_s", "step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second",
              "rollout_s", "rollout_tokens_per_s"}  # fmt: skip
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in row.items() if k not in timing and k != "train_loss"} for row in rows]


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")
@pytest.mark.parametrize("variant", ["turn", "dynamic"])  # TRL's rollouts; the package's, with dynamic sampling
def test_killed_sft_and_grpo_resume_to_bit_identical_weights_and_metrics(tmp_path, variant):
    import subprocess

    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    from tests.resume_worker import KILLED

    def run(out, *kill):
        command = [sys.executable, "-m", "tests.resume_worker", str(tmp_path / out), variant, *map(str, kill)]
        return subprocess.run(command, capture_output=True, text=True, timeout=600).returncode

    assert run("straight") == 0
    assert run("killed", "sft", 5) == KILLED  # dies right after sft/checkpoints/checkpoint-5
    assert run("killed", "rl", 2) == KILLED  # resumes SFT at step 5, dies after rl/checkpoints/checkpoint-2
    assert run("killed") == 0
    for phase in ("sft/final", "final"):
        a, b = (load_file(tmp_path / run_ / phase / "model.safetensors") for run_ in ("straight", "killed"))
        assert all(torch.equal(a[name], b[name]) for name in a), phase
    for log in ("sft/metrics.jsonl", "rl/metrics.jsonl", "rl/episodes.jsonl"):
        assert _rows(tmp_path / "straight" / log) == _rows(tmp_path / "killed" / log), log
