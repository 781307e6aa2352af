"""The GPU path of training, checked without a GPU: validation of --device/--bf16/--vllm, the preset, and the
mapping to TRL's SFTConfig/GRPOConfig (the configs and the GRPO trainer build on this CPU-only machine)."""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

from agentgym_budget.errors import InvalidOptionError, MissingDependencyError
from agentgym_budget.train.cpu_settings import cpu_trainer_arguments
from agentgym_budget.train.device import DeviceSettings, check_device, grpo_generation_arguments, trainer_arguments
from tests.train_support import tiny_config

trl = pytest.importorskip("trl")
torch = pytest.importorskip("torch")

GPU = DeviceSettings(device="cuda", bf16=True, vllm="colocate")


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture
def fake_cuda(monkeypatch):
    """Only for validation: makes ``check_device`` believe a GPU is visible (nothing is trained)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


def test_cpu_default_maps_to_the_unchanged_cpu_arguments_and_run_json():
    assert trainer_arguments(DeviceSettings(), save_steps=3, seed=1, progress=False) == cpu_trainer_arguments(
        save_steps=3, seed=1, progress=False
    )
    assert grpo_generation_arguments(DeviceSettings()) == {}
    config = tiny_config()
    assert "device" not in config.to_json()
    assert type(config).from_json(config.to_json()) == config
    gpu = replace(config, device=GPU)
    assert gpu.to_json()["device"]["vllm"] == "colocate"
    assert type(config).from_json(gpu.to_json()).device == GPU


def test_cuda_without_a_gpu_names_the_fix(no_cuda):
    with pytest.raises(InvalidOptionError, match=r"--device cuda was given but torch sees no CUDA GPU.*--device cpu"):
        check_device(DeviceSettings(device="cuda"))
    with pytest.raises(InvalidOptionError, match=r"--bf16 need a CUDA GPU, but --device auto resolved to cpu"):
        check_device(DeviceSettings(device="auto", bf16=True))
    with pytest.raises(InvalidOptionError, match=r"--vllm colocate need a CUDA GPU, but --device cpu"):
        check_device(DeviceSettings(vllm="colocate"))
    assert check_device(DeviceSettings(device="auto")) == "cpu"
    with pytest.raises(InvalidOptionError, match="Unknown --vllm mode 'server'"):
        DeviceSettings(device="cuda", vllm="server")


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_vllm_without_the_package_is_a_missing_dependency(fake_cuda):
    assert check_device(DeviceSettings(device="cuda", bf16=True)) == "cuda"
    with pytest.raises(MissingDependencyError, match=r"--vllm colocate .* needs the 'vllm' package"):
        check_device(GPU)


def test_run_training_validates_the_device_before_any_work(no_cuda, tmp_path):
    from agentgym_budget.train.recipe import run_training

    with pytest.raises(InvalidOptionError, match="sees no CUDA GPU"):
        run_training(replace(tiny_config(), device=DeviceSettings(device="cuda")), tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_gpu_settings_map_to_sft_and_grpo_configs(monkeypatch, tmp_path):
    from agentgym_budget.train.grpo import _grpo_arguments
    from agentgym_budget.train.sft import _sft_arguments

    # transformers refuses bf16 without a bf16 GPU when the config is built: let it build (nothing runs).
    monkeypatch.setattr("transformers.training_args.is_torch_bf16_gpu_available", lambda: True)
    config = tiny_config()
    sft = _sft_arguments(trl, config.sft, tmp_path, seed=0, progress=False, report_to=(), device=GPU)
    assert (sft.use_cpu, sft.bf16, sft.activation_checkpointing) == (False, True, False)
    grpo = _grpo_arguments(
        trl, config.session_config(), config.grpo, tmp_path, seed=0, progress=False, report_to=(), device=GPU
    )
    assert (grpo.use_cpu, grpo.bf16, grpo.use_vllm, grpo.vllm_mode) == (False, True, True, "colocate")
    assert grpo.vllm_gpu_memory_utilization == 0.3
    cpu = _grpo_arguments(trl, config.session_config(), config.grpo, tmp_path, seed=0, progress=False, report_to=())
    assert (cpu.use_cpu, cpu.bf16, cpu.use_vllm) == (True, False, False)


def test_grpo_trainer_builds_with_the_gpu_placement_on_this_cpu(tmp_path):
    """``use_cpu=False`` (the cuda path) builds the trainer; without a GPU accelerate places it on the CPU."""
    from datasets import Dataset

    from agentgym_budget.integrations.trl import dataset_rows
    from agentgym_budget.train.grpo import _build_trainer, _grpo_arguments
    from agentgym_budget.train.tiny_lm import build_tiny_lm

    config = tiny_config()
    settings = replace(config.grpo, beta=0.0)  # no reference model to load
    session = config.session_config()
    model, tokenizer = build_tiny_lm(["go north", "take coin"], vocab_size=300, hidden_size=16, layers=1, heads=2)
    device = DeviceSettings(device="cuda")
    args = _grpo_arguments(trl, session, settings, tmp_path, seed=0, progress=False, report_to=(), device=device)
    rows = dataset_rows(session, episodes=4, seed=0, tasks=[0, 1])
    trainer = _build_trainer(model, tokenizer, session, args, Dataset.from_list(rows), settings, reward_funcs=[])
    assert trainer.args.use_cpu is False and trainer.use_vllm is False
    assert str(trainer.accelerator.device) == ("cuda" if torch.cuda.is_available() else "cpu")


def test_preset_and_flags_build_the_config():
    from agentgym_budget.cli import cmd_train

    parser = argparse.ArgumentParser()
    cmd_train.add_arguments(parser)
    base = ["--recipe", "budgetmix", "--budgets", "4,8", "--out", "x"]
    config = cmd_train.build_config(
        parser.parse_args([*base, "--preset", "gpu-qwen2.5", "--model", str(Path("models/qwen")), "--vllm", "colocate"])
    )
    assert config.device == GPU and config.train_tasks == 200
    assert (config.sft.learning_rate, config.grpo.num_generations, config.grpo.episodes_per_step) == (1e-5, 8, 32)
    plain = cmd_train.build_config(parser.parse_args([*base, "--device", "auto", "--train-tasks", "7"]))
    assert plain.device == DeviceSettings(device="auto") and plain.train_tasks == 7
    assert cmd_train.build_config(parser.parse_args(base)).device.is_default
    with pytest.raises(InvalidOptionError, match="Unknown training preset 'gpu'"):
        cmd_train.build_config(parser.parse_args([*base, "--preset", "gpu", "--model", "m"]))
