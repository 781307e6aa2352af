"""The benchmark scripts cannot rot: each runs in smoke mode, records its run, and feeds the table of docs/benchmarks.md."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import __main__ as runner
from benchmarks import _harness
from benchmarks import _headlines as headlines

ROOT = Path(__file__).resolve().parent.parent


def test_every_script_is_listed_by_the_runner():
    scripts = {path.stem for path in (ROOT / "benchmarks").glob("*.py") if not path.stem.startswith("_")}
    assert scripts == set(runner.SCRIPTS)


def test_readme_table_is_the_one_made_from_the_committed_results():
    readme = (ROOT / "docs" / "benchmarks.md").read_text()
    between = readme.split(runner.BEGIN, 1)[1].split(runner.END, 1)[0].strip()
    assert between == runner.table(ROOT / "benchmarks" / "results")


def test_run_records_timing_machine_versions_and_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHMARK_RESULTS_DIR", str(tmp_path))
    run = _harness.start("probe", smoke=True)
    sum(range(200_000))
    path = run.finish({"answer": 42}, [["what", "figure", "", "`python benchmarks/probe.py`"]])
    record = json.loads(path.read_text())
    assert path == tmp_path / "smoke" / "probe.json"
    assert record["result"] == {"answer": 42}
    assert record["timing"]["process_cpu_s"] > 0 and record["timing"]["wall_s"] > 0
    assert record["timing"]["thread_cpu_s"] <= record["timing"]["process_cpu_s"] + 1e-3
    assert record["machine"]["cores"] >= 1 and len(record["machine"]["load_after"]) == 3
    assert record["provenance"]["libraries"]["gymnasium"] and record["provenance"]["agentgym_budget"]["version"]


def test_rows_written_by_hand_are_carried_and_flagged(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHMARK_RESULTS_DIR", str(tmp_path))
    _harness.start("probe").finish({}, [["a", "b", "c", "d"]])
    path = _harness.start("probe").finish({"new": 1})
    record = json.loads(path.read_text())
    assert record["readme_rows"] == [["a", "b", "c", "d"]] and record["readme_rows_by_hand"]


def test_readme_regenerated_between_the_markers_only(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    row = ["TextWorld step", "ratio **1.01**", "<= 1.05", "`python benchmarks/textworld_overhead.py`"]
    (results / "textworld_overhead.json").write_text(json.dumps({"readme_rows": [row, ["x|y", "", "", "same"]]}))
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{runner.BEGIN}\nold table\n{runner.END}\nafter\n")
    assert runner.regenerate_readme(results, readme)
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith(f"{runner.END}\nafter\n")
    assert "| [TextWorld step](#bench-textworld-overhead-0) | **1.01** | <= 1.05 |" in text
    assert "| [x\\|y](#bench-textworld-overhead-1) | | |" in text
    assert "old table" not in text
    assert not runner.regenerate_readme(results, readme)


def test_a_measured_row_states_when_under_what_load_and_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHMARK_RESULTS_DIR", str(tmp_path))
    _harness.start("textworld_overhead").finish({}, [["what", "ratio **1.0**", "", "cmd"], ["more", "x", "", "same"]])
    text = runner.table(tmp_path)
    assert "| [what](#bench-textworld-overhead-0) | **1.0** | |" in text.splitlines()
    assert re.search(
        r"^\(bench-textworld-overhead-0\)=\n\*\*what\.\*\* what: ratio \*\*1\.0\*\*\. Measured \d{4}-\d\d-\d\d, "
        r"load average [\d.]+ -> [\d.]+, CPU \d+ s of \d+ s wall\. Reproduce: cmd\.$",
        text,
        re.M,
    )
    assert "**more.** more: x. Measured" in text and text.endswith("Reproduce: cmd.")  # "same": the command above


def test_the_committed_table_shows_one_number_per_result_cell():
    """The headline of every row is one number with its unit; the rest of the row is below the table."""
    rows = [line for line in runner.table(ROOT / "benchmarks" / "results").splitlines() if line.startswith("| [")]
    assert len(rows) >= 30
    for line in rows:
        name, result, target = (cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:4])
        assert len(headlines.numbers_in(result)) == 1 and len(result) <= 40, (
            f"{name}: {result!r} is not one number: add a Headline to benchmarks/_headlines.py"
        )
        assert len(re.sub(r"\]\(#[\w-]+\)", "]", name)) <= 60 and len(target) <= 60, line


@pytest.mark.slow
def test_every_benchmark_runs_in_smoke_mode(tmp_path):
    env = os.environ | {"BENCHMARK_RESULTS_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke", "--jobs", "2"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name in runner.SCRIPTS:
        record = json.loads((tmp_path / "smoke" / f"{name}.json").read_text())
        assert record["smoke"] and record["result"], name
        assert record["timing"]["process_cpu_s"] > 0, name
        assert {"load_before", "load_after", "cpu_model"} <= set(record["machine"]), name


def test_parallel_runs_are_for_smoke_mode_only(capsys):
    with pytest.raises(SystemExit):
        runner.main(["--jobs", "2", "--only", "webshop_speed"])
    assert "full runs are timed alone" in capsys.readouterr().err


def test_parallel_smoke_runs_start_with_the_longest_scripts():
    assert set(runner.SMOKE_LONGEST_FIRST) <= set(runner.SCRIPTS)
