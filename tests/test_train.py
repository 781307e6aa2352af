"""Training: recipes, SFT and GRPO with the tiny local model, checkpoints, resume, budgets (extra ``trl``)."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace

import pytest

from agentgym_budget.errors import InvalidBudgetError, InvalidOptionError, RunConfigError
from agentgym_budget.integrations.session_config import SessionConfig
from tests.train_support import COIN, tiny_config

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")


@pytest.fixture
def one_thread():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small is fastest on one thread of a shared machine
    yield
    torch.set_num_threads(threads)


def test_recipe_options_are_validated():
    from agentgym_budget.train.config import TrainConfig

    with pytest.raises(InvalidOptionError, match="Did you mean 'budgetmix'"):
        TrainConfig(*COIN, recipe="budgetmx", budgets=(2, 4))
    with pytest.raises(InvalidOptionError, match="give --budgets"):
        TrainConfig(*COIN, recipe="budgetmix", budget=4)
    with pytest.raises(InvalidOptionError, match="give --budget N"):
        TrainConfig(*COIN, recipe="fixed")
    with pytest.raises(InvalidBudgetError):
        TrainConfig(*COIN, recipe="fixed", budget=0)
    with pytest.raises(InvalidOptionError, match="--init"):
        TrainConfig(*COIN, recipe="sft", budget=3, init="runs/x/final")
    config = TrainConfig(*COIN, recipe="budgetmix", budgets=(8, 2, 4), show_budget=True, process_reward=True)
    session = config.session_config()
    assert (session.budgets, session.split, session.show_budget, session.reward) == (
        (2, 4, 8),
        "train",
        True,
        "process",
    )
    assert TrainConfig.from_json(json.loads(json.dumps(config.to_json()))) == config


def test_budget_drawn_per_episode_truncates_and_is_shown():
    from agentgym_budget.integrations.trl import BudgetToolEnv

    config = tiny_config("budgetmix", show_budget=True).session_config()
    env = BudgetToolEnv(config)
    drawn = set()
    for seed in range(6):
        text = env.reset(task=0, seed=seed)
        budget = env.record["budget"]
        drawn.add(budget)
        assert f"[Turns left: {budget} of {budget}]" in text
        answers = [env.act("inventory") for _ in range(budget)]
        assert f"[Turns left: 0 of {budget}]" in answers[-1] and "[Episode over" in answers[-1]
        record = env.record
        assert (record["turns"], record["truncated"], record["won"]) == (budget, True, False)
        assert "episode is over" in env.act("take coin")  # no turn is played after the budget
        assert env.record["turns"] == budget
    assert drawn == {2, 4}
    hidden = BudgetToolEnv(tiny_config("fixed").session_config())
    assert "Turns left" not in hidden.reset(task=0, seed=0)
    env.session.close(), hidden.session.close()


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_fixed_recipe_trains_sft_then_grpo_and_writes_loadable_checkpoints(tmp_path):
    from agentgym_budget.agents.hf_model import load_causal_lm
    from agentgym_budget.chat.format import FORMAT_FILE, ChatFormat
    from agentgym_budget.train.recipe import run_training

    config = tiny_config("fixed")
    summary = run_training(config, tmp_path, progress=False)

    sft = [r for r in map(json.loads, (tmp_path / "sft" / "metrics.jsonl").read_text().splitlines()) if "loss" in r]
    assert [r["step"] for r in sft] == [1, 2, 3, 4, 5, 6]
    assert all(math.isfinite(r["loss"]) for r in sft) and sft[-1]["loss"] < sft[0]["loss"]
    assert summary["sft"]["last_loss"] == sft[-1]["loss"]
    rl = [r for r in map(json.loads, (tmp_path / "rl" / "metrics.jsonl").read_text().splitlines()) if "reward" in r]
    assert [r["step"] for r in rl] == [1, 2] and all(math.isfinite(r["loss"]) for r in rl)
    episodes = [json.loads(line) for line in (tmp_path / "rl" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 8 and {e["step"] for e in episodes} == {1, 2}
    for episode in episodes:
        assert episode["budget"] == 3 and episode["turns"] <= 3
        assert episode["truncated"] == (episode["turns"] == 3 and not episode["won"])
    assert summary["rl"]["episodes"] == 8 and set(summary["rl"]["success_by_budget"]) == {"3"}
    for directory in ("sft/final", "rl/final", "final"):
        assert (tmp_path / directory / FORMAT_FILE).is_file()
        model, tokenizer = load_causal_lm(tmp_path / directory)
        assert model.config.vocab_size == len(tokenizer) and model.config.hidden_size == 32
        assert ChatFormat.load(tmp_path / directory).env == "TextWorld-CoinCollector-v0(level=2)"
    assert sorted(p.name for p in (tmp_path / "rl" / "checkpoints").glob("checkpoint-*")) == [
        "checkpoint-1",
        "checkpoint-2",
    ]
    assert (tmp_path / "training.png").stat().st_size > 1000
    with pytest.raises(RunConfigError, match="seed"):
        run_training(replace(config, seed=1), tmp_path, progress=False)


class _Interrupt(Exception):
    pass


def _interrupt_after(step, *, saved=True):
    from transformers import TrainerCallback

    class Interrupt(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            if saved and state.global_step == step:
                raise _Interrupt  # as a kill right after checkpoint-`step` was written

        def on_step_end(self, args, state, control, **kwargs):
            if not saved and state.global_step == step:
                raise _Interrupt  # as a kill after step `step`, before any checkpoint

    return Interrupt()


def _weights(model):
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("save_steps", [2, 10], ids=["checkpoint-2", "no-checkpoint-yet"])
def test_sft_resumes_after_interruption_to_the_same_weights(tmp_path, save_steps):
    torch = pytest.importorskip("torch")
    from agentgym_budget.train.base_model import build_base_model
    from agentgym_budget.train.sft import SFTSettings, last_checkpoint, run_sft
    from agentgym_budget.train.trajectories import agent_conversations

    config = tiny_config("sft")
    data = agent_conversations(config.session_config(), "expert", tasks=range(3), episodes_per_task=1, budget=3)
    settings = SFTSettings(steps=4, batch_size=2, learning_rate=3e-3, save_steps=save_steps)

    def fresh():
        return build_base_model(data.conversations, config.tiny, chat_format=config.chat_format(), seed=0)

    model, tokenizer = fresh()
    run_sft(model, tokenizer, data.conversations, settings, out=tmp_path / "straight", progress=False)
    straight = _weights(model)

    model, tokenizer = fresh()
    with pytest.raises(_Interrupt):
        run_sft(
            model,
            tokenizer,
            data.conversations,
            settings,
            out=tmp_path / "killed",
            progress=False,
            callbacks=[_interrupt_after(2, saved=save_steps == 2)],
        )
    found = last_checkpoint(tmp_path / "killed" / "checkpoints")
    assert (found.name if found else None) == ("checkpoint-2" if save_steps == 2 else None)
    model, tokenizer = fresh()  # a new process: the weights come from the checkpoint
    result = run_sft(model, tokenizer, data.conversations, settings, out=tmp_path / "killed", progress=False)
    assert result.global_step == 4
    logs = [json.loads(line) for line in (tmp_path / "killed" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in logs if "loss" in r] == [1, 2, 3, 4]  # steps 3 and 4 logged once, after the resume
    resumed = _weights(model)
    assert all(torch.allclose(straight[name], resumed[name], atol=1e-6) for name in straight)


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("save_steps", [1, 10], ids=["checkpoint-2", "no-checkpoint-yet"])
def test_grpo_resumes_from_its_checkpoint(tmp_path, save_steps):
    from agentgym_budget.train.base_model import build_base_model
    from agentgym_budget.train.grpo import GRPOSettings, run_grpo
    from agentgym_budget.train.trajectories import agent_conversations

    config = tiny_config("budgetmix")
    session = config.session_config()
    data = agent_conversations(replace(session, budgets=None), "expert", tasks=range(3), episodes_per_task=1, budget=4)
    model, tokenizer = build_base_model(data.conversations, config.tiny, chat_format=config.chat_format(), seed=0)
    settings = GRPOSettings(steps=3, episodes_per_step=4, num_generations=2, save_steps=save_steps, tokens_per_turn=48)
    with pytest.raises(_Interrupt):
        run_grpo(
            model,
            tokenizer,
            session,
            settings,
            tasks=range(3),
            out=tmp_path,
            progress=False,
            callbacks=[_interrupt_after(2, saved=save_steps == 1)],
        )
    logged = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert {e["step"] for e in logged} == {1, 2}
    result = run_grpo(model, tokenizer, session, settings, tasks=range(3), out=tmp_path, progress=False)
    assert result.global_step == 3
    episodes = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    # With checkpoint-2, steps 1 and 2 are kept from the first run and step 3 is played after resuming; with
    # no checkpoint yet, training starts over and the stopped attempt's episodes are dropped, not counted twice.
    assert [e["step"] for e in episodes] == sorted(e["step"] for e in episodes)
    assert {e["step"] for e in episodes} == {1, 2, 3} and len(episodes) == 12
    assert {e["budget"] for e in episodes} <= {2, 4}
    for episode in episodes:
        assert episode["turns"] <= episode["budget"]
        assert episode["truncated"] == (episode["turns"] == episode["budget"] and not episode["won"])


def test_train_command_reports_a_missing_budget(capsys, tmp_path):
    from agentgym_budget.cli.main import main

    assert main(["train", "--recipe", "fixed", "--out", str(tmp_path)]) == 2
    assert "give --budget N" in capsys.readouterr().err
    assert not (tmp_path / "run.json").exists()


def test_train_command_refuses_grpo_flags_that_do_not_fit_before_any_work(capsys, tmp_path):
    from agentgym_budget.cli.main import main

    argv = ["train", "--recipe", "fixed", "--budget", "3", "--out", str(tmp_path), "--rl-num-generations", "4"]
    assert main([*argv, "--rl-episodes-per-step", "6"]) == 2
    refused = capsys.readouterr().err
    assert "episodes_per_step=6 must be a multiple of num_generations=4" in refused
    assert "Given: --rl-episodes-per-step 6, --rl-num-generations 4." in refused  # in the flags' own words
    assert main([*argv, "--rl-learning-rate", "2"]) == 2
    assert "learning_rate in (0, 1)" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_session_config_of_a_fixed_recipe_has_one_budget():
    config = tiny_config("fixed").session_config()
    assert config == SessionConfig(*COIN, split="train", max_turns=3)


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_grpo_is_deterministic_for_a_seed(tmp_path):
    torch = pytest.importorskip("torch")
    from agentgym_budget.train.base_model import build_base_model
    from agentgym_budget.train.grpo import GRPOSettings, run_grpo
    from agentgym_budget.train.trajectories import agent_conversations

    config = tiny_config("budgetmix")
    session = config.session_config()
    data = agent_conversations(replace(session, budgets=None), "expert", tasks=range(2), episodes_per_task=1, budget=4)
    settings = GRPOSettings(steps=1, episodes_per_step=4, num_generations=2, tokens_per_turn=48)
    runs = []
    for name in ("a", "b"):
        model, tokenizer = build_base_model(data.conversations, config.tiny, chat_format=config.chat_format(), seed=0)
        run_grpo(model, tokenizer, session, settings, tasks=range(2), out=tmp_path / name, seed=3, progress=False)
        episodes = [json.loads(line) for line in (tmp_path / name / "episodes.jsonl").read_text().splitlines()]
        runs.append((episodes, _weights(model)))
    (first, weights_a), (second, weights_b) = runs
    assert len(first) == 4 and first == second
    assert all(torch.equal(weights_a[name], weights_b[name]) for name in weights_a)


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_train_command_runs_and_resumes_from_its_output(tmp_path, capsys):
    pytest.importorskip("trl")
    from agentgym_budget.cli.main import main

    argv = ["train", "--env-args", "level=2", "--recipe", "sft", "--budget", "3", "--sft-steps", "2"]
    argv += ["--train-tasks", "2", "--tiny-size", "1x64", "--no-progress", "--out", str(tmp_path)]
    assert main(argv) == 0
    model_config = json.loads((tmp_path / "final" / "config.json").read_text())
    assert (model_config["num_hidden_layers"], model_config["hidden_size"]) == (1, 64)
    captured = capsys.readouterr()
    printed = captured.out
    assert "Training recipe sft on TextWorld-CoinCollector-v0(level=2): budget 3" in printed
    assert "'loss'" not in printed + captured.err  # --no-progress: no per-step log dicts from the trainer
    assert "it/s]" not in captured.err and "Writing model shards" not in captured.err  # nor the libraries' bars
    from transformers.utils import logging as hf_logging

    assert hf_logging.is_progress_bar_enabled()  # ...and the bars are the caller's again afterwards
    assert f"agent hf:{tmp_path / 'final'}" in printed
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["sft"]["steps"] == 2 and "rl" not in summary
    written = (tmp_path / "final" / "model.safetensors").stat().st_mtime_ns
    assert main(argv) == 0  # finished phases are not trained again
    assert (tmp_path / "sft" / "final" / "model.safetensors").stat().st_mtime_ns <= written
    assert main([*argv[:-2], "--seed", "1", "--out", str(tmp_path)]) == 2
    assert "other settings (seed differ)" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_a_local_model_is_the_base_policy_with_model(tmp_path):
    from agentgym_budget.agents.hf_model import load_causal_lm
    from agentgym_budget.chat.format import ChatFormat
    from agentgym_budget.train.base_model import build_base_model, parameter_count, save_model
    from agentgym_budget.train.recipe import run_training
    from agentgym_budget.train.trajectories import agent_conversations

    config = tiny_config("sft")
    data = agent_conversations(config.session_config(), "expert", tasks=range(2), episodes_per_task=1, budget=3)
    spec = replace(config.tiny, hidden_size=48, heads=4)
    model, tokenizer = build_base_model(data.conversations, spec, chat_format=ChatFormat(), seed=5)
    save_model(model, tokenizer, tmp_path / "local-model", ChatFormat())

    with pytest.raises(InvalidOptionError, match="not a local Hugging Face model directory"):
        run_training(replace(config, model=str(tmp_path / "missing")), tmp_path / "bad", progress=False)
    run_training(replace(config, model=str(tmp_path / "local-model")), tmp_path / "run", progress=False)
    base, _ = load_causal_lm(tmp_path / "run" / "sft" / "base")
    final, _ = load_causal_lm(tmp_path / "run" / "final")
    assert base.config.hidden_size == final.config.hidden_size == 48  # not the built-in tiny model (32 wide)
    assert parameter_count(final) == parameter_count(model)


def test_a_run_moved_with_its_starting_checkpoint_resumes(tmp_path):
    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.recipe import _check_run

    def rl_config(study):
        return TrainConfig(*COIN, recipe="fixed", budget=3, init=str(study / "sft" / "final"))

    first = tmp_path / "first"
    _check_run(rl_config(first), first / "fixed")
    assert json.loads((first / "fixed" / "run.json").read_text())["init"] == "../sft/final"
    moved = first.rename(tmp_path / "moved")
    _check_run(rl_config(moved), moved / "fixed")  # the study moved as a whole: the same run
    with pytest.raises(RunConfigError, match="init differ"):
        _check_run(TrainConfig(*COIN, recipe="fixed", budget=3, init=str(tmp_path / "other")), moved / "fixed")

    legacy = json.loads((moved / "fixed" / "run.json").read_text()) | {"init": str(moved / "sft" / "final")}
    (moved / "fixed" / "run.json").write_text(json.dumps(legacy))  # as runs before relative init stored it
    _check_run(rl_config(moved), moved / "fixed")
    assert json.loads((moved / "fixed" / "run.json").read_text())["init"] == "../sft/final"


@pytest.mark.slow
def test_the_number_of_torch_threads_does_not_change_what_training_makes(tmp_path):
    """``--threads`` is an operational setting: SFT then GRPO on 1 and on 2 threads give the same bytes.

    The default tiny model's width, so that torch does split its operations across the threads.
    """
    torch = pytest.importorskip("torch")
    from agentgym_budget.train.base_model import TinyModelSpec
    from agentgym_budget.train.recipe import run_training

    config = tiny_config("fixed", tiny=TinyModelSpec(), train_tasks=2)
    threads = torch.get_num_threads()
    try:
        for count in (1, 2):
            torch.set_num_threads(count)
            run_training(config, tmp_path / f"threads{count}", progress=False)
    finally:
        torch.set_num_threads(threads)
    one, two = (tmp_path / f"threads{count}" for count in (1, 2))
    assert (one / "final" / "model.safetensors").read_bytes() == (two / "final" / "model.safetensors").read_bytes()
    assert (one / "rl" / "episodes.jsonl").read_bytes() == (two / "rl" / "episodes.jsonl").read_bytes()
