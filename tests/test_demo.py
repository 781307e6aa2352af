"""The scripted tour (``python -m agentgym_budget.demo``) reads as English."""

from __future__ import annotations

import pytest

from agentgym_budget.demo import run


@pytest.mark.slow
def test_the_demo_counts_turns_in_english() -> None:
    lines = run(difficulty=3, seed=7, forks=6)  # fork 3's mistake ('eat orange bell pepper') loses at once
    assert not [line for line in lines if "1 turns" in line], lines
    assert "  fork 3: mistake 'eat orange bell pepper', the mistake ended the episode: lost after 1 turn" in lines
