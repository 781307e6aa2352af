"""The README and the documentation show what the code does: quoted outputs and errors are checked against the real thing."""

from __future__ import annotations

import re
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
    row = next(line for line in README.splitlines() if line.startswith("| `step(action)` |"))
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
    assert "raises `EpisodeOverError`" in row and issubclass(EpisodeOverError, gym.error.ResetNeeded)


@pytest.mark.slow
def test_readme_shows_the_recovery_commands_printed_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _code_block_after("`recovery_vs_budget.png`. With no\narguments")
    assert main(["recovery", "--out", str(tmp_path / "run"), "--no-progress", "--no-plots"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    start = printed.index(expected[0])
    assert printed[start : start + len(expected)] == expected
