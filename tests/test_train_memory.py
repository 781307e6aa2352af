"""Training refuses, before loading anything, a configuration whose estimated peak memory exceeds the machine's."""

from __future__ import annotations

import argparse
from dataclasses import replace

import pytest

from agentgym_budget.cli import cmd_train
from agentgym_budget.errors import InvalidOptionError, TrainingMemoryError
from agentgym_budget.train import memory
from agentgym_budget.train.config import TrainConfig
from agentgym_budget.train.sft import SFTSettings

GB24 = 24 * 2**30


def _config(*argv: str) -> TrainConfig:
    parser = argparse.ArgumentParser()
    cmd_train.add_arguments(parser)
    return cmd_train.build_config(parser.parse_args(["--out", "unused", *argv]))


def test_the_tiny_models_sizes_for_smollm2_are_refused_with_the_flags_to_change():
    config = TrainConfig("TextWorld-CoinCollector-v0", "level=3", recipe="sft", model="smollm2-135m")
    config = replace(config, sft=SFTSettings(batch_size=8, max_length=2048))
    with pytest.raises(TrainingMemoryError, match=r"8 sequences of 2048 tokens.*--sft-batch-size, --sft-max-length"):
        memory.check_memory(config, available=GB24)
    assert issubclass(TrainingMemoryError, InvalidOptionError)


def test_the_command_refuses_before_training(monkeypatch, tmp_path, capsys):
    from agentgym_budget.cli.main import main

    monkeypatch.setattr(memory, "machine_bytes", lambda: GB24)
    argv = ["train", "--recipe", "sft", "--model", "smollm2-135m", "--out", str(tmp_path / "run")]
    status = main([*argv, "--sft-batch-size", "8", "--sft-max-length", "2048", "--steps", "1"])
    assert status != 0 and "--sft-batch-size" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # nothing was written, no model was loaded


@pytest.mark.parametrize("recipe", [("--recipe", "sft"), ("--recipe", "fixed", "--budget", "6")])
def test_model_smollm2_alone_brings_sizes_that_fit_24_gb(recipe):
    config = _config(*recipe, "--model", "smollm2-135m")
    assert (config.sft.batch_size, config.sft.max_length, config.sft.learning_rate) == (4, 1536, 1e-4)
    estimates = memory.check_memory(config, available=GB24)
    assert estimates and all(need < GB24 for need in estimates.values())
    flags = _config(*recipe, "--model", "smollm2-135m", "--sft-batch-size", "2", "--rl-tokens-per-turn", "64")
    assert (flags.sft.batch_size, flags.sft.max_length, flags.grpo.tokens_per_turn) == (2, 1536, 64)  # flags win


def test_the_default_tiny_model_fits_and_unknown_sizes_are_not_guessed(tmp_path):
    estimates = memory.check_memory(_config("--recipe", "fixed", "--budget", "6"), available=GB24)
    assert set(estimates) == {"sft", "grpo"} and all(need < 4 * 2**30 for need in estimates.values())
    gguf = _config("--recipe", "sft", "--model", str(tmp_path / "model.gguf"))
    assert memory.check_memory(gguf, available=1) == {}  # sizes known only once loaded: no check


def test_estimate_grows_with_batch_length_and_vocabulary():
    model = memory.ModelSize(parameters=10**8, vocab=50_000, hidden=512, layers=24, heads=8)
    small = memory.estimate_peak_bytes(model, "sft", batch=2, length=512)
    assert memory.estimate_peak_bytes(model, "sft", batch=4, length=512) > small
    assert memory.estimate_peak_bytes(model, "sft", batch=2, length=1024) > small
    assert memory.estimate_peak_bytes(memory.ModelSize(10**8, 100_000, 512, 24, 8), "sft", batch=2, length=512) > small
    with pytest.raises(InvalidOptionError, match="phase"):
        memory.estimate_peak_bytes(model, "ppo", batch=1, length=1)
