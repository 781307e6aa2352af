"""The README and the documentation show what the code does: quoted outputs and errors are checked against the real thing."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.cli.main import main
from agentgym_budget.errors import EpisodeOverError

ROOT = Path(__file__).resolve().parent.parent
README = "\n".join(page.read_text() for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])


def _code_block_after(marker: str) -> list[str]:
    """The lines of the first fenced code block after ``marker`` in the README."""
    start = README.index(marker)
    opening = README.index("```\n", start) + 4
    return README[opening : README.index("```", opening)].rstrip("\n").splitlines()


def test_readme_quotes_the_step_before_reset_error_of_gym_make() -> None:
    row = next(line for line in README.splitlines() if line.startswith("- **`step(action)`**:"))
    (quoted,) = re.findall(r'"(Cannot call [^"]+)"', row)
    env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0", level=3)
    try:
        with pytest.raises(gym.error.ResetNeeded) as caught:
            env.step("look")
        assert str(caught.value) == quoted and "`ResetNeeded`" in row and "`OrderEnforcing`" in row
        with pytest.raises(EpisodeOverError):  # the bare env: the package's own error, also a ResetNeeded
            env.unwrapped.step("look")
    finally:
        env.close()
    assert "raises {py:obj}`.EpisodeOverError`" in row and issubclass(EpisodeOverError, gym.error.ResetNeeded)


@pytest.mark.slow
def test_readme_shows_the_recovery_commands_printed_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _code_block_after("`recovery_vs_budget.png`. With no\narguments")
    assert main(["recovery", "--out", str(tmp_path / "run"), "--no-progress", "--no-plots"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    start = printed.index(expected[0])
    assert printed[start : start + len(expected)] == expected


def _same_image(made: Path, shown: Path) -> bool:
    """Equal size and (nearly) equal pixels: the same figure, whatever PNG encoder details differ."""
    import matplotlib.image
    import numpy as np

    a, b = matplotlib.image.imread(made), matplotlib.image.imread(shown)
    return a.shape == b.shape and float(np.abs(a - b).mean()) < 1e-3


@pytest.mark.slow
def test_the_main_jobs_printed_output_and_figures_come_from_its_run(tmp_path: Path, capsys) -> None:
    """docs/concepts/passkt.md's table and docs/images/passkt-*.png: the main job's command resumed on its run."""
    run, data = tmp_path / "run", ROOT / "tests" / "data" / "passkt-main-job"
    run.mkdir()
    (run / "episodes.jsonl").write_bytes(gzip.decompress((data / "episodes.jsonl.gz").read_bytes()))
    shutil.copy(data / "run.json", run / "run.json")
    assert main(["passkt", "--out", str(run), "--no-progress"]) == 0  # the defaults: the main job
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert any(line.startswith("0 episodes played, 1600 reused from the log") for line in printed)
    expected = _code_block_after("<!-- printed by the main job")
    start = printed.index(expected[0])
    assert printed[start : start + len(expected)] == expected
    for name in ("difference", "success_vs_T"):
        assert _same_image(run / f"{name}.png", ROOT / "docs" / "images" / f"passkt-{name}.png"), name


def test_the_readme_quotes_the_main_jobs_timings_from_one_table() -> None:
    readme = (ROOT / "README.md").read_text()
    quick_start = readme[readme.index("It measures Pass@(K,T)") : readme.index("![Pass@(K,T) difference")]
    table = (ROOT / "docs" / "results" / "log.md").read_text()
    table = table[table.index("## Main job timings") :]
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines() if line.startswith("| 20")
    ]
    walls = {row[3] for row in rows}
    quoted = re.findall(r"(\d+ s) wall", quick_start)
    assert quoted and set(quoted) <= walls, f"README quotes {quoted}; docs/results/log.md measured {sorted(walls)}"
    assert "(126 s of CPU time" in quick_start and any(row[3:] == ["90 s", "126 s"] for row in rows)


def test_the_readme_verdicts_are_those_of_the_committed_default_study() -> None:
    from agentgym_budget.study.claims import verdict_lines

    study = json.loads((ROOT / "docs" / "results" / "study.json").read_text())
    for page in (ROOT / "README.md", ROOT / "docs" / "study.md"):
        text = page.read_text()
        table = text.split("<!-- verdicts of docs/results/study.json -->\n", 1)[1].split("\n\n", 1)[0]
        assert table.splitlines() == verdict_lines(study["claims"]), (
            f"{page.name}'s verdict table differs from docs/results/study.json: paste\n"
            "python -c 'import json; from agentgym_budget.study.claims import verdict_lines; "
            'print(*verdict_lines(json.load(open("docs/results/study.json"))["claims"]), sep="\\n")\''
        )
    assert study["config"]["train"]["model"] == "smollm2-135m" and study["config"]["eval_tasks"] >= 32
