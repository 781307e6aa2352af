"""provenance.json: what produced a result directory, and the warning when combined runs differ."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import warnings
from pathlib import Path

import pytest

import agentgym_budget
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import run_passkt
from agentgym_budget.eval.passkt.report import report
from agentgym_budget.runner import provenance
from agentgym_budget.runner.env_ref import EnvRef
from agentgym_budget.runner.provenance import ProvenanceWarning, read_provenance, write_provenance
from agentgym_budget.storage import file_digests


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _folder_sha256(folder: Path) -> str:
    """A folder's digest computed here, independently: sha256sum-style lines of its files, sorted by path."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    lines = "".join(f"{_sha256(p.read_bytes())}  {p.relative_to(folder).as_posix()}\n" for p in files)
    return _sha256(lines.encode())


def _passkt(out: Path, agents: list[str], **env: object) -> Path:
    env_id = str(env.pop("env_id", "TextWorld-CoinCollector-v0"))
    ref = EnvRef.parse(env_id, env or {"level": 1})
    config = PassKTConfig(ref, tuple(agents), ks=(1,), budgets=(3,), samples=1, tasks=1, workers=1)
    run_passkt(config, out, plots=False, progress=False)
    return out


@pytest.mark.slow  # plays the tiny hf: checkpoint
def test_a_passkt_run_names_the_package_engine_and_model_versions_and_hashes(checkpoint: Path, tmp_path: Path) -> None:
    out = _passkt(tmp_path / "run", [f"hf:{checkpoint}", "random"])
    [record] = read_provenance(out)
    assert record["agentgym_budget"]["version"] == agentgym_budget.__version__
    assert record["python"]["version"] == platform.python_version()
    packages = record["engines"]["textworld"]["packages"]
    assert packages == {
        "textworld": importlib.metadata.version("textworld"),
        "jericho": importlib.metadata.version("jericho"),
    }
    for library in ("gymnasium", "numpy", "torch", "transformers"):
        assert record["libraries"][library] == importlib.metadata.version(library)
    model = record["models"][f"hf:{checkpoint}"]
    assert model["sha256"] == _folder_sha256(checkpoint) and model["path"] == str(checkpoint.resolve())
    assert model["files"] == len([p for p in checkpoint.rglob("*") if p.is_file()])
    assert record["machine"]["cores"] == os.cpu_count() and record["command"]
    _passkt(out, [f"hf:{checkpoint}", "random"])  # resumed alike: no second record
    assert len(read_provenance(out)) == 1


def test_a_user_game_file_is_hashed_and_the_commit_is_optional(
    coin_game_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(provenance, "_ROOT", tmp_path)  # not a git checkout: no commit, no error
    out = _passkt(tmp_path / "run", ["random"], env_id="TextWorld-File-v0", path=coin_game_path)
    [record] = read_provenance(out)
    assert record["data"]["path"]["sha256"] == _sha256(Path(coin_game_path).read_bytes())
    assert record["agentgym_budget"]["commit"] is None
    assert record["models"] == {} and record["libraries"]["gymnasium"] == importlib.metadata.version("gymnasium")


def test_report_warns_when_combined_runs_differ_in_an_engine_version(tmp_path: Path) -> None:
    first = _passkt(tmp_path / "a", ["random"])
    second = _passkt(tmp_path / "b", ["expert"])
    stored = json.loads((second / "provenance.json").read_text())
    stored["records"][0]["engines"]["textworld"]["packages"]["textworld"] = "1.6.0"  # as a run under another textworld
    (second / "provenance.json").write_text(json.dumps(stored))
    with pytest.warns(ProvenanceWarning) as caught:
        result = report([first, second], tmp_path / "report", plots=False, resamples=100)
    installed = importlib.metadata.version("textworld")
    line = f"{first} and {second} differ in engines.textworld.packages.textworld: {installed} vs 1.6.0"
    assert result.warnings == [line] and [str(w.message) for w in caught] == [line]
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["config"]["provenance_warnings"] == [line]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProvenanceWarning)
        report([first], tmp_path / "alone", plots=False, resamples=100)  # one run: nothing to compare


def test_a_resume_under_another_setup_adds_a_record_that_is_compared(tmp_path: Path, monkeypatch) -> None:
    write_provenance(tmp_path, env_ids=["TextWorld-CoinCollector-v0"])
    write_provenance(tmp_path, env_ids=["TextWorld-CoinCollector-v0"])
    assert len(read_provenance(tmp_path)) == 1
    monkeypatch.setattr(provenance, "_installed", lambda name: "9.9" if name == "jericho" else "1.0")
    write_provenance(tmp_path, env_ids=["TextWorld-CoinCollector-v0"])
    records = read_provenance(tmp_path)
    assert len(records) == 2
    lines = provenance.provenance_warnings({"run": records})
    assert (
        f"run (resumed) differ in engines.textworld.packages.jericho: {records[0]['engines']['textworld']['packages']['jericho']} vs 9.9"
        in lines
    )


def test_files_are_hashed_once_per_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    weights = tmp_path / "model" / "weights.bin"
    weights.parent.mkdir()
    weights.write_bytes(b"x" * 1000)
    calls = []
    original = file_digests._sha256
    monkeypatch.setattr(file_digests, "_sha256", lambda path: calls.append(path) or original(path))
    first = file_digests.path_digest(weights.parent, root=cache)
    file_digests._MEMORY.clear()  # a new process: the on-disk cache answers
    assert file_digests.path_digest(weights.parent, root=cache) == first and len(calls) == 1
    weights.write_bytes(b"y" * 1000)
    os.utime(weights, ns=(1, 1))  # another version of the file (its mtime differs)
    assert file_digests.path_digest(weights.parent, root=cache)["sha256"] == _folder_sha256(weights.parent)
    assert len(calls) == 2
