"""Study logs -> claim records -> claims and study.md lines (logs written by the test, not played)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.study.claims import claim_records, claims_markdown, study_claims

AGENTS = {"sft": "hf:runs/sft/final", "fixed": "hf:runs/fixed/final"}


def _write(path, records, name="episodes.jsonl"):
    path.mkdir(parents=True)
    (path / name).write_text("".join(json.dumps(r) + "\n" for r in records))


def _logs(tmp_path):
    passkt = [
        {"agent": AGENTS[a], "task_id": f"t{t}", "budget": 8, "mode": "prefix", "won": turn is not None,
         "success_turn": turn, "sample": s}
        for a, turn in (("sft", 6), ("fixed", 3)) for t in range(3) for s in range(2)
    ] + [{"agent": "hf:other", "task_id": "t0", "budget": 8, "mode": "prefix", "won": False, "success_turn": None}]  # fmt: skip
    probes = [{"kind": "probe", "agent": AGENTS[a], "state_id": f"s{i}", "optimal": a == "fixed", "seed": 99}
              for a in AGENTS for i in range(3)]  # fmt: skip
    recovery = [{"kind": "perturbed", "agent": AGENTS[a], "state_id": "s0", "k": k, "won": k == 0 or a == "fixed"}
                for a in AGENTS for k in range(4)] + [{"kind": "natural", "agent": AGENTS["sft"]}]  # fmt: skip
    _write(tmp_path / "passkt", passkt)
    _write(tmp_path / "probe", probes, "probes.jsonl")  # the probe command's log name
    _write(tmp_path / "recovery", recovery)


def test_prefix_logs_give_outcomes_at_every_budget(tmp_path):
    _logs(tmp_path)
    episodes, probes, recovery = claim_records(tmp_path, AGENTS, [3, 8])
    won = {(e["agent"], e["budget"]) for e in episodes if e["won"]}
    assert won == {("sft", 8), ("fixed", 3), ("fixed", 8)}
    assert len(episodes) == 2 * 3 * 2 * 2 and {e["seed"] for e in episodes} == {0}
    assert {p["seed"] for p in probes} == {0} and sum(p["correct"] for p in probes) == 3
    assert sorted(r["k"] for r in recovery) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_study_claims_and_markdown_from_logs(tmp_path):
    _logs(tmp_path)
    config = SimpleNamespace(eval_budgets=(3, 8), budgets=(4, 6), seed=0)
    claims = study_claims(tmp_path, config, AGENTS)
    by_name = {c["claim"]: c for c in claims}
    assert by_name["budget_dependence"]["estimate"] == -1.0  # fixed gains at 3 only: the gain grows as T tightens
    assert (
        by_name["budgetmix_robustness"]["verdict"] == "undecided"
        and "budgetmix" in by_name["budgetmix_robustness"]["reason"]
    )
    text = "\n".join(claims_markdown(claims))
    assert "| recovery |" in text and "One seed" in text and "CPUs" in text
    two, three = ("\n".join(claims_markdown(claims, seeds)) for seeds in (2, 3))
    assert "Two seeds: the intervals resample them" in two and "One seed" not in two
    assert "seeds per recipe: 3.\n" in three


def test_runs_named_with_an_index_are_training_seeds_of_their_recipe(tmp_path):
    _logs(tmp_path)
    agents = {"sft": AGENTS["sft"], "fixed@2": AGENTS["fixed"]}
    episodes, _, recovery = claim_records(tmp_path, agents, [3, 8])
    assert {(e["agent"], e["seed"]) for e in episodes} == {("sft", 0), ("fixed", 2)}
    assert {(r["agent"], r["seed"]) for r in recovery} == {("sft", 0), ("fixed", 2)}


@pytest.mark.slow  # imports the training stack
def test_study_trains_each_rl_recipe_once_per_training_seed():
    from agentgym_budget.study.presets import preset_settings
    from agentgym_budget.study.run import StudyConfig, run_names

    config = StudyConfig(training_seeds=preset_settings("tiny")["training_seeds"])
    names = run_names(config)
    assert [directory for _, directory, _ in names] == [
        "sft", "fixed", "fixed@1", "fixed@2", "budgetmix", "budgetmix@1", "budgetmix@2", "curriculum", "curriculum@1",
        "curriculum@2",
    ]  # fmt: skip
    seeds = {config.recipe(name, None, index).seed for name, _, index in names if name == "fixed"}
    assert seeds == {config.seed, config.seed + 1, config.seed + 2}


def test_cli_preset_sets_sizes_and_flags_override_them():
    import argparse

    from agentgym_budget.cli.cmd_study import add_arguments, build_study

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    study = build_study(parser.parse_args(["--out", "x", "--preset", "tiny", "--eval-samples", "8"]))
    assert (study.eval_samples, study.eval_tasks, study.training_seeds) == (8, 56, 3)
    assert (study.probe_states, study.recovery_states) == (100, 144)
    assert study.train.grpo.steps == 50 and study.train.sft.steps == 350
    assert (study.train.grpo.episodes_per_step, study.train.grpo.num_generations) == (16, 8)
    groups_of_4 = build_study(parser.parse_args(["--out", "x", "--preset", "tiny", "--rl-num-generations", "4"]))
    assert (groups_of_4.train.grpo.episodes_per_step, groups_of_4.train.grpo.num_generations) == (16, 4)
    plain = build_study(parser.parse_args(["--out", "x"]))  # no --preset: the default preset, score on SmolLM2
    assert (plain.eval_samples, plain.eval_tasks, plain.training_seeds, plain.policy) == (2, 32, 3, "score")
    assert (plain.probe_states, plain.recovery_states, plain.env_kwargs) == (12, 4, "level=103")
    generate = build_study(parser.parse_args(["--out", "x", "--preset", "generate"]))
    assert (generate.eval_samples, generate.eval_tasks, generate.training_seeds) == (4, 32, 1)
    assert generate.train.sft_agent.startswith("noisy-expert") and generate.train.sft_mask_errors
    assert (generate.train.model, generate.train_budget, generate.arms) == ("smollm2-135m", 4, ("fixed", "budgetmix"))
    grpo = generate.recipe("fixed", Path("sft/final")).grpo
    assert (grpo.learning_rate, grpo.dynamic_sampling, grpo.episodes_per_step, grpo.num_generations) == (
        1e-5,
        True,
        4,
        4,
    )
    assert build_study(parser.parse_args(["--out", "x", "--train-budget", "7"])).train_budget == 7
    noisy = build_study(parser.parse_args(["--out", "x", "--noisy-demonstrations"]))
    assert noisy.train.sft_agent.startswith("noisy-expert") and not noisy.train.sft_mask_errors
    clean = build_study(parser.parse_args(["--out", "x", "--demonstrations", "clean"]))
    assert (clean.train.sft_agent, clean.train.sft_mask_errors) == ("expert", False)
    with pytest.raises(InvalidOptionError, match="contradicts"):
        build_study(parser.parse_args(["--out", "x", "--noisy-demonstrations", "--demonstrations", "clean"]))
    arms = build_study(parser.parse_args(["--out", "x", "--arms", "curriculum,fixed", "--preset", "tiny"]))
    assert arms.arms == ("fixed", "curriculum") and arms.train.model is None
    tiny = build_study(parser.parse_args(["--out", "x", "--preset", "tiny"]))
    assert tiny.arms == ("fixed", "budgetmix", "curriculum") and tiny.train_budget == 6
    smoke = build_study(parser.parse_args(["--out", "x", "--preset", "smoke"]))
    assert (smoke.eval_ks, smoke.train.grpo.steps, smoke.train.train_tasks) == ((1, 2), 2, 4)


def test_rl_flags_set_every_arms_grpo_over_the_preset():
    import argparse
    from dataclasses import replace

    from agentgym_budget.cli.cmd_study import add_arguments, build_study
    from agentgym_budget.train.grpo import GRPOSettings

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    argv = ["--out", "x", "--preset", "tiny", "--rl-episodes-per-step", "32", "--rl-num-generations", "8"]
    study = build_study(parser.parse_args([*argv, "--rl-learning-rate", "5e-4", "--rl-beta", "0"]))
    for arm in study.arms:
        grpo = study.recipe(arm, Path("sft/final")).grpo
        assert (grpo.episodes_per_step, grpo.num_generations, grpo.learning_rate, grpo.beta, grpo.steps) == (
            32,
            8,
            5e-4,
            0.0,
            50,
        )
    assert study.recipe("sft").grpo == GRPOSettings()  # SFT runs shared by studies that differ only in RL
    smollm2 = build_study(parser.parse_args(["--out", "x", "--preset", "smollm2", "--rl-temperature", "0.7"]))
    preset = build_study(parser.parse_args(["--out", "x", "--preset", "smollm2"])).train.grpo
    assert smollm2.train.grpo == replace(preset, temperature=0.7) and preset != GRPOSettings()
    with pytest.raises(InvalidOptionError, match="must be a multiple of num_generations=8"):
        build_study(parser.parse_args([*argv[:4], "--rl-episodes-per-step", "12", "--rl-num-generations", "8"]))


def test_common_random_numbers_pair_agents_and_independent_streams_do_not():
    from agentgym_budget.eval.passkt.config import PassKTConfig
    from agentgym_budget.eval.passkt.plan import plan_episodes
    from agentgym_budget.runner.rollout import EnvRef

    env = EnvRef.parse("TextWorld-CoinCollector-v0", "level=3")
    agents = ("noisy-expert-recover:eps=0.5", "random")

    def seeds(streams):
        config = PassKTConfig(env, agents, ks=(1,), budgets=(4,), samples=3, tasks=2, streams=streams)
        plans = plan_episodes(config, ["a", "b"])
        return {name: [p.seed for p in plans if p.agent.name == name] for name in (s.name for s in config.specs)}

    common, independent = seeds("common"), seeds("independent")
    assert len(set(map(tuple, common.values()))) == 1
    assert len(set(map(tuple, independent.values()))) == 2
    assert len({seed for values in independent.values() for seed in values}) == 12


def test_the_power_line_projects_the_size_each_short_claim_needs() -> None:
    def claim(name: str, half_width: float) -> dict:
        interval = {"low": -half_width, "high": half_width, "confidence": 0.95, "half_width": half_width}
        return {"claim": name, "statistic": "s", "estimate": 0.0, "verdict": "undecided", "interval": interval}

    lines = claims_markdown([claim("budget_dependence", 0.1), claim("budgetmix_robustness", 0.04)])
    power = next(line for line in lines if line.startswith("- Power"))
    assert "achieved by 1 of 2 measured claims" in power
    assert "about 4.0x (budget_dependence) as many training seeds" in power
    assert "(budgetmix_robustness) as many" not in power
    decide = next(line for line in lines if line.startswith("- To decide"))
    assert "(budget_dependence)" in decide and "(budgetmix_robustness)" in decide
    decided = {**claim("recovery", 0.01), "estimate": 0.2, "verdict": "supported"}
    assert "(recovery)" not in next(line for line in claims_markdown([decided]) if line.startswith("- To decide"))
    everything_met = claims_markdown([claim("recovery", 0.05)])
    assert "projection" not in next(line for line in everything_met if line.startswith("- Power"))


def test_the_score_presets_train_scoring_policies_with_the_scoring_settings():
    import argparse

    from agentgym_budget.cli.cmd_study import add_arguments, build_study
    from agentgym_budget.study.run import StudyConfig
    from agentgym_budget.train.scoring.settings import SCORE_RL_DEFAULTS

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    score = build_study(parser.parse_args(["--out", "x", "--preset", "score"]))
    assert (score.policy, score.train.policy, score.train.model, score.training_seeds) == (
        "score",
        "score",
        "smollm2-135m",
        3,
    )
    assert score.arms == ("fixed", "budgetmix", "budgetmix_turn", "budgetmix_process")
    fixed = score.recipe("fixed", Path("sft/final"))
    assert (fixed.policy, fixed.grpo.learning_rate) == ("score", SCORE_RL_DEFAULTS["learning_rate"])
    assert (
        score.to_json()["policy"] == "score"
        and "policy" not in build_study(parser.parse_args(["--out", "x", "--preset", "generate"])).to_json()
    )
    flagged = build_study(
        parser.parse_args(["--out", "x", "--preset", "smoke", "--policy", "score", "--train-blocks", "3"])
    )
    assert (flagged.train.policy, flagged.train.score.train_blocks, flagged.train.model) == ("score", 3, None)
    assert score == build_study(parser.parse_args(["--out", "x"]))  # the default study is the scoring study
    assert build_study(parser.parse_args(["--out", "x", "--preset", "generate"])).policy == "generate"
    with pytest.raises(InvalidOptionError, match="add --policy score"):
        build_study(parser.parse_args(["--out", "x", "--preset", "smoke", "--train-blocks", "3"]))
    with pytest.raises(InvalidOptionError, match="policy must be one of generate, score, got 'sample'"):
        StudyConfig(policy="sample")
