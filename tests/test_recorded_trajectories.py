"""Observations, rewards and infos equal those recorded before infos became lazy (``tests/trajectories.py``)."""

from __future__ import annotations

import json

import pytest

from tests.trajectories import CASES, DATA, play_case

RECORDED = json.loads(DATA.read_text())


def _cases(prefix: str) -> list[object]:
    """Cases of a family; those playing bigger games are marked slow (a second or more each)."""
    return [
        pytest.param(name, marks=pytest.mark.slow) if not name.startswith("coin") else name
        for name in CASES
        if name.startswith(prefix)
    ]


@pytest.mark.parametrize("name", _cases("coin") + _cases("cooking"))
def test_textworld_trajectories_match_the_recording(name: str) -> None:
    _compare(name)


@pytest.mark.parametrize("name", _cases("alfworld"))
def test_alfworld_trajectories_match_the_recording(name: str) -> None:
    pytest.importorskip("alfworld")
    _compare(name)


def _compare(name: str) -> None:
    played = play_case(name)
    recorded = RECORDED[name]
    assert len(played) == len(recorded)
    for episode, (got, expected) in enumerate(zip(played, recorded, strict=True)):
        assert len(got) == len(expected), f"{name} episode {episode}: length differs"
        for step, (record, reference) in enumerate(zip(got, expected, strict=True)):
            differing = sorted(key for key in record.keys() | reference.keys() if record.get(key) != reference.get(key))
            assert not differing, f"{name} episode {episode} step {step}: {differing} differ"
