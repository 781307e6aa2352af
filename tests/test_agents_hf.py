"""The hf:PATH agent: spec checks, model directories and how they load, the CLI playing a saved checkpoint.

How its turns are tokenised, read and generated is in ``tests/test_agents_hf_generation.py``; both
use the session fixture ``checkpoint`` (``tests/conftest.py``, built by ``tests/hf_support.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl", reason="the hf: agent needs the trl extra")

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.hf_agent import HFAgent
from agentgym_budget.agents.hf_generation import Sampling
from agentgym_budget.agents.hf_model import load_local_model
from agentgym_budget.cli.main import main
from agentgym_budget.errors import DataError, InvalidOptionError, ModelPathError
from tests.hf_support import ENV


def test_spec_names_and_defaults(checkpoint: Path) -> None:
    spec = parse_agent(f"hf:{checkpoint}:temperature=0.5,batch_size=2,concurrency=3")
    assert spec.name == f"hf:{checkpoint}:temperature=0.5"
    assert spec.options == {
        "temperature": 0.5,
        "top_p": 1.0,
        "top_k": 0,
        "max_new_tokens": 128,
        "batch_size": 2,
        "concurrency": 3,
        "threads": 1,
        "prefix_cache": True,
    }
    agent = spec.build()
    assert isinstance(agent, HFAgent) and agent.sampling == Sampling(0.5, 1.0, 0, 128) and agent.batch_size == 2


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ("temprature=0.5", InvalidOptionError, "no parameter 'temprature'. Did you mean 'temperature'?"),
        ("max_tokens=8", InvalidOptionError, "Did you mean 'max_new_tokens'?"),
        ("top_p=0", InvalidOptionError, "top_p=0 is out of range: expected a number in (0, 1]"),
        ("temperature=-1", InvalidOptionError, "temperature=-1 is out of range: expected a number >= 0"),
        ("max_new_tokens=0", InvalidOptionError, "max_new_tokens=0 is out of range: expected an integer >= 1"),
        ("batch_size=0", InvalidOptionError, "batch_size=0 is out of range"),
        ("top_k=2.5", InvalidOptionError, "top_k='2.5' is not a valid int"),
    ],
)
def test_bad_parameters_are_refused_when_parsed(checkpoint: Path, params: str, error: type, message: str) -> None:
    with pytest.raises(error) as caught:
        parse_agent(f"hf:{checkpoint}:{params}")
    assert message in str(caught.value)


def test_the_constructor_checks_its_values_too(checkpoint: Path) -> None:
    with pytest.raises(InvalidOptionError, match="top_p"):
        HFAgent(str(checkpoint), top_p=2.0)
    with pytest.raises(InvalidOptionError, match="batch_size >= 1"):
        HFAgent(str(checkpoint), batch_size=0)


def test_model_paths_are_checked_when_parsed(checkpoint: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelPathError, match="does not exist\\)\\. Did you mean 'final'\\?"):
        parse_agent(f"hf:{checkpoint.parent / 'fianl'}")
    with pytest.raises(ModelPathError, match="Model directories inside it: final"):
        parse_agent(f"hf:{checkpoint.parent}")
    (tmp_path / "weights-only").mkdir()
    (tmp_path / "weights-only" / "config.json").write_text("{}")
    with pytest.raises(ModelPathError, match=r"lacks weights .* a tokenizer"):
        parse_agent(f"hf:{tmp_path / 'weights-only'}")
    (tmp_path / "file.bin").write_text("")
    with pytest.raises(ModelPathError, match="is a file, not a model directory"):
        parse_agent(f"hf:{tmp_path / 'file.bin'}")
    with pytest.raises(InvalidOptionError, match="needs its path"):
        parse_agent("hf")


def test_a_broken_chat_format_is_a_data_error(checkpoint: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    for item in checkpoint.iterdir():
        (broken / item.name).write_bytes(item.read_bytes())
    (broken / "agentgym_chat.json").write_text(json.dumps({"system_promt": "hi"}))
    with pytest.raises(DataError, match="Cannot read the chat format"):
        parse_agent(f"hf:{broken}")


@pytest.mark.parametrize("command", ["passkt", "probe", "recovery"])
def test_the_cli_refuses_a_missing_model_before_writing(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--agent", f"hf:{tmp_path / 'nothing'}", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "No model directory at" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_passkt_cli_plays_a_saved_checkpoint_and_resumes(checkpoint: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    agent = f"hf:{checkpoint}:max_new_tokens=8,batch_size=2,concurrency=2"
    argv = ["passkt", "--env", ENV[0], "--env-args", ENV[1], "--agent", agent, "--k", "1", "--t", "2"]
    argv += ["--n", "2", "--tasks", "2", "--workers", "1", "--no-plots", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 4 and {r["agent"] for r in records} == {f"hf:{checkpoint}:max_new_tokens=8"}
    assert all(r["agent_stats"]["replies"] == r["turns"] == 2 for r in records)
    assert (out / "summary.json").stat().st_size > 0
    assert main(argv) == 0
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 4


@pytest.mark.slow
def test_probe_and_recovery_cli_play_a_saved_checkpoint(checkpoint: Path, tmp_path: Path) -> None:
    agent = f"hf:{checkpoint}:max_new_tokens=6"
    common = ["--env", ENV[0], "--env-args", ENV[1], "--agent", agent, "--workers", "1", "--no-plots", "--no-progress"]
    probe_out = tmp_path / "probe"
    assert main(["probe", *common, "--states", "2", "--m", "2", "--out", str(probe_out)]) == 0
    probes = [json.loads(line) for line in (probe_out / "probes.jsonl").read_text().splitlines()]
    assert probes and {r["agent"] for r in probes} == {f"hf:{checkpoint}:max_new_tokens=6"}
    recovery_out = tmp_path / "recovery"
    argv = ["recovery", *common, "--states", "1", "--k", "0,1", "--budgets", "2", "--n", "1", "--natural", "1"]
    assert main([*argv, "--out", str(recovery_out)]) == 0
    lines = [json.loads(line) for f in recovery_out.glob("*.jsonl") for line in f.read_text().splitlines()]
    assert any(r.get("agent") == f"hf:{checkpoint}:max_new_tokens=6" for r in lines)


def test_a_template_that_is_not_prefix_preserving_gets_trls_training_template(checkpoint: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer
    from trl import chat_template_utils as templates

    directory = tmp_path / "qwen3"
    directory.mkdir()
    for item in checkpoint.iterdir():
        (directory / item.name).write_bytes(item.read_bytes())
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.chat_template = templates.qwen3_chat_template
    tokenizer.save_pretrained(directory)
    assert not templates.is_chat_template_prefix_preserving(tokenizer)
    local = load_local_model(directory)
    assert local.tokenizer.chat_template == templates.qwen3_training_chat_template and local.parser == "trl"


def test_a_model_is_loaded_once_per_process_until_its_directory_changes(checkpoint: Path, tmp_path: Path) -> None:
    import torch

    directory = tmp_path / "ckpt"
    directory.mkdir()
    for item in checkpoint.iterdir():
        (directory / item.name).write_bytes(item.read_bytes())
    first = load_local_model(directory)
    assert load_local_model(directory) is first
    with torch.no_grad():
        first.model.model.embed_tokens.weight.add_(1.0)
    first.model.save_pretrained(directory)  # a new checkpoint over the old one
    second = load_local_model(directory)
    assert second is not first and torch.equal(
        second.model.model.embed_tokens.weight, first.model.model.embed_tokens.weight
    )


@pytest.mark.slow
def test_no_progress_keeps_the_model_libraries_bars_off(checkpoint: Path, tmp_path: Path) -> None:
    """A fresh process, so the model really loads: ``--no-progress`` leaves stderr without any library's bar."""
    agent = f"hf:{checkpoint}:max_new_tokens=4"
    argv = ["passkt", "--env", ENV[0], "--env-args", ENV[1], "--agent", agent, "--k", "1", "--t", "1", "--n", "1"]
    argv += ["--tasks", "1", "--workers", "1", "--no-plots", "--no-progress", "--out", str(tmp_path / "run")]
    done = subprocess.run(
        [sys.executable, "-m", "agentgym_budget", *argv], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "it/s]" not in done.stderr and "Loading weights" not in done.stderr, done.stderr[-2000:]
