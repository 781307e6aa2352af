"""train --policy score: the scoring policy's SFT and RL (every recipe, credit and rollout mode), its checkpoints
(score: and hf:), its update reading what the rollouts played, and kill-and-resume to the same weights.

Quick tests use a 2-block tiny model (tests/train_support.py's sizes); the SmolLM2 sanity gate is slow.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("trl", reason="training needs the trl extra")

import torch

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.train.scoring.settings import ScoreSettings
from tests.train_support import tiny_config


def score_config(recipe: str = "fixed", **changes):
    """The tiny training config with a 2-block model trained as a scoring policy (its top block)."""
    config = tiny_config(recipe, policy="score", score=ScoreSettings(train_blocks=1, update_rows=2))
    config = replace(config, tiny=replace(config.tiny, layers=2))
    return replace(config, **changes)


def _rows(path: Path) -> list[dict]:
    drop = ("elapsed_s", "wall_s", "cpu_s", "prepare_s", "prepare_cpu_s", "rollout_s", "rollout_cpu_s", "update_s",
            "update_cpu_s")  # fmt: skip
    return [{k: v for k, v in json.loads(line).items() if k not in drop} for line in path.read_text().splitlines()]


def _weights(directory: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(directory / "model.safetensors")


@pytest.mark.slow
def test_the_update_reads_back_the_distribution_the_rollouts_played(tmp_path: Path) -> None:
    """At unchanged weights the update's recomputed log-prob of every played command equals the rollout's: the kept
    hidden states, the packing of a whole episode and the normalisation agree (top block, all weights, LoRA)."""
    from agentgym_budget.agents.hf_model import load_causal_lm
    from agentgym_budget.integrations.session import EpisodeSession
    from agentgym_budget.train.recipe import run_training
    from agentgym_budget.train.rollouts import GroupSpec
    from agentgym_budget.train.scoring.episodes import PlayOptions, play_groups
    from agentgym_budget.train.scoring.run import _scoring
    from agentgym_budget.train.scoring.update import TrainedEpisode, policy_logprobs
    from agentgym_budget.train.scoring.weights import prepare_policy

    config = score_config("sft")
    run_training(config, tmp_path, progress=False, plots=False)
    for settings in (ScoreSettings(train_blocks=1), ScoreSettings(train_blocks=0), ScoreSettings(lora_rank=2)):
        model, tokenizer = load_causal_lm(tmp_path / "final")
        scoring, _ = _scoring(model, tokenizer, config, tmp_path / "final")
        policy = prepare_policy(scoring.model, settings, reference=True)
        scoring = replace(scoring, model=policy.model)
        sessions = [EpisodeSession(config.session_config()) for _ in range(4)]
        specs = [GroupSpec({"task": 0, "seed": 3, "max_turns": 4}, 4, 11)]
        options = PlayOptions(temperature=2.0, epsilon=0.3, capture=policy.capture)
        [group] = play_groups(scoring, sessions, specs, options, mode="tree")
        episodes = [TrainedEpisode(r.tokens.all_segments(), r.trained_turns) for r in group]
        with torch.no_grad():
            logprobs = policy_logprobs(policy.parts, episodes, start=policy.start, pad_id=scoring.pad_id,
                                       normalise="word", temperature=2.0, epsilon=0.3)  # fmt: skip
        played = [(float(lp[t.chosen]), t.logprob) for e, per in zip(episodes, logprobs, strict=True)
                  for t, lp in zip(e.turns, per, strict=True)]  # fmt: skip
        assert played and max(abs(a - b) for a, b in played) < 1e-5, settings
        assert {r.start_turn for r in group} == {group[0].start_turn}  # a tree: every member from the branch turn
        for session in sessions:
            session.close()


@pytest.mark.slow
def test_sft_then_fixed_rl_writes_logs_and_a_checkpoint_that_plays_as_score_and_hf(tmp_path: Path, capsys) -> None:
    from agentgym_budget.agents import parse_agent
    from agentgym_budget.runner.rollout import EnvRef, play_episode
    from agentgym_budget.train.recipe import run_training

    summary = run_training(score_config("fixed"), tmp_path, progress=True, plots=False)
    shown = capsys.readouterr().err
    for bar in ("demonstrations: 100%", "reading demonstrations: 100%", "SFT: 100%", "RL (fixed): 100%"):
        assert bar in shown, f"no finished {bar!r} bar in what the run printed:\n{shown}"
    assert "success=" in shown and "loss=" in shown
    assert summary["sft"]["last_loss"] < summary["sft"]["first_loss"] and summary["rl"]["episodes"] == 8
    metrics = [json.loads(line) for line in (tmp_path / "rl" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2] and all(m["rollout_cpu_s"] > 0 for m in metrics)
    assert {"loss", "kl", "clip_fraction", "entropy", "frac_reward_zero_std"} <= set(metrics[0])
    assert json.loads((tmp_path / "run.json").read_text())["policy"] == "score"
    ref = EnvRef.parse("TextWorld-CoinCollector-v0", "level=2")
    for name in (f"score:{tmp_path / 'final'}:temperature=0", f"hf:{tmp_path / 'final'}:max_new_tokens=8"):
        result = asyncio.run(play_episode(ref.make(), parse_agent(name).build(), task_id=ref.task_ids()[0], budget=2,
                                          seed=0))  # fmt: skip
        assert result.turns >= 1


def test_scoring_flags_need_the_scoring_policy() -> None:
    import argparse

    from agentgym_budget.cli.cmd_train import add_arguments, build_config

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    with pytest.raises(
        InvalidOptionError, match="--train-blocks set the scoring policy's training: add --policy score"
    ):
        build_config(parser.parse_args(["--recipe", "fixed", "--budget", "4", "--out", "x", "--train-blocks", "3"]))
    argv = ["--recipe", "budgetmix", "--budgets", "3,4", "--out", "x", "--policy", "score", "--credit", "turn"]
    config = build_config(parser.parse_args([*argv, "--dynamic-sampling", "--rollouts", "tree", "--lora-rank", "4"]))
    assert config.policy == "score" and config.grpo.credit == "turn" and config.grpo.dynamic_sampling
    assert config.score.lora_rank == 4 and config.grpo.num_generations == 8
    with pytest.raises(InvalidOptionError, match="clip"):
        build_config(parser.parse_args([*argv, "--clip", "2"]))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("recipe", "grpo", "score", "process"),
    [
        ("fixed", {"rollouts": "tree", "credit": "gigpo"}, {"history": False}, False),
        ("budgetmix", {"dynamic_sampling": True, "credit": "turn", "resample_rounds": 1}, {"epsilon": 0.1}, True),
        ("curriculum", {"beta": 0.1}, {"lora_rank": 2, "train_blocks": 0}, False),
    ],
)
def test_every_recipe_credit_and_rollout_mode_trains(tmp_path: Path, recipe, grpo, score, process) -> None:
    from agentgym_budget.train.recipe import run_training

    sft = tmp_path / "sft"
    run_training(score_config("sft"), sft, progress=False, plots=False)
    base = score_config(recipe, init=str(sft / "final"), process_reward=process, model=None)
    config = replace(base, grpo=replace(base.grpo, **grpo), score=replace(base.score, **score))
    summary = run_training(config, tmp_path / "rl", progress=False, plots=False)
    episodes = [json.loads(line) for line in (tmp_path / "rl" / "rl" / "episodes.jsonl").read_text().splitlines()]
    assert summary["rl"]["steps"] == 2 and episodes
    if recipe == "curriculum":
        assert [e["budget"] for e in episodes] == sorted(e["budget"] for e in episodes)  # stages grow
    if grpo.get("rollouts") == "tree":
        assert all(
            len({e["start_turn"] for e in episodes if (e["step"], e["group_id"]) == (step, 0)}) == 1 for step in (1, 2)
        )  # a group's branches start where its trunk was cut
    saved = json.loads((tmp_path / "rl" / "final" / "agentgym_scoring.json").read_text())
    assert saved["history"] == score.get("history", True)  # the checkpoint plays as it was trained


@pytest.mark.slow
def test_a_killed_scoring_run_resumes_to_the_same_weights_and_logs(tmp_path: Path, monkeypatch) -> None:
    from agentgym_budget.train.recipe import run_training
    from agentgym_budget.train.scoring import run as scoring_run

    config = score_config("fixed", sft=replace(score_config().sft, steps=4, save_steps=2))
    config = replace(config, grpo=replace(config.grpo, steps=3, save_steps=1, dynamic_sampling=True))
    run_training(config, tmp_path / "straight", progress=False, plots=False)

    class Killed(Exception):
        pass

    real = scoring_run.save_checkpoint

    def dies_after(phase: str, step: int):
        def save(policy, optimizer, directory, number):
            path = real(policy, optimizer, directory, number)
            if directory.parent.name == phase and number == step:
                raise Killed
            return path

        return save

    for phase, step in (("sft", 2), ("rl", 2)):
        monkeypatch.setattr(scoring_run, "save_checkpoint", dies_after(phase, step))
        with pytest.raises(Killed):
            run_training(config, tmp_path / "killed", progress=False, plots=False)
    monkeypatch.setattr(scoring_run, "save_checkpoint", real)
    run_training(config, tmp_path / "killed", progress=False, plots=False)
    for phase in ("sft/final", "final"):
        a, b = (_weights(tmp_path / run / phase) for run in ("straight", "killed"))
        assert all(torch.equal(a[name], b[name]) for name in a), phase
    for log in ("sft/metrics.jsonl", "rl/metrics.jsonl", "rl/episodes.jsonl"):
        assert _rows(tmp_path / "straight" / log) == _rows(tmp_path / "killed" / log), log


def _exact_probability(model: str, split: str, tasks: list[str], command: str) -> list[float]:
    """The scoring policy's exact probability of ``command`` at the first state of each task (Coin Collector 1)."""
    from agentgym_budget.agents.scoring.agent import ScoreAgent
    from agentgym_budget.runner.rollout import EnvRef

    env = EnvRef.parse("TextWorld-CoinCollector-v0", "level=1", split=split).make(())
    agent = ScoreAgent(model, temperature=1.0)
    probabilities = []

    async def first_turn(observation, info):
        await agent.reset(info["goal"], observation, info, seed=0)
        await agent.act(observation, info)
        return agent.action_distribution().get(command, 0.0)

    try:
        for task in tasks:
            observation, info = env.reset(seed=0, options={"task": task, "max_turns": 1})
            probabilities.append(asyncio.run(first_turn(observation, info)))
    finally:
        env.close()
    return probabilities


@pytest.mark.slow
def test_rl_raises_smollm2s_exact_probability_of_the_winning_command(tmp_path: Path) -> None:
    """RL can learn where it must (the CI check; the full sanity gate is the recorded run of
    benchmarks/scoring_gate.py, docs/training.md): from the raw SmolLM2 base, 3 RL steps of one group of 8
    one-turn episodes on ONE Coin Collector level 1 task (T=1: ``take coin`` wins, anything else loses) raise the
    exact probability of ``take coin`` in that state by at least half of what it lacked."""
    pytest.importorskip("gguf", reason="smollm2-135m needs the smollm2 extra")
    from agentgym_budget.agents.pretrained import resolve_model
    from agentgym_budget.runner.rollout import EnvRef
    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.grpo import GRPOSettings
    from agentgym_budget.train.recipe import run_training

    base = str(resolve_model("smollm2-135m"))
    grpo = GRPOSettings(steps=3, episodes_per_step=8, num_generations=8, learning_rate=1e-4, beta=0.0, save_steps=3)
    config = TrainConfig("TextWorld-CoinCollector-v0", "level=1", recipe="fixed", budget=1, init=base,
                         policy="score", train_tasks=1, grpo=grpo)  # fmt: skip
    summary = run_training(config, tmp_path, progress=False, plots=False)
    task = EnvRef.parse("TextWorld-CoinCollector-v0", "level=1", split="train").task_ids()[:1]
    [before] = _exact_probability(base, "train", task, "take coin")
    [after] = _exact_probability(str(tmp_path / "final"), "train", task, "take coin")
    print(f"p(take coin) {before:.3f} -> {after:.3f};", summary["rl"])
    assert summary["rl"]["steps_with_signal"] >= 1
    assert after - before >= (1 - before) / 2
